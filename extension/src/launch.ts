/**
 * How to start the server: which folders go on PYTHONPATH for a given
 * interpreter version. Pure (file checks are passed in) so every layout is tested.
 *
 * Two layouts:
 * - an installed .vsix: `bundled/tool/turnback` (the package) and, per CPython
 *   version, `bundled/libs/cp3XX/` with its pip dependencies (some are compiled
 *   extensions, built for one Python version each) plus `bundled/libs/common/`
 *   with the pure-Python ones every version shares; `bundled/manifest.json`
 *   says which versions and platform the build carries;
 * - a checkout of the repository (development): `server/turnback` is used live,
 *   with the bundled dependencies when they were built, else the interpreter's
 *   own (the repository's `.venv`).
 */

export const MIN_PYTHON: readonly [number, number] = [3, 10];

export interface PythonVersion {
  major: number;
  minor: number;
}

/** What `bundled/manifest.json` holds. */
export interface BundleManifest {
  /** "3.10", "3.11", … */
  pythonVersions: string[];
  /** "linux-x64", … (VS Code's target names) */
  platform: string;
}

export interface LaunchEnv {
  extensionRoot: string;
  /** Whether a file or folder exists. */
  exists: (path: string) => boolean;
  join: (...parts: string[]) => string;
  manifest: BundleManifest | undefined;
  /** The machine this runs on, in VS Code's target names ("linux-x64"). */
  platform: string;
}

export type LaunchPlan =
  | { ok: true; mode: 'bundled' | 'development'; pythonPath: string[] }
  | { ok: false; reason: string };

/** Parses "3.11" (what the version probe prints) into numbers. */
export function parsePythonVersion(text: string): PythonVersion | undefined {
  const m = /^\s*(\d+)\.(\d+)\s*$/.exec(text);
  if (!m) {
    return undefined;
  }
  return { major: Number(m[1]), minor: Number(m[2]) };
}

export function versionText(v: PythonVersion): string {
  return `${String(v.major)}.${String(v.minor)}`;
}

export function isSupported(v: PythonVersion): boolean {
  return v.major > MIN_PYTHON[0] || (v.major === MIN_PYTHON[0] && v.minor >= MIN_PYTHON[1]);
}

/** "cp311": the folder of a version's dependencies (CPython's ABI tag). */
export function abiTag(v: PythonVersion): string {
  return `cp${String(v.major)}${String(v.minor)}`;
}

/** The PYTHONPATH entries that run `python -m turnback.server` with this interpreter. */
export function planLaunch(env: LaunchEnv, python: string, version: PythonVersion): LaunchPlan {
  const { extensionRoot: root, exists, join } = env;
  if (!isSupported(version)) {
    return {
      ok: false,
      reason:
        `${python} is Python ${versionText(version)}; Turnback needs Python ` +
        `${String(MIN_PYTHON[0])}.${String(MIN_PYTHON[1])} or newer. ` +
        'Set "turnback.python" to a newer interpreter.',
    };
  }
  const libs = join(root, 'bundled', 'libs', abiTag(version));
  const common = join(root, 'bundled', 'libs', 'common');
  const deps = exists(libs) ? (exists(common) ? [libs, common] : [libs]) : [];

  const source = join(root, 'server');
  if (exists(join(source, 'turnback', 'server'))) {
    return { ok: true, mode: 'development', pythonPath: [source, ...deps] };
  }

  const tool = join(root, 'bundled', 'tool');
  if (!exists(join(tool, 'turnback'))) {
    return {
      ok: false,
      reason:
        `This copy of the extension has no Turnback server (${tool} is missing). ` +
        'Reinstall the extension, or build it with "npm run package".',
    };
  }
  if (env.manifest !== undefined && env.manifest.platform !== env.platform) {
    return {
      ok: false,
      reason:
        `This build of Turnback carries its server's dependencies for ${env.manifest.platform}, ` +
        `not ${env.platform}. Install the build made for this platform.`,
    };
  }
  if (deps.length === 0) {
    const carried = env.manifest?.pythonVersions.join(', ') ?? 'none';
    return {
      ok: false,
      reason:
        `This build of Turnback carries its server's dependencies for Python ${carried}, ` +
        `not for Python ${versionText(version)} (${python}). ` +
        'Set "turnback.python" to one of those versions.',
    };
  }
  return { ok: true, mode: 'bundled', pythonPath: [tool, ...deps] };
}

/** VS Code's target name for a Node platform and architecture ("linux-x64", "darwin-arm64", …). */
export function targetName(platform: string, arch: string): string {
  return `${platform}-${arch}`;
}

/**
 * The interpreter's arguments that start the server. Not `-m turnback.server`: `-m` (and
 * `-c`) put the working folder — the workspace, which the server needs as its working
 * folder (`startwalk.py`) — first on `sys.path`, so a cloned repository holding a
 * `turnback/` package, or a `json.py`, ran its own code when the extension started the
 * server, before any trust was asked (redteam24). `-P`/`PYTHONSAFEPATH` would do it but
 * need 3.11; this drops the entry before anything is imported, on 3.10 too.
 */
export const SERVER_BOOT =
  "import sys\n" +
  "if sys.path and sys.path[0] == '':\n" +
  '    del sys.path[0]\n' +
  'import runpy\n' +
  "runpy.run_module('turnback.server', run_name='__main__', alter_sys=True)\n";

export function serverArgs(): string[] {
  return ['-c', SERVER_BOOT];
}

/** The environment of the server process: ours first, nothing inherited that could shadow it. */
export function serverEnvironment(
  base: Readonly<Record<string, string | undefined>>,
  pythonPath: readonly string[],
  delimiter: string,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v !== undefined) {
      env[k] = v;
    }
  }
  // A user's PYTHONPATH or PYTHONHOME could put another pygls (or turnback)
  // ahead of the bundled one; the server must run what the extension carries.
  delete env.PYTHONHOME;
  env.PYTHONPATH = pythonPath.join(delimiter);
  env.PYTHONUNBUFFERED = '1';
  env.PYTHONIOENCODING = 'utf-8';
  env.PYTHONNOUSERSITE = '1';
  return env;
}
