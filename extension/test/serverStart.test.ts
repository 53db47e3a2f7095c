/**
 * The server is started in the workspace folder (its working folder: startwalk.py), and
 * a workspace is a stranger's repository: nothing in it may be imported in place of the
 * server or the standard library. Starts the server exactly as client.ts does
 * (launch.ts's arguments and environment) in a folder holding a planted `turnback/`
 * package, `json.py` and `runpy.py`, each of which would leave a mark.
 *
 * Needs the repository's .venv (scripts/setup.sh); TURNBACK_TEST_PYTHON names another
 * interpreter with the server's dependencies.
 */

import * as assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';

import { StreamMessageReader, StreamMessageWriter, createMessageConnection } from 'vscode-jsonrpc/node';

import { planLaunch, serverArgs, serverEnvironment } from '../src/launch';
import { launchCommand, parseProbe } from '../src/pythonCandidates';
import { serverSettings } from '../src/settings';
import { repoRoot } from './repo';

const root = repoRoot();
const python = process.env.TURNBACK_TEST_PYTHON ?? path.join(root, '.venv', 'bin', 'python');
const haveServer = existsSync(python) && existsSync(path.join(root, 'server', 'turnback', 'server'));

/** Python that writes a file named `name` in the working folder: the proof that it ran. */
function mark(name: string): string {
  return `import os\nopen(os.path.join(os.getcwd(), ${JSON.stringify(name)}), 'w').close()\n`;
}

describe('starting the server in a hostile workspace', { skip: haveServer ? false : `no ${python} (run scripts/setup.sh)` }, () => {
  const workspace = mkdtempSync(path.join(tmpdir(), 'turnback-plant-'));
  let child: ChildProcess | undefined;

  after(() => {
    child?.kill();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('imports nothing from the workspace folder (planted turnback/, json.py, runpy.py)', async () => {
    mkdirSync(path.join(workspace, 'turnback', 'server'), { recursive: true });
    writeFileSync(path.join(workspace, 'turnback', '__init__.py'), `${mark('PLANTED-turnback')}raise SystemExit(0)\n`);
    writeFileSync(path.join(workspace, 'turnback', 'server', '__init__.py'), '');
    writeFileSync(path.join(workspace, 'json.py'), mark('PLANTED-json'));
    writeFileSync(path.join(workspace, 'runpy.py'), mark('PLANTED-runpy'));

    const plan = planLaunch(
      { extensionRoot: root, exists: existsSync, join: (...p) => path.join(...p), manifest: undefined, platform: 'test' },
      python,
      { major: 3, minor: 11 }, // the development layout: the version picks no folder here
    );
    assert.ok(plan.ok, JSON.stringify(plan));
    const proc = spawn(python, serverArgs(), {
      cwd: workspace,
      env: serverEnvironment(process.env, plan.pythonPath, path.delimiter),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child = proc;
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<string>((resolve) => {
      proc.on('exit', (code) => {
        resolve(`the server exited (${String(code)}) before answering; stderr: ${stderr}`);
      });
    });
    const conn = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
    conn.listen();
    const folder = pathToFileURL(workspace).href;
    const answer = await Promise.race([
      conn.sendRequest('initialize', {
        processId: process.pid,
        rootUri: folder,
        capabilities: {},
        workspaceFolders: [{ uri: folder, name: 'ws' }],
        initializationOptions: serverSettings({ get: () => undefined }, false),
      }),
      exited,
    ]);
    assert.equal(typeof answer, 'object', String(answer));
    await conn.sendRequest('shutdown');
    await conn.sendNotification('exit');
    const end = await exited;
    conn.dispose();
    assert.match(end, /exited \(0\)/);
    const marks = readdirSync(workspace).filter((f) => f.startsWith('PLANTED-'));
    assert.deepEqual(marks, [], `planted modules ran: ${marks.join(', ')}`);
  });
});

describe('the interpreter started is the one probed', { skip: haveServer && process.platform !== 'win32' ? false : `no ${python} (run scripts/setup.sh), or Windows` }, () => {
  // PATH with an empty entry before the interpreter's folder (on Windows the working folder is always
  // searched first): a bare name is looked up in the folder the server starts in
  const workspace = mkdtempSync(path.join(tmpdir(), 'turnback-plant-'));
  after(() => {
    rmSync(workspace, { recursive: true, force: true });
  });

  it('does not run a python planted in the workspace when PATH has an empty entry', () => {
    const name = path.basename(python);
    writeFileSync(path.join(workspace, name), '#!/bin/sh\n: > PLANTED-python\n', { mode: 0o755 });
    const env = { ...process.env, PATH: `:${path.dirname(python)}` }; // `export PATH=$EXTRA:$PATH`, EXTRA empty
    // the probe as python.ts runs it: in the extension's folder, not the workspace
    const out = execFileSync(name, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2]); print(sys.executable)'], { cwd: root, env, encoding: 'utf8' });
    const probed = parseProbe(out, name);
    assert.ok(probed !== undefined, out);
    const command = launchCommand(name, probed, process.platform);
    spawnSync(command, ['-c', 'pass'], { cwd: workspace, env });
    assert.deepEqual(readdirSync(workspace).filter((f) => f.startsWith('PLANTED-')), [], `${command} was the planted one`);
  });
});
