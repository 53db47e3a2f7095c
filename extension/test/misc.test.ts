import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { binaryNotice, changesTitle, diffTitle } from '../src/diffText';
import { TOAST_WIDTH, describeError, errorCode, errorText, toastParts } from '../src/errors';
import type { Checkpoint } from '../src/protocol';
import { statusText } from '../src/statusText';

describe('errors', () => {
  it("shows the server's message and adds what to do", () => {
    const damaged = { code: -32003, message: 'object 1a2b is truncated' };
    assert.equal(errorCode(damaged), -32003);
    assert.equal(
      describeError('Rewind', damaged),
      'Rewind failed: object 1a2b is truncated Run `turnback fsck` in the workspace to see what is damaged.',
    );
    assert.equal(
      describeError('Rewind', { code: -32004, message: 'path ../x is outside the workspace' }),
      'Rewind failed: path ../x is outside the workspace Nothing was changed.',
    );
    assert.equal(describeError('Import', new Error('no such file')), 'Import failed: no such file');
  });

  it("shows a server message's store text visibly, its lines kept, its length cut", () => {
    // a path or title quoted by the server reorders the sentence with a bidi override
    const msg = "cannot rewind 'invoice\u202efdp.exe':\nthe workspace was not changed";
    assert.equal(errorText({ code: -32004, message: msg }),
      "cannot rewind 'invoice\\u202efdp.exe':\nthe workspace was not changed");
    assert.equal(errorText('a\u0007b'), 'a\\u0007b');
    const huge = errorText({ message: 'x'.repeat(5_000_000) });
    assert.equal(huge.length, 2000);
    assert.ok(huge.endsWith('…'));
  });

  it("puts a long message's key part in the toast and the whole in its details", () => {
    assert.deepEqual(toastParts('Rewind failed: no such checkpoint'), { summary: 'Rewind failed: no such checkpoint' });
    const long =
      "Rewind failed: 'doomed.txt' is missing, the workspace was not changed. " +
      `Run 'turnback fsck' in the workspace to list what is damaged, then ${'pull it again or rewind elsewhere '.repeat(4)}`;
    const told = toastParts(long);
    assert.equal(told.summary, "Rewind failed: 'doomed.txt' is missing, the workspace was not changed.");
    assert.equal(told.detail, long);
    // the store's own message (rewind_ops.py): its first sentence of 131 characters was
    // shown whole and the toast cut it (ux33's e2e screenshot); the key part first, short
    const server =
      "Rewind failed: the stored content of 'doomed.txt' (object 1a2b3c4d5e6f) is missing; " +
      "the workspace was not changed. Run 'turnback fsck'";
    const short = toastParts(server);
    assert.equal(short.summary, "Rewind failed: the stored content of 'doomed.txt' is missing. Nothing was changed.");
    assert.equal(short.detail, server);
    // a name with ". " or "; " in its quotes is no end of the clause
    const quoted = toastParts(`Restore failed: cannot read 'notes. old; v2.txt' (tree 0123456789ab). ${'More. '.repeat(20)}`);
    assert.equal(quoted.summary, "Restore failed: cannot read 'notes. old; v2.txt'.");
    // no sentence short enough: cut at a word, marked, the whole in the details
    const words = toastParts(`Import failed: ${'word '.repeat(100)}`);
    assert.ok(words.summary.length <= TOAST_WIDTH && words.summary.endsWith('word…'), words.summary);
    const one = toastParts('x'.repeat(1000));
    assert.equal(one.summary.length, TOAST_WIDTH);
    assert.equal(one.detail, 'x'.repeat(1000));
  });

  it('adds no hint the server already gave', () => {
    const msg = "cannot rewind: the stored content of 'doomed.txt' is missing; the workspace was not changed. Run 'turnback fsck'";
    assert.equal(
      describeError('Rewind', { code: -32003, message: msg }),
      "Rewind failed: the stored content of 'doomed.txt' is missing; the workspace was not changed. Run 'turnback fsck'",
    );
    assert.equal(
      describeError('Rewind', { code: -32004, message: 'a symlink escapes the workspace' }),
      'Rewind failed: a symlink escapes the workspace Nothing was changed.',
    );
    assert.equal(
      describeError('Rewind', { code: -32004, message: 'refused; the workspace was not changed' }),
      'Rewind failed: refused; the workspace was not changed',
    );
  });

  it("does not say the action's verb twice", () => {
    // "Rewind failed: cannot rewind: …" (ux31's e2e screenshot)
    assert.equal(
      describeError('Rewind', { code: -32003, message: "cannot rewind: object 1a2b is missing. Run 'turnback fsck'" }),
      "Rewind failed: object 1a2b is missing. Run 'turnback fsck'",
    );
    assert.equal(
      describeError('Undo Rewind', { code: -32001, message: 'cannot undo: the safety checkpoint is gone' }),
      'Undo Rewind failed: the safety checkpoint is gone',
    );
    // a sentence of its own, not a prefix: shown as the server says it, capitalised
    assert.equal(
      describeError('Restore', { code: -32004, message: "cannot restore 'a.txt': a folder stands there; nothing was changed" }),
      "Cannot restore 'a.txt': a folder stands there; nothing was changed",
    );
    // another verb is no repetition
    assert.equal(
      describeError('Rewind', { code: -32004, message: "cannot restore 'a.txt': nothing was changed" }),
      "Rewind failed: cannot restore 'a.txt': nothing was changed",
    );
    assert.equal(describeError('Rewind', new Error('cannot rewinding')), 'Rewind failed: cannot rewinding');
  });

  it('copes with things that are not errors', () => {
    assert.equal(errorText('plain'), 'plain');
    assert.match(errorText(undefined), /output channel/);
    assert.equal(errorCode({ code: 'x' }), undefined);
  });
});

describe('diff titles', () => {
  it('name the file and both states', () => {
    assert.equal(diffTitle('src/app.py', 'after tests', 'Now'), 'app.py (after tests ↔ Now)');
    assert.equal(changesTitle('one', 'two'), 'Turnback: one ↔ two');
    assert.match(binaryNotice('img/logo.png', 2048), /^img\/logo\.png is a binary file \(2\.0 KB\)/);
  });

  it("keep a binary file's notice in lines that fit half an editor", () => {
    const lines = binaryNotice('assets/logo.png', 169).trimEnd().split('\n');
    assert.equal(lines[0], 'assets/logo.png is a binary file (169 B);');
    assert.ok(lines.every((l) => l.length <= 44), lines.join(' | '));
    assert.match(lines.join(' '), /Restore This File or Rewind to Here puts it back byte for byte\.$/);
  });

  it('show a name’s bidi override and zero-width characters as escapes', () => {
    // a tab's title: "invoice\u202efdp.exe" reordered all of it, a prompt's too (redteam25)
    assert.equal(diffTitle('d/invoice\u202efdp.exe', 'after “a\u200bb”', 'Now'), 'invoice\\u202efdp.exe (after “a\\u200bb” ↔ Now)');
    assert.equal(changesTitle('x\u2066', 'Now'), 'Turnback: x\\u2066 ↔ Now');
  });
});

describe('status bar text', () => {
  const now = Date.parse('2026-11-21T12:00:00Z');
  const cp = (id: string, ts: string, label: string): Checkpoint => ({
    id,
    label,
    ts,
    sessionId: null,
    eventId: null,
    auto: false,
    partial: false,
  });

  it('shows the newest checkpoint’s age and the count', () => {
    const s = statusText(
      [cp('a', '2026-11-21T11:00:00Z', 'old'), cp('b', '2026-11-21T11:55:00Z', 'new'), cp('c', '2026-11-20T11:00:00Z', '')],
      'demo',
      now,
    );
    assert.equal(s.text, '$(history) 3 checkpoints · 5m ago');
    assert.equal(statusText([cp('a', '2026-11-21T11:59:50Z', 'x')], 'demo', now).text, '$(history) 1 checkpoint · just now');
    assert.equal(
      s.tooltip,
      'Turnback: last checkpoint “new” 5 min ago; 3 checkpoints in demo. Click to show the Turnback view.',
    );
  });

  it('says when there is none', () => {
    assert.equal(statusText([], 'demo', now).text, '$(history) no checkpoints');
  });

  it('shows what the server says is followed', () => {
    const agents = [{ agent: 'claude-code', label: 'Claude Code', files: 2 }];
    const on = statusText([], 'demo', now, { state: 'following', agents, summary: 'following Claude Code' });
    assert.equal(on.text, '$(history) no checkpoints $(eye)');
    assert.ok(on.tooltip.endsWith('\nTurnback is following Claude Code.'), on.tooltip);
    const off = statusText([], 'demo', now, {
      state: 'off',
      agents: [],
      summary: 'not following agents (the workspace is not trusted)',
    });
    assert.equal(off.text, '$(history) no checkpoints');
    assert.ok(off.tooltip.includes('not following agents (the workspace is not trusted)'));
  });

  it('warns first while the watch limit keeps folders unwatched', () => {
    const message =
      'Turnback watches 64,000 of 65,536 allowed folders; checkpoints now scan the rest (3,000 folders). ' +
      'Raise fs.inotify.max_user_watches to 131,072 (sudo sysctl -w fs.inotify.max_user_watches=131072).';
    const s = statusText([], 'demo', now, undefined, {
      kind: 'watches', watched: 64000, missing: 3000, allowed: 65536, raiseTo: 131072, message,
    });
    assert.equal(s.text, '$(warning) $(history) no checkpoints');
    assert.ok(s.tooltip.startsWith(message));
    assert.equal(statusText([], 'demo', now, undefined, null).text, '$(history) no checkpoints');
  });

  it('warns first while the store has set something aside, with each sentence the server sent', () => {
    const log =
      "the object log /w/.turnback/objects/log/x holds frames no Turnback writes (planted, or damaged): " +
      "the store reads nothing of it from there on. Run 'turnback fsck' to see what is wrong";
    const index = "/w/.turnback/index/checkpoints.jsonl was damaged (lines unreadable or lost). Run 'turnback fsck'";
    const s = statusText([], 'demo', now, undefined, null, [
      { kind: 'log', key: 'log:x:1', message: log },
      { kind: 'index', key: 'index:2:1', message: index },
    ]);
    assert.equal(s.text, '$(warning) $(history) no checkpoints');
    assert.ok(s.tooltip.startsWith(`${log}\n\n${index}\n\n`));
    assert.ok(s.tooltip.endsWith('demo has no checkpoints yet. Click to show the Turnback view.'));
    const both = statusText([], 'demo', now, undefined, {
      kind: 'watches', watched: 1, missing: 2, allowed: 3, raiseTo: 4, message: 'limit',
    }, [{ kind: 'index', key: 'k', message: index }]);
    assert.equal(both.text, '$(warning) $(history) no checkpoints', 'one warning icon for both');
    assert.ok(both.tooltip.startsWith(`limit\n\n${index}\n\n`));
    assert.equal(statusText([], 'demo', now, undefined, null, []).text, '$(history) no checkpoints');
  });
});
