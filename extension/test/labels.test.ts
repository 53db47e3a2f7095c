import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  checkpointTitle,
  checkpointTooltip,
  eventLabel,
  eventSummary,
  kindIcon,
  kindTitle,
  sessionTooltip,
  statsLines,
} from '../src/tree/labels';
import { escapeMarkdown } from '../src/markdown';

describe('event labels', () => {
  it('names known kinds and keeps unknown ones as they are', () => {
    assert.equal(kindTitle('tool_call'), 'Tool');
    assert.equal(kindTitle('iteration_completed'), 'Iteration completed');
    assert.equal(kindTitle('my_custom_kind'), 'my_custom_kind');
  });

  it("prefers the server's summary, else a text field of the data", () => {
    assert.equal(eventSummary({ kind: 'prompt', summary: 'from server', data: { text: 'data' } }), 'from server');
    assert.equal(eventSummary({ kind: 'prompt', data: { text: '  multi\nline  text ' } }), 'multi line text');
    assert.equal(eventSummary({ kind: 'merge_failed', data: { reason: 'conflict in a.py' } }), 'conflict in a.py');
    assert.equal(eventSummary({ kind: 'usage', data: { input: 3 } }), '');
  });

  it('labels by kind and summary, and checkpoints by their label', () => {
    const base = { id: 'e', parent: null, ts: '' };
    assert.equal(eventLabel({ ...base, kind: 'prompt', data: { text: 'hi' } }), 'Prompt: hi');
    assert.equal(eventLabel({ ...base, kind: 'usage', data: {} }), 'Usage');
    assert.equal(
      eventLabel(
        { ...base, kind: 'checkpoint', data: {} },
        { id: 'abcdef0123', label: '', ts: '', sessionId: null, eventId: null, auto: true, partial: false },
      ),
      'checkpoint abcdef01',
    );
  });

  it('says a rewind once: "Rewind to “Tests pass” (files)", not "Rewind: rewind to …"', () => {
    const base = { id: 'e', parent: null, ts: '' };
    assert.equal(eventLabel({ ...base, kind: 'rewind', data: {}, summary: 'rewind to “Tests pass” (files)' }), 'Rewind to “Tests pass” (files)');
    // the server names what an undo undid; a redo is one too
    assert.equal(
      eventLabel({ ...base, kind: 'rewind', data: {}, summary: 'redo of rewind to “Tests pass” (files)' }),
      'Redo of rewind to “Tests pass” (files)',
    );
    assert.equal(eventLabel({ ...base, kind: 'rewind', data: {}, summary: 'undo (files)' }), 'Undo (files)');
    // an importer's own words keep the title
    assert.equal(eventLabel({ ...base, kind: 'rewind', data: {}, summary: 'went back' }), 'Rewind: went back');
    assert.equal(eventLabel({ ...base, kind: 'rewind', data: {} }), 'Rewind');
  });

  it('picks icons, with failures in the error color', () => {
    assert.deepEqual(kindIcon({ kind: 'prompt', data: {} }), { id: 'comment' });
    assert.deepEqual(kindIcon({ kind: 'tool_result', data: { isError: true } }), { id: 'error', color: 'errorForeground' });
    assert.deepEqual(kindIcon({ kind: 'iteration_completed', data: { success: false } }), {
      id: 'error',
      color: 'errorForeground',
    });
    assert.deepEqual(kindIcon({ kind: 'who_knows', data: {} }), { id: 'circle-small' });
  });

  it('cuts long checkpoint labels', () => {
    assert.equal(checkpointTitle({ id: 'x', label: 'a'.repeat(200) }).length, 80);
  });
});

describe('session tooltip', () => {
  it('lists the stats in SPEC vocabulary', () => {
    const lines = statsLines({
      prompts: 3,
      responses: 1,
      toolCalls: 10,
      toolCallsFailed: 2,
      toolResults: 10,
      iterations: 4,
      iterationsFailed: 1,
      checkpoints: 2,
      rewinds: 0,
      tokens: { input: 12000, output: 3400, cacheRead: 0, cacheCreation: 5 },
      durationMs: 65_000,
      completion: 'LOOP_COMPLETE',
      termination: null,
      merge: null,
    });
    assert.deepEqual(lines, [
      '3 prompts · 1 response',
      '10 tool calls (2 failed) · 10 tool results',
      '4 iterations (1 failed)',
      '2 checkpoints · 0 rewinds',
      'tokens: 12,000 in · 3,400 out · 0 cache read · 5 cache write',
      'duration: 1 min 05 s',
      'completed: LOOP\\_COMPLETE',
    ]);
  });

  it('escapes Markdown in user text', () => {
    assert.equal(escapeMarkdown('*bold* <b> [x](y)'), '\\*bold\\* \\<b\\> \\[x\\]\\(y\\)');
    const tip = sessionTooltip({
      id: 's1',
      title: '**not bold**',
      agent: 'codex',
      model: 'gpt-5',
      startedAt: '2026-11-21T10:00:00Z',
      endedAt: null,
      events: 42,
    });
    assert.match(tip, /^\*\*\\\*\\\*not bold\\\*\\\*\*\*/);
    assert.match(tip, /agent: codex \(gpt\\-5\)/);
    assert.match(tip, /started: 2026-11-21 10:00:00 UTC/);
    assert.match(tip, /42 events/);
  });
});

describe('checkpoint tooltip', () => {
  it('says what the paths left out of a checkpoint may be: a folder nested too deep is one', () => {
    const cp = {
      id: 'c1', label: 'x', ts: '', sessionId: null, eventId: null, auto: false, partial: false,
      skipped: [{ path: 'd/d/d', reason: 'nested more than 255 folders deep' },
        { path: 'big.bin', reason: 'larger than the size cap', size: 9 }],
    };
    assert.match(checkpointTooltip(cp), /2 paths left out \(too large, unreadable or nested too deep\)/);
  });
});
