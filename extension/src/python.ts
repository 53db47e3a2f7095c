/**
 * Which Python runs the server: the `turnback.python` setting, else the Python
 * extension's active environment when that extension is installed, else
 * `python3` (then `python`) on PATH. In a checkout of the repository its
 * `.venv` comes before the Python extension, because that is where the
 * server's dependencies are installed for development.
 */

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';

import { PythonExtension } from '@vscode/python-extension';
import * as vscode from 'vscode';

import { type PythonVersion, parsePythonVersion } from './launch';

export interface Interpreter {
  command: string;
  version: PythonVersion;
  /** Where the choice came from, for the log. */
  source: string;
}

const PROBE = 'import sys; print("%d.%d" % sys.version_info[:2])';

/** Runs the interpreter once to learn its version; undefined when it does not run. */
export function probe(command: string): Promise<PythonVersion | undefined> {
  return new Promise((resolve) => {
    execFile(command, ['-c', PROBE], { timeout: 15_000, windowsHide: true }, (err, stdout) => {
      resolve(err ? undefined : parsePythonVersion(stdout));
    });
  });
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

function venvPython(root: string): string | undefined {
  const candidates =
    process.platform === 'win32'
      ? [path.join(root, '.venv', 'Scripts', 'python.exe')]
      : [path.join(root, '.venv', 'bin', 'python')];
  return candidates.find((p) => existsSync(p));
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
  const candidates: { command: string; source: string }[] = [];
  const setting = vscode.workspace.getConfiguration('turnback', resource).get<string>('python', '').trim();
  if (setting.length > 0) {
    const expanded = setting.replace(/^~(?=$|[\\/])/, process.env.HOME ?? '~');
    // An explicit choice is not second-guessed: if it does not run, say so.
    const version = await probe(expanded);
    if (version === undefined) {
      return {
        error:
          `The interpreter in "turnback.python" (${setting}) did not run. ` +
          'Set it to the path of a Python 3.10+ executable, or clear it to use python3 on PATH.',
      };
    }
    return { command: expanded, version, source: 'the turnback.python setting' };
  }
  const dev = existsSync(path.join(extensionRoot, 'server', 'turnback')) ? venvPython(extensionRoot) : undefined;
  if (dev !== undefined) {
    candidates.push({ command: dev, source: "the repository's .venv" });
  }
  const fromExt = await fromPythonExtension(resource);
  if (fromExt !== undefined) {
    candidates.push({ command: fromExt, source: "the Python extension's active environment" });
  }
  candidates.push({ command: 'python3', source: 'python3 on PATH' });
  candidates.push({ command: 'python', source: 'python on PATH' });

  const tried: string[] = [];
  for (const c of candidates) {
    const version = await probe(c.command);
    if (version !== undefined) {
      return { command: c.command, version, source: c.source };
    }
    tried.push(c.command);
    log(`Python candidate ${c.command} (${c.source}) did not run`);
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
