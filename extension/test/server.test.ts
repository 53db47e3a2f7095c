/**
 * The extension's side of the protocol against the real server: the server is
 * started as the extension starts it (launch.ts: the development layout, its
 * environment), over stdio with vscode-jsonrpc, on a workspace the CLI
 * prepares; responses are fed to the same pure code the tree, the diff
 * documents and the rewind confirmation use. VS Code itself is not needed.
 *
 * Needs the repository's .venv (scripts/setup.sh); TURNBACK_TEST_PYTHON
 * names another interpreter with the server's dependencies.
 */

import * as assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';

import {
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} from 'vscode-jsonrpc/node';

import { binaryNotice } from '../src/diffText';
import { describeError, errorCode } from '../src/errors';
import { planLaunch, serverArgs, serverEnvironment, parsePythonVersion } from '../src/launch';
import { type DidChangeParams, ErrorCodes, Notifications } from '../src/protocol';
import { rewindConfirmation, rewindSummary } from '../src/rewindText';
import { sendTyped } from '../src/rpc';
import { serverSettings } from '../src/settings';
import {
  type ChangeNode,
  type CheckpointBearing,
  type EventNode,
  bearsCheckpoint,
  changeNodes,
  eventNodes,
  sessionNodes,
} from '../src/tree/model';
import { repoRoot } from './repo';

const root = repoRoot();
const python = process.env.TURNBACK_TEST_PYTHON ?? path.join(root, '.venv', 'bin', 'python');
const haveServer = existsSync(python) && existsSync(path.join(root, 'server', 'turnback', 'server'));

const PNG_V1 = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 1, 2, 3]);
const PNG_V2 = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 9, 9, 9, 9]);

let workspace: string;
let folder: string;
let sessionId: string;
let child: ChildProcess | undefined;
let conn: MessageConnection | undefined;
const notices: DidChangeParams[] = [];
let stderr = '';

/** `turnback --json ARGS` in the workspace, parsed. */
function cli(...args: string[]): unknown {
  const out = execFileSync(python, ['-m', 'turnback.cli.main', '--json', ...args], {
    cwd: workspace,
    env: { ...process.env, PYTHONPATH: path.join(root, 'server') },
    encoding: 'utf8',
  });
  return out.trim().length > 0 ? (JSON.parse(out) as unknown) : undefined;
}

function field(obj: unknown, name: string): string {
  const v = (obj as Record<string, unknown>)[name];
  assert.equal(typeof v, 'string', `${name} in ${JSON.stringify(obj)}`);
  return v as string;
}

function connection(): MessageConnection {
  assert.ok(conn, 'the server is running');
  return conn;
}

/** Waits until `pred` holds, polling; fails after `ms`. */
async function until(pred: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) {
      assert.fail(`timed out waiting for ${what}; server log:\n${stderr.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('against the real server', { skip: haveServer ? false : `no ${python} (run scripts/setup.sh)` }, () => {
  before(async () => {
    workspace = mkdtempSync(path.join(tmpdir(), 'turnback-ext-'));
    folder = pathToFileURL(workspace).toString();
    mkdirSync(path.join(workspace, 'src'));
    writeFileSync(path.join(workspace, 'src', 'app.py'), 'print("v1")\n');
    writeFileSync(path.join(workspace, 'logo.png'), PNG_V1);
    writeFileSync(path.join(workspace, 'old.txt'), 'to be deleted\n');
    cli('init');
    sessionId = field(cli('session', 'start', '--title', 'Fix the app', '--agent', 'claude-code'), 'id');
    cli('record', 'prompt', '--session', sessionId, '--text', 'make it print v2');
    cli('checkpoint', '-m', 'Before', '--session', sessionId);
    cli('record', 'tool_call', '--session', sessionId, '--data', '{"name":"Edit","input":{"file_path":"src/app.py"}}');
    writeFileSync(path.join(workspace, 'src', 'app.py'), 'print("v2")\n');
    writeFileSync(path.join(workspace, 'logo.png'), PNG_V2);
    writeFileSync(path.join(workspace, 'new.txt'), 'created\n');
    rmSync(path.join(workspace, 'old.txt'));
    cli('checkpoint', '-m', 'After', '--session', sessionId);

    // Started exactly as the extension starts it in a checkout.
    const version = parsePythonVersion(
      execFileSync(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' }),
    );
    assert.ok(version);
    const plan = planLaunch(
      { extensionRoot: root, exists: existsSync, join: (...p) => path.join(...p), manifest: undefined, platform: 'test' },
      python,
      version,
    );
    assert.ok(plan.ok, JSON.stringify(plan));
    assert.equal(plan.mode, 'development');
    child = spawn(python, serverArgs(), {
      cwd: workspace,
      env: serverEnvironment(process.env, plan.pythonPath, path.delimiter),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    assert.ok(child.stdout && child.stdin);
    conn = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    conn.onNotification(Notifications.didChange, (p: DidChangeParams) => {
      notices.push(p);
    });
    conn.listen();
    await conn.sendRequest('initialize', {
      processId: process.pid,
      rootUri: folder,
      capabilities: {},
      workspaceFolders: [{ uri: folder, name: 'ws' }],
      initializationOptions: serverSettings({ get: () => undefined }, true),
    });
    await conn.sendNotification('initialized', {});
  });

  after(async () => {
    if (conn !== undefined) {
      await Promise.race([conn.sendRequest('shutdown'), new Promise((r) => setTimeout(r, 3000))]).catch(
        () => undefined,
      );
      await conn.sendNotification('exit').catch(() => undefined);
      conn.dispose();
    }
    child?.kill();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('refuses positional params, which is why an undefined token must not be passed', async () => {
    const raw = connection().sendRequest('turnback/status', { folder }, undefined);
    await assert.rejects(raw, (err: unknown) => errorCode(err) === ErrorCodes.invalidParams);
    const status = await sendTyped(connection(), 'turnback/status', { folder }, undefined);
    assert.equal(status.sessions, 1);
    assert.equal(status.checkpoints, 2);
  });

  it('lists sessions the tree can show', async () => {
    const r = await sendTyped(connection(), 'turnback/sessions', { folder, offset: 0, limit: 50 });
    const nodes = sessionNodes(folder, r, Date.now());
    const node = nodes.find((n) => n.type === 'session' && n.sessionId === sessionId);
    assert.ok(node?.type === 'session');
    assert.equal(node.label, 'Fix the app');
    assert.match(node.description ?? '', /^claude-code · just now/);
    assert.match(node.tooltip ?? '', /1 prompt · 0 responses/);
    assert.ok(typeof node.events === 'number' && node.events >= 3);
  });

  let latest: CheckpointBearing;

  it('gives events and checkpoints that become checkpoint rows with their changed files', async () => {
    const session = await sendTyped(connection(), 'turnback/session', { folder, sessionId, offset: 0, limit: 200 });
    const { checkpoints } = await sendTyped(connection(), 'turnback/checkpoints', { folder });
    const nodes = eventNodes({
      folder,
      sessionId,
      result: { ...session, offset: 0 },
      checkpoints,
      now: Date.now(),
    });
    const labels = nodes.map((n) => n.label);
    assert.ok(labels.includes('Prompt: make it print v2'), labels.join(' | '));
    assert.ok(labels.includes('Tool: Edit(src/app.py)'), labels.join(' | '));
    assert.ok(labels.includes('Before'), labels.join(' | '));
    const found = nodes.find((n): n is EventNode => n.type === 'event' && n.label === 'After');
    assert.ok(found !== undefined && bearsCheckpoint(found));
    assert.equal(found.checkpoint.previous?.title, 'Before');
    assert.match(found.contextValue, /\bcheckpoint\b/);
    assert.ok(nodes.some((n) => n.type === 'event' && n.head), 'the head is marked');
    latest = found;

    const prev = found.checkpoint.previous;
    assert.ok(prev);
    const { changes } = await sendTyped(connection(), 'turnback/changes', { folder, from: prev.id, to: found.checkpoint.id });
    const files = changeNodes(found, changes) as ChangeNode[];
    assert.deepEqual(
      files.map((f) => [f.path, f.contextValue]),
      [
        ['logo.png', 'change modified binary'],
        ['new.txt', 'change added'],
        ['old.txt', 'change deleted'],
        ['src/app.py', 'change modified'],
      ],
    );
  });

  it('serves both sides of a diff, and says a binary file is binary', async () => {
    const cpId = latest.checkpoint.id;
    const text = await sendTyped(connection(), 'turnback/fileContent', { folder, checkpoint: cpId, path: 'src/app.py' });
    assert.equal(text.text, 'print("v2")\n');
    const gone = await sendTyped(connection(), 'turnback/fileContent', { folder, checkpoint: cpId, path: 'old.txt' });
    assert.equal(gone.exists, false);
    const png = await sendTyped(connection(), 'turnback/fileContent', { folder, checkpoint: cpId, path: 'logo.png' });
    assert.equal(png.binary, true);
    assert.equal(png.size, PNG_V2.length);
    assert.equal(binaryNotice('logo.png', png.size).split(';')[0], 'logo.png is a binary file (15 B)');
  });

  it('rewinds after a dry run that lists every file, and undoes', async () => {
    const earlier = latest.checkpoint.previous;
    assert.ok(earlier);
    const dry = await sendTyped(connection(), 'turnback/rewind', {
      folder,
      checkpoint: earlier.id,
      mode: 'files',
      dryRun: true,
    });
    const ask = rewindConfirmation(dry, `“${earlier.title}”`, 'files');
    assert.equal(ask.message, 'Rewind to “Before” (files)?');
    assert.match(ask.detail, /Overwrite 2 files:\n {2}logo\.png\n {2}src\/app\.py\nCreate 1 file:\n {2}old\.txt\nDelete 1 file:\n {2}new\.txt/);
    assert.equal(readFileSync(path.join(workspace, 'src', 'app.py'), 'utf8'), 'print("v2")\n', 'a dry run writes nothing');

    const done = await sendTyped(connection(), 'turnback/rewind', { folder, checkpoint: earlier.id, mode: 'files' });
    assert.equal(rewindSummary(done, '“Before”', 'rewind'), 'Rewound to “Before”: 2 files overwritten, 1 created, 1 deleted.');
    assert.equal(readFileSync(path.join(workspace, 'src', 'app.py'), 'utf8'), 'print("v1")\n');
    assert.ok(readFileSync(path.join(workspace, 'logo.png')).equals(PNG_V1));
    assert.ok(!existsSync(path.join(workspace, 'new.txt')));

    const undone = await sendTyped(connection(), 'turnback/undo', { folder });
    assert.match(rewindSummary(undone, '', 'undo'), /^Undid the last rewind: 2 files overwritten, 1 created, 1 deleted\.$/);
    assert.equal(readFileSync(path.join(workspace, 'src', 'app.py'), 'utf8'), 'print("v2")\n');
    assert.ok(readFileSync(path.join(workspace, 'logo.png')).equals(PNG_V2));
  });

  it('answers errors with the codes and messages the extension shows', async () => {
    await assert.rejects(
      sendTyped(connection(), 'turnback/rewind', { folder, checkpoint: 'ffffffffffff', mode: 'files' }),
      (err: unknown) => {
        assert.equal(errorCode(err), ErrorCodes.notFound);
        assert.match(describeError('Rewind', err), /^Rewind failed: .*ffffffffffff/);
        return true;
      },
    );
  });

  it('tells the extension when another process appends to a session', async () => {
    const seen = notices.length;
    cli('record', 'note', '--session', sessionId, '--text', 'from outside');
    await until(
      () => notices.slice(seen).some((n) => n.sessions.includes(sessionId)),
      15_000,
      'turnback/didChange naming the session',
    );
    const notice = notices.slice(seen).find((n) => n.sessions.includes(sessionId));
    assert.ok(notice);
    assert.equal(typeof notice.checkpoints, 'boolean');
    assert.equal(new URL(notice.folder).pathname.replace(/\/$/, ''), new URL(folder).pathname.replace(/\/$/, ''));
  });
});
