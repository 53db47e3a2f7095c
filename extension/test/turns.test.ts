/**
 * Turns and file versions as rows: labels, descriptions and context values the
 * menus match and the end-to-end tests look for.
 */

import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { historyRows, versionStat } from '../src/history/model';
import type { Checkpoint, FileVersion, SessionInfo, Step, Turn } from '../src/protocol';
import { ROW_LABEL_WIDTH } from '../src/tree/labels';
import { liveLinks } from './liveMarkdown';
import { changeSummary, noCheckpointNote, stepLabel, stepNodes, turnNode, turnNodes } from '../src/tree/turns';

const FOLDER = 'file:///work/demo';
const NOW = Date.parse('2026-11-21T12:00:00Z');

function turn(extra: Partial<Turn> = {}): Turn {
  return {
    id: 'p1',
    index: 1,
    prompt: 'Add a farewell command',
    ts: '2026-11-21T10:00:00.000Z',
    endTs: '2026-11-21T10:02:10.000Z',
    durationMs: 130_000,
    events: 9,
    toolCalls: 5,
    toolCallsFailed: 1,
    parentTurn: null,
    branchStart: false,
    onHeadPath: true,
    head: false,
    before: 'cpA',
    after: 'cpB',
    checkpoints: ['cpB'],
    lastEvent: 'e9',
    changes: { files: 4, linesAdded: 12, linesRemoved: 3 },
    ...extra,
  };
}

const SESSION: SessionInfo = {
  id: 's1',
  title: 't',
  agent: 'claude-code',
  startedAt: '2026-11-21T10:00:00Z',
  endedAt: null,
  stats: {},
};

describe('turn rows', () => {
  it('label the prompt, and describe time, tools and changes', () => {
    const n = turnNode(FOLDER, 's1', 'claude-code', turn());
    assert.equal(n.label, 'Add a farewell command');
    assert.match(n.description ?? '', /5 tools \(1 ✗\)/);
    assert.match(n.description ?? '', /\+12 −3 in 4 files/);
    assert.deepEqual(n.contextValue.split(' '), ['turn', 'rewindable', 'comparable', 'continuable']);
    assert.equal(n.checkpoint?.id ?? 'none', 'cpB');
    assert.equal(n.checkpoint?.previous?.id, 'cpA');
    assert.equal(noCheckpointNote(n), undefined);
  });

  it("puts the time first, before the head's mark, so that a cut row keeps it", () => {
    const n = turnNode(FOLDER, 's1', 'claude-code', turn({ head: true }));
    assert.match(n.description ?? '', /^\d\d:\d\d:\d\d · ● head · /);
  });

  it("title a turn's two ends by a prompt short enough for a tab to show both", () => {
    const prompt = `Add a farewell(name) next to greet() with a test, ${'and wire it into the CLI '.repeat(3)}as bye.`;
    const n = turnNode(FOLDER, 's1', 'claude-code', turn({ prompt }));
    const before = n.checkpoint?.previous?.title ?? '';
    const after = n.checkpoint?.title ?? '';
    assert.equal(before, "before “Add a farewell(name) next to greet()…”");
    assert.match(after, /^after “Add a farewell/);
    assert.ok(before.length <= 50 && after.length <= 50, `${before} / ${after}`);
    // the row is cut so that its time stays in sight; the prompt and the tooltip keep it whole
    assert.ok(n.label.length <= ROW_LABEL_WIDTH && n.label.endsWith('…'), n.label);
    assert.equal(n.prompt, prompt);
    assert.ok((n.tooltip ?? '').includes('wire it into the CLI and wire it into the CLI as bye\\.**'), n.tooltip);
  });

  it('say when a turn has no checkpoint, and offer the nearest', () => {
    const n = turnNode(FOLDER, 's1', 'aider', turn({ before: null, after: null, changes: null, nearest: {
      id: 'cp0', label: 'start', ts: '', tree: '', sessionId: null, eventId: null, auto: false, partial: false, files: 1,
    } as unknown as Turn['nearest'] }));
    assert.match(n.description ?? '', /no checkpoint/);
    assert.deepEqual(n.contextValue.split(' '), ['turn', 'rewindable']);
    assert.equal(n.nearest?.id, 'cp0');
    const note = noCheckpointNote(n);
    assert.equal(note?.label, 'No checkpoint before this turn');
    assert.match(note.description ?? 'none', /nearest: “start”/);
  });

  it('gives the nearest checkpoint a title fit for a notification', () => {
    // its title is quoted in "Rewind to “…”" questions: one line, visible, cut
    const label = `fix\u202e${'y'.repeat(500)}\nDelete all files`;
    const n = turnNode(FOLDER, 's1', 'aider', turn({ before: null, after: null, changes: null, nearest: {
      id: 'cp0', label, ts: '', tree: '', sessionId: null, eventId: null, auto: false, partial: false, files: 1,
    } as unknown as Turn['nearest'] }));
    const title = n.nearest?.title ?? '';
    assert.ok(title.startsWith('fix\\u202e'));
    assert.ok(!title.includes('\n'));
    assert.ok(title.length <= 80);
  });

  it('shows a transcript’s time in the tooltip as text, never as an image', () => {
    const hostile = turnNode(FOLDER, 's1', 'codex', turn({ ts: '![](https://evil.example/t.png)' }));
    assert.deepEqual(liveLinks(hostile.tooltip ?? ''), [], hostile.tooltip);
  });

  it('keep branches visible', () => {
    const n = turnNode(FOLDER, 's1', 'codex', turn({ branchStart: true, onHeadPath: false }));
    assert.match(n.description ?? '', /↳ branch · off the current branch/);
    assert.ok(n.contextValue.includes('offBranch'));
  });

  it("say an abandoned branch is off the current one on its first turn only", () => {
    const turns = [
      turn({ id: 'p1', index: 1 }),
      turn({ id: 'p2', index: 2, branchStart: true, onHeadPath: false }),
      turn({ id: 'p3', index: 3, onHeadPath: false }),
      turn({ id: 'p4', index: 4, onHeadPath: false }),
      turn({ id: 'p5', index: 5, branchStart: true, head: true }),
    ];
    const nodes = turnNodes(FOLDER, 's1', { turns, total: 5, offset: 0, session: SESSION });
    const said = nodes.filter((n) => (n.description ?? '').includes('off the current branch')).map((n) => n.key.split('|').pop());
    assert.deepEqual(said, ['p2']);
    for (const n of nodes.slice(1, 4)) {
      assert.ok(n.contextValue.includes('offBranch'), n.key);
      assert.match(String(n.tooltip), /off the current branch/);
    }
  });

  it('name a rewind step as a sentence, not "rewind" twice', () => {
    assert.equal(stepLabel({ id: 'r', kind: 'rewind', label: 'rewind to “Tests pass” (files)', ts: '' }), 'Rewind to “Tests pass” (files)');
    assert.equal(stepLabel({ id: 'u', kind: 'rewind', label: 'undo (files)', ts: '' }), 'Undo (files)');
  });

  it('page from the latest, with a row for earlier turns', () => {
    const nodes = turnNodes(FOLDER, 's1', { turns: [turn()], total: 3000, offset: 2999, session: SESSION });
    assert.equal(nodes[0]?.type, 'loadMore');
    assert.equal(nodes[0].label, 'Load earlier turns…');
    assert.equal(nodes[1]?.type, 'turn');
  });

  it('summarise changes', () => {
    assert.equal(changeSummary({ changes: { files: 0, linesAdded: 0, linesRemoved: 0 } }), 'no file changed');
    assert.equal(changeSummary({ changes: null }), undefined);
  });
});

describe('steps', () => {
  const steps: Step[] = [
    { id: 'a', kind: 'thinking', label: 'hmm', ts: '2026-11-21T10:00:01Z', folded: true },
    { id: 'b', kind: 'tool', label: 'Bash(pytest -q)', ts: '2026-11-21T10:00:02Z', failed: true, detail: '1 failed' },
    { id: 'c', kind: 'response', label: 'Done', ts: '2026-11-21T10:00:03Z' },
  ];
  const parent = turnNode(FOLDER, 's1', 'claude-code', turn());

  it('show a tool call and its result as one row', () => {
    const tool = steps[1];
    assert.ok(tool !== undefined);
    assert.equal(stepLabel(tool), 'Bash(pytest -q) ✗ 1 failed');
    assert.equal(stepLabel({ id: 'x', kind: 'tool', label: 'Read(a)', ts: '', pending: true }), 'Read(a) …');
  });

  it('fold thinking and usage behind a row that shows them', () => {
    const folded = stepNodes(parent, steps, false);
    assert.deepEqual(folded.map((n) => n.label), ['Bash(pytest -q) ✗ 1 failed', 'Done', '1 thinking and usage step hidden']);
    const shown = stepNodes(parent, steps, true);
    assert.deepEqual(shown.map((n) => n.label), ['hmm', 'Bash(pytest -q) ✗ 1 failed', 'Done']);
  });

  it("fold a rewind's safety checkpoint step into the rewind's row, one click away", () => {
    const ts = '2026-11-21T10:00:05Z';
    const ops: Step[] = [
      { id: 'cp-sf1', kind: 'checkpoint', label: 'before rewind to abc', ts },
      { id: 'rw-1', kind: 'rewind', label: 'rewind to “good” (files)', ts, safetyCheckpoint: 'sf1' },
      { id: 'cp-good', kind: 'checkpoint', label: 'good', ts },
    ];
    const listed: Checkpoint[] = [
      { id: 'good', label: 'good', ts, sessionId: 's1', eventId: 'cp-good', auto: false, partial: false },
      {
        id: 'sf1', label: 'before rewind to “good”', ts, sessionId: 's1', eventId: 'cp-sf1', auto: true, partial: false,
        safetyOf: { op: 'rewind', checkpoint: 'good', words: 'before rewind to “good”' },
      },
    ];
    const rows = stepNodes(parent, ops, false, listed, NOW);
    assert.deepEqual(rows.map((n) => n.label), ['Rewind to “good” (files)', 'good']);
    const [rewind] = rows;
    assert.ok(rewind?.type === 'step');
    assert.equal(rewind.checkpoint?.id, 'sf1');
    assert.match(rewind.contextValue, /\bbeforeSaved\b/);
    assert.equal(rewind.collapsible, 'collapsed');
    assert.equal(rewind.safety?.label, 'before rewind to “good”');
    // without the listing (or for a checkpoint it does not mark a safety one): as before
    assert.deepEqual(stepNodes(parent, ops, false).map((n) => n.label).length, 3);
  });

  it("cut a long tool output after a whole word, the whole in the row's tooltip", () => {
    // the e2e showed "Bash(pytest -q) ✗ FAILED tests/test_farewel…": cut inside a word
    const detail = 'FAILED tests/test_farewell.py::test_farewell - AssertionError: assert 1 == 2';
    const step: Step = { id: 'f', kind: 'tool', label: 'Bash(pytest -q)', ts: '2026-11-21T10:00:02Z', failed: true, detail };
    const [row] = stepNodes(parent, [step], false);
    assert.ok(row !== undefined);
    const full = stepLabel(step);
    assert.ok(row.label.length <= ROW_LABEL_WIDTH && row.label.endsWith('…'), row.label);
    const kept = row.label.slice(0, -1);
    assert.ok(full.startsWith(kept), row.label);
    assert.equal(full.charAt(kept.length), ' ', `cut inside a word: ${row.label}`);
    assert.ok((row.tooltip ?? '').includes('AssertionError: assert 1 \\=\\= 2'), row.tooltip); // Markdown-escaped
  });
});

describe('file history rows', () => {
  const v: FileVersion = {
    checkpoint: { id: 'cpB', label: 'after tests', ts: '2026-11-21T11:00:00Z' } as FileVersion['checkpoint'],
    previous: 'cpA',
    previousLabel: 'start',
    status: 'modified',
    linesAdded: 3,
    linesRemoved: 1,
    binary: false,
    sessionId: 's1',
    turnId: 'p1',
    turnPrompt: 'Add a farewell command',
    agent: 'claude-code',
    safety: false,
  };

  it('label a version with its turn, agent, time and lines', () => {
    const [row] = historyRows(FOLDER, { path: 'a.py', versions: [v], total: 1, offset: 0 }, NOW);
    assert.ok(row?.kind === 'version');
    assert.equal(row.label, 'Add a farewell command');
    assert.equal(row.description, '1 h ago · +3 −1 · claude-code');
    assert.equal(row.checkpoint.previous?.id, 'cpA');
    assert.ok(row.contextValue.includes('hasTurn'));
  });

  it('show a hostile agent name on one line, bounded, its bidi override escaped', () => {
    // the session header's agent (a planted store's: any text) went into the description
    // as it was, where the views' other agent names go through oneLine (redteam25)
    const agent = `evil\u202e\n${'x'.repeat(10_000)}`;
    const [row] = historyRows(FOLDER, { path: 'a.py', versions: [{ ...v, agent }], total: 1, offset: 0 }, NOW);
    assert.ok(row?.kind === 'version');
    assert.ok(row.description.startsWith('1 h ago · +3 −1 · evil\\u202e x'), row.description);
    assert.ok(row.description.length < 80, String(row.description.length));
  });

  it('name a safety checkpoint for what it is, not for its turn', () => {
    const safety = { ...v, checkpoint: { ...v.checkpoint, label: 'before rewind to cpA' }, safety: true };
    const [group] = historyRows(FOLDER, { path: 'a.py', versions: [safety], total: 1, offset: 0 }, NOW);
    assert.ok(group?.kind === 'group');
    const [row] = group.children;
    assert.ok(row !== undefined);
    assert.equal(row.label, 'before rewind to cpA');
    assert.equal(row.description, '1 h ago · +3 −1 · Turnback');
    assert.ok(row.tooltip.includes('before a rewind or undo'), row.tooltip);
    assert.ok(row.tooltip.includes('Add a farewell command'), row.tooltip);
  });

  it("show a file's own versions first, the ones saved before rewinds and undos inside one row", () => {
    // the e2e's File History after a few rewinds: mostly "before rewind to …" rows
    const at = (id: string, hour: number, safety: boolean): FileVersion => ({
      ...v,
      checkpoint: { ...v.checkpoint, id, label: safety ? `before rewind to ${id}` : `turn ${id}`, ts: `2026-11-21T${String(hour)}:00:00Z` },
      safety,
    });
    const versions = [at('s3', 11, true), at('t2', 10, false), at('s1', 9, true), at('t1', 8, false)];
    const rows = historyRows(FOLDER, { path: 'a.py', versions, total: 6, offset: 0 }, NOW);
    assert.deepEqual(rows.map((r) => r.kind), ['version', 'version', 'group', 'more']);
    assert.deepEqual(rows.slice(0, 2).map((r) => r.label), ['Add a farewell command', 'Add a farewell command']);
    const group = rows[2];
    assert.ok(group?.kind === 'group');
    assert.equal(group.label, 'Saved before rewinds and undos');
    assert.equal(group.description, '2 versions · newest 1 h ago');
    // each stays reachable: the group's children are the versions, newest first
    assert.deepEqual(group.children.map((r) => r.checkpoint.id), ['s3', 's1']);
    assert.ok(group.children.every((r) => r.contextValue.startsWith('version')));
  });

  it("cut a long prompt so the version's age stays in sight, the whole in the tooltip", () => {
    const turnPrompt = `Rename every parser module ${'and update its imports '.repeat(6)}done`;
    const [row] = historyRows(FOLDER, { path: 'a.py', versions: [{ ...v, turnPrompt }], total: 1, offset: 0 }, NOW);
    assert.ok(row?.kind === 'version');
    assert.ok(row.label.length <= ROW_LABEL_WIDTH && row.label.endsWith('…'), row.label);
    assert.ok(row.tooltip.includes(`**${turnPrompt}**`), row.tooltip);
  });

  it('fall back to the checkpoint label, and page', () => {
    const rows = historyRows(
      FOLDER,
      { path: 'a.py', versions: [{ ...v, turnPrompt: '', turnId: null, sessionId: null }], total: 5, offset: 0 },
      NOW,
    );
    assert.equal(rows[0]?.label, 'after tests');
    assert.equal(rows[1]?.label, 'Load more…');
    assert.equal(versionStat({ status: 'deleted', binary: false, linesAdded: 0, linesRemoved: 0 }), 'deleted');
  });
});
