import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { GUTTER_COLOURS, agentShare, annotation, gutterSlot, hoverMarkdown, originAt, rangeAt, turnAction, turnSide } from '../src/blame/text';
import type { BlameResult, LineOrigin } from '../src/protocol';
import { liveLinks } from './liveMarkdown';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const base = { model: null, sessionId: null, turn: null, checkpoint: 'c2', previous: 'c1', since: null, until: null };
const turn: LineOrigin = {
  ...base,
  kind: 'turn',
  agent: 'claude-code',
  model: 'claude-x',
  sessionId: 's1',
  turn: { id: 't1', index: 3, prompt: 'fix the login test', ts: '2026-11-21T09:50:00.000Z', endTs: '2026-11-21T10:00:00.000Z', before: 'b1', after: 'a1' },
};
const person: LineOrigin = { ...base, kind: 'person', agent: null, since: '2026-11-21T10:00:00.000Z', until: '2026-11-21T11:00:00.000Z' };
const initial: LineOrigin = { ...base, kind: 'initial', agent: null };
const shared: LineOrigin = {
  ...base,
  kind: 'shared',
  agent: null,
  until: '2026-11-21T11:30:00.000Z',
  shared: [
    { sessionId: 's1', agent: 'claude-code', model: null, turn: { id: 't1', index: 1, prompt: 'a', ts: '', endTs: '', before: 'x', after: 'y' } },
    { sessionId: 's2', agent: 'codex', model: null, turn: { id: 't2', index: 1, prompt: 'b', ts: '', endTs: '', before: 'x', after: 'y' } },
  ],
};
const result: BlameResult = {
  path: 'a.py',
  checkpoint: null,
  lineCount: 10,
  agentLines: 5,
  origins: [initial, turn, person],
  ranges: [
    { start: 1, end: 4, origin: 0 },
    { start: 5, end: 9, origin: 1 },
    { start: 10, end: 10, origin: 2 },
  ],
};

describe('line attribution text', () => {
  it('annotates the current line the way the issue shows it', () => {
    assert.equal(annotation(turn, NOW), 'Claude Code · “fix the login test” · 2 h ago');
    assert.equal(annotation(person, NOW), 'Changed between turns · 1 h ago');
    assert.equal(annotation(initial, NOW), 'Before the first checkpoint');
    assert.equal(annotation(shared, NOW), 'Claude Code + Codex · turns open at once · 30 min ago');
  });

  it('finds the range of a line by bisection', () => {
    assert.equal(originAt(result, 1), initial);
    assert.equal(originAt(result, 4), initial);
    assert.equal(originAt(result, 5), turn);
    assert.equal(originAt(result, 10), person);
    assert.equal(rangeAt(result, 11), undefined);
    assert.equal(originAt(result, 0), undefined);
  });

  it('counts the share of lines by agents', () => {
    assert.equal(agentShare(result), 50);
    assert.equal(agentShare({ ...result, lineCount: 0, agentLines: 0, ranges: [] }), 0);
  });

  it('gives the hover the turn and its three actions, with the turn’s own checkpoints', () => {
    const md = hoverMarkdown('file:///w', turn, NOW);
    assert.match(md, /\*\*Claude Code\*\* · claude\\-x · turn 3/); // escaped for Markdown
    assert.match(md, /fix the login test/);
    for (const cmd of ['turnback.revealLineTurn', 'turnback.compareLineTurn', 'turnback.rewindBeforeLineTurn']) {
      assert.ok(md.includes(`command:${cmd}?`), cmd);
    }
    const arg = /command:turnback\.compareLineTurn\?([^)]+)\)/.exec(md)?.[1] ?? '';
    assert.deepEqual(JSON.parse(decodeURIComponent(arg)), [turnAction('file:///w', turn)]);
    assert.deepEqual(turnAction('file:///w', turn), { folder: 'file:///w', sessionId: 's1', turnId: 't1', prompt: 'fix the login test', before: 'b1', after: 'a1' });
    assert.equal(turnAction('file:///w', person), undefined);
    assert.ok(!hoverMarkdown('file:///w', person, NOW).includes('command:'));
  });

  it('lists the files the turn changed in the hover, the first eight and how many more', () => {
    assert.match(hoverMarkdown('file:///w', turn, NOW, ['src/login.ts']), /Changed `src\/login\.ts`/);
    const many = Array.from({ length: 10 }, (_, i) => `f${String(i)}.py`);
    const md = hoverMarkdown('file:///w', turn, NOW, many);
    assert.match(md, /Changed 10 files: `f0\.py`, `f1\.py`.*`f7\.py` and 2 more/);
    assert.ok(!md.includes('f8.py'));
    assert.ok(!hoverMarkdown('file:///w', turn, NOW).includes('Changed'));
  });

  it('keeps hostile file names, prompts and times out of the trusted hover’s links', () => {
    // the hover enables three commands: a file name (a workspace's) or a time (a
    // transcript's) that escaped its span put its own rewind link beside them
    const rewind = '[Compare This Turn](command:turnback.rewindBeforeLineTurn?%5B%7B%22folder%22%3A%22file%3A%2F%2F%2Fw%22%7D%5D)';
    const hostile: LineOrigin = {
      ...turn,
      model: `m\n\n${rewind}`,
      turn: { ...(turn.turn ?? assert.fail('the fixture has a turn')), prompt: `p ${rewind} ![](https://evil.example/p.png)`, endTs: '![](http://x.io)' },
    };
    const files = [`a\n\n${rewind}\n\n`, 'b`![](https://evil.example/b.png)`', '``c``'];
    const md = hoverMarkdown('file:///w', hostile, NOW, files);
    assert.deepEqual(
      liveLinks(md).map((l) => l.replace(/\?.*/, '')),
      ['command:turnback.revealLineTurn', 'command:turnback.compareLineTurn', 'command:turnback.rewindBeforeLineTurn'],
      md,
    );
  });

  it('keeps a prompt with an unbalanced parenthesis inside each action’s link', () => {
    // a link's target ends at a parenthesis it does not balance (CommonMark), and
    // encodeURIComponent leaves parentheses as they are: "1) the parser" or a ":(" cut the
    // three links short (clicked, they did nothing) or left them text (redteam25)
    for (const prompt of ['fix 1) the parser', 'it fails :(', 'f(x) and 2) g(']) {
      const odd: LineOrigin = { ...turn, turn: { ...(turn.turn ?? assert.fail('the fixture has a turn')), prompt } };
      const md = hoverMarkdown('file:///w', odd, NOW);
      for (const cmd of ['turnback.revealLineTurn', 'turnback.compareLineTurn', 'turnback.rewindBeforeLineTurn']) {
        // the target as CommonMark reads one holding no parenthesis of its own
        const target = new RegExp(`\\]\\(command:${cmd.replace(/\./g, '\\.')}\\?([^()\\s]*)\\)`).exec(md)?.[1];
        assert.ok(target !== undefined, `${cmd}: no link whole in ${md}`);
        assert.deepEqual(JSON.parse(decodeURIComponent(target)), [turnAction('file:///w', odd)], cmd);
      }
    }
  });

  it('names a line turn’s sides with the prompt’s invisible characters shown', () => {
    // the diff's title and the rewind's question take the prompt from the link (redteam25)
    assert.equal(turnSide('before', 'fix\u202etxt.exe'), 'before “fix\\u202etxt.exe”');
    assert.equal(turnSide('after', 'fix the parser'), 'after “fix the parser”');
  });

  it('colours agents stably and leaves a person’s lines plain', () => {
    const slot = gutterSlot(turn);
    assert.ok(slot !== undefined && slot >= 0 && slot < GUTTER_COLOURS);
    assert.equal(gutterSlot({ ...turn }), slot);
    assert.equal(gutterSlot(person), undefined);
    assert.equal(gutterSlot(initial), undefined);
  });
});
