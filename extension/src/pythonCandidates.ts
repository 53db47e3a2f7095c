/**
 * Where a Python interpreter may be on each platform, in the order the extension tries
 * them after the `turnback.python` setting and the Python extension's choice — as the
 * Python extension itself looks. Pure (no VS Code, no file system of its own) so the
 * unit tests fake the platform, the environment and which files exist.
 *
 * - Windows: the `py` launcher (`py -3`, which knows every python.org install), then
 *   `python.exe` and `python3.exe` on PATH (the Microsoft Store's aliases fail the probe
 *   and are skipped when Python is not installed), then python.org's per-user and
 *   all-users folders, newest first.
 * - macOS: `python3` on PATH, then Homebrew's (`/opt/homebrew` on Apple silicon,
 *   `/usr/local` on Intel), pyenv's shim, python.org's framework, the Xcode tools'
 *   `/usr/bin/python3` — VS Code started from the Dock does not get the shell's PATH,
 *   so the usual places are named outright.
 * - Linux and others: `python3`, `python`, pyenv's shim.
 */

import * as path from 'node:path';

import { type PythonVersion, parsePythonVersion } from './launch';

export interface Candidate {
  command: string;
  /** Arguments before `-c …` (the launcher's `-3`). */
  args: string[];
  source: string;
}

export interface HostFacts {
  platform: NodeJS.Platform;
  env: Record<string, string | undefined>;
  home: string;
  exists: (file: string) => boolean;
}

/** Newest first: the versions the bundle may carry. */
const VERSIONS = ['14', '13', '12', '11', '10'];

function joiner(platform: NodeJS.Platform): (...parts: string[]) => string {
  const p = platform === 'win32' ? path.win32 : path.posix;
  return (...parts) => p.join(...parts);
}

/** A virtual environment's interpreter in `root` (`.venv`, then `venv`), if there is one. */
export function venvInterpreter(root: string, facts: HostFacts): string | undefined {
  const join = joiner(facts.platform);
  const inside = facts.platform === 'win32' ? ['Scripts', 'python.exe'] : ['bin', 'python'];
  return ['.venv', 'venv'].map((d) => join(root, d, ...inside)).find((p) => facts.exists(p));
}

/** The platform's usual interpreters, in the order to try them. */
export function systemCandidates(facts: HostFacts): Candidate[] {
  const join = joiner(facts.platform);
  const found = (command: string, source: string): Candidate[] =>
    facts.exists(command) ? [{ command, args: [], source }] : [];
  const pyenvRoot = facts.env.PYENV_ROOT ?? join(facts.home, '.pyenv');
  if (facts.platform === 'win32') {
    const local = facts.env.LOCALAPPDATA ?? join(facts.home, 'AppData', 'Local');
    const programFiles = facts.env.ProgramFiles ?? 'C:\\Program Files';
    return [
      { command: 'py', args: ['-3'], source: 'the py launcher (py -3)' },
      { command: 'python.exe', args: [], source: 'python.exe on PATH' },
      { command: 'python3.exe', args: [], source: 'python3.exe on PATH' },
      ...VERSIONS.flatMap((v) => [
        ...found(join(local, 'Programs', 'Python', `Python3${v}`, 'python.exe'), `python.org's Python 3.${v} (per user)`),
        ...found(join(programFiles, `Python3${v}`, 'python.exe'), `python.org's Python 3.${v} (all users)`),
      ]),
      ...found(join(pyenvRoot, 'pyenv-win', 'shims', 'python.bat'), "pyenv-win's shim"),
    ];
  }
  if (facts.platform === 'darwin') {
    return [
      { command: 'python3', args: [], source: 'python3 on PATH' },
      ...found('/opt/homebrew/bin/python3', "Homebrew's python3 (Apple silicon)"),
      ...found('/usr/local/bin/python3', "Homebrew's python3 (Intel)"),
      ...found(join(pyenvRoot, 'shims', 'python3'), "pyenv's python3"),
      ...found('/Library/Frameworks/Python.framework/Versions/Current/bin/python3', "python.org's framework Python"),
      ...found('/usr/bin/python3', "the Xcode command line tools' python3"),
    ];
  }
  return [
    { command: 'python3', args: [], source: 'python3 on PATH' },
    { command: 'python', args: [], source: 'python on PATH' },
    ...found(join(pyenvRoot, 'shims', 'python3'), "pyenv's python3"),
  ];
}

export interface Probed {
  version: PythonVersion;
  /** The interpreter's own path: what `py -3` runs, or the command itself. */
  executable: string;
}

/**
 * The command that starts the server: a bare name (`python3`, `python.exe`) becomes the
 * path the probe printed. The server is started in the workspace folder, and a bare name
 * is looked up from there — on Windows in that folder first (libuv's `search_path`), on
 * every platform where PATH holds an empty entry or `.` — so a repository's own
 * `python3` ran instead of the one probed (redteam24). A path is kept as given (a venv's
 * or a wrapper's: what the user chose).
 */
export function launchCommand(command: string, probed: Probed, platform: NodeJS.Platform): string {
  const p = platform === 'win32' ? path.win32 : path.posix;
  const bare = !(platform === 'win32' ? /[\\/]/ : /\//).test(command);
  return bare && p.isAbsolute(probed.executable) ? probed.executable : command;
}

/** What the probe printed: the version line, then the executable's path. */
export function parseProbe(stdout: string, command: string): Probed | undefined {
  const [first = '', second = ''] = stdout.split(/\r?\n/);
  const version = parsePythonVersion(first);
  const executable = second.trim();
  return version === undefined ? undefined : { version, executable: executable.length > 0 ? executable : command };
}
