/**
 * Which Python runs the server: the `turnback.python` setting, else the Python
 * extension's active environment when that extension is installed, else the
 * platform's usual places (`pythonCandidates.ts`: `py -3` and python.org's folders on
 * Windows, Homebrew and pyenv on macOS, `python3` on PATH everywhere). In a checkout of
 * the repository its `.venv` comes before the Python extension, because that is where
 * the server's dependencies are installed for development.
 */

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import * as path from 'node:path';

import { PythonExtension } from '@vscode/python-extension';
import * as vscode from 'vscode';

import { type PythonVersion } from './launch';
import { type HostFacts, type Probed, launchCommand, parseProbe, systemCandidates, venvInterpreter } from './pythonCandidates';

export interface Interpreter {
  command: string;
  version: PythonVersion;
  /** Where the choice came from, for the log. */
  source: string;
}

const PROBE = 'import sys; print("%d.%d" % sys.version_info[:2]); print(sys.executable)';

/**
 * Runs the interpreter once to learn its version and path; undefined when it does not run.
 * Run in `cwd` (the extension's folder), never the workspace: a bare name is looked up
 * there first on Windows.
 */
export function probe(command: string, cwd: string, args: string[] = []): Promise<Probed | undefined> {
  return new Promise((resolve) => {
    execFile(command, [...args, '-c', PROBE], { cwd, timeout: 15_000, windowsHide: true }, (err, stdout) => {
      resolve(err ? undefined : parseProbe(stdout, command));
    });
  });
}

function hostFacts(): HostFacts {
  return { platform: process.platform, env: process.env, home: homedir(), exists: existsSync };
}

let pythonApi: Promise<PythonExtension | undefined> | undefined;

/** The Python extension's API, or undefined when it is not installed or fails to load. */
export function pythonExtension(): Promise<PythonExtension | undefined> {
  if (vscode.extensions.getExtension('ms-python.python') === undefined) {
    return Promise.resolve(undefined);
  }
  pythonApi ??= PythonExtension.api().then(
    (api) => api,
    () => undefined,
  );
  return pythonApi;
}

async function fromPythonExtension(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const api = await pythonExtension();
  if (api === undefined) {
    return undefined;
  }
  try {
    await api.ready;
    const active = api.environments.getActiveEnvironmentPath(resource);
    const resolved = await api.environments.resolveEnvironment(active);
    return resolved?.executable.uri?.fsPath;
  } catch {
    return undefined;
  }
}


/**
 * The interpreter to use, with its version, or a message that says what to set.
 * `trusted`: in an untrusted workspace only the user's own setting counts
 * (VS Code hides the workspace's value of a restricted setting).
 */
export async function findInterpreter(
  extensionRoot: string,
  resource: vscode.Uri | undefined,
  log: (line: string) => void,
): Promise<Interpreter | { error: string }> {
  const candidates: { command: string; args: string[]; source: string }[] = [];
  const setting = vscode.workspace.getConfiguration('turnback', resource).get<string>('python', '').trim();
  if (setting.length > 0) {
    const expanded = setting.replace(/^~(?=$|[\\/])/, homedir());
    // An explicit choice is not second-guessed: if it does not run, say so.
    const probed = await probe(expanded, extensionRoot);
    if (probed === undefined) {
      return {
        error:
          `The interpreter in "turnback.python" (${setting}) did not run. ` +
          'Set it to the path of a Python 3.10+ executable, or clear it to use python3 on PATH.',
      };
    }
    return { command: launchCommand(expanded, probed, process.platform), version: probed.version, source: 'the turnback.python setting' };
  }
  const facts = hostFacts();
  const dev = existsSync(path.join(extensionRoot, 'server', 'turnback')) ? venvInterpreter(extensionRoot, facts) : undefined;
  if (dev !== undefined) {
    candidates.push({ command: dev, args: [], source: "the repository's .venv" });
  }
  const fromExt = await fromPythonExtension(resource);
  if (fromExt !== undefined) {
    candidates.push({ command: fromExt, args: [], source: "the Python extension's active environment" });
  }
  candidates.push(...systemCandidates(facts));

  const tried: string[] = [];
  for (const c of candidates) {
    const probed = await probe(c.command, extensionRoot, c.args);
    if (probed !== undefined) {
      // `py -3` is a launcher: the server runs with the interpreter it chose
      const command = c.args.length > 0 ? probed.executable : launchCommand(c.command, probed, process.platform);
      return { command, version: probed.version, source: c.source };
    }
    const shown = [c.command, ...c.args].join(' ');
    tried.push(shown);
    log(`Python candidate ${shown} (${c.source}) did not run`);
  }
  return {
    error:
      `No Python interpreter found (tried ${tried.join(', ')}). Turnback's server needs Python 3.10+: ` +
      'install it, or set "turnback.python" to its path.',
  };
}

/** Fires when the Python extension's active environment changes (a reason to restart). */
export async function onPythonEnvironmentChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  const api = await pythonExtension();
  return api?.environments.onDidChangeActiveEnvironmentPath(() => {
    listener();
  });
}
