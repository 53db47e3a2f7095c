/**
 * The tree built from server responses: what a user sees in the Sessions view
 * and what end-to-end tests look for (labels, context values, keys).
 */

import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Change, Checkpoint, SessionEvent, SessionInfo } from '../src/protocol';
import {
  type ChangeNode,
  type CheckpointBearing,
  type EventNode,
  type TreeNode,
  bearsCheckpoint,
  changeNodes,
  checkpointRefs,
  eventNodes,
  folderNode,
  placeEvents,
  sessionNodes,
} from '../src/tree/model';
import { ROW_LABEL_WIDTH } from '../src/tree/labels';
import { liveLinks } from './liveMarkdown';

const FOLDER = 'file:///work/demo';
const NOW = Date.parse('2026-11-21T12:00:00Z');

function session(id: string, extra: Partial<SessionInfo> = {}): SessionInfo {
  return {
    id,
    title: `fix ${id}`,
    agent: 'claude-code',
    startedAt: '2026-11-21T10:00:00Z',
    endedAt: '2026-11-21T10:30:00Z',
    stats: { prompts: 2, toolCalls: 5, checkpoints: 1 },
    ...extra,
  };
}

function ev(id: string, parent: string | null, kind: string, data: Record<string, unknown> = {}, minute = 0): SessionEvent {
  return { id, parent, kind, data, ts: `2026-11-21T10:${String(minute).padStart(2, '0')}:00.000Z` };
}

function cp(id: string, eventId: string | null, ts: string, label = '', sessionId: string | null = 's1'): Checkpoint {
  return { id, label, ts, sessionId, eventId, auto: false, partial: false, files: 3 };
}

function events(nodes: TreeNode[]): EventNode[] {
  return nodes.filter((n): n is EventNode => n.type === 'event');
}

function byEvent(nodes: TreeNode[], id: string): EventNode {
  const found = events(nodes).find((n) => n.eventId === id);
  assert.ok(found, `node for event ${id}`);
  return found;
}

describe('folder node', () => {
  it('is named after the folder and counts from status', () => {
    const node = folderNode(
      { uri: FOLDER, name: 'demo' },
      { folder: FOLDER, store: '/work/demo/.turnback', formatVersion: 1, sessions: 3, checkpoints: 1, bytes: 10 },
    );
    assert.equal(node.label, 'demo');
    assert.equal(node.description, '3 sessions · 1 checkpoint');
    assert.equal(node.contextValue, 'folder');
    assert.equal(node.collapsible, 'expanded');
    assert.equal(node.key, `f|${FOLDER}`);
  });
});

describe('session nodes', () => {
  it('shows a hostile agent name on one line, its bidi override as an escape', () => {
    const s = session('s1', { agent: 'codex\n\n\u202eedoc-edualc' });
    const [n] = sessionNodes(FOLDER, { sessions: [s], total: 1 }, NOW);
    assert.equal(n?.description, 'codex \\u202eedoc-edualc · 2 h ago');
  });

  it('shows title, agent and age, with stats in the tooltip', () => {
    const nodes = sessionNodes(FOLDER, { sessions: [session('s1'), session('s2', { title: '', endedAt: null })], total: 2 }, NOW);
    assert.equal(nodes.length, 2);
    const [a, b] = nodes;
    assert.ok(a?.type === 'session' && b?.type === 'session');
    assert.equal(a.label, 'fix s1');
    assert.equal(a.description, 'claude-code · 2 h ago');
    assert.equal(a.contextValue, 'session');
    assert.match(a.tooltip ?? '', /2 prompts/);
    assert.match(a.tooltip ?? '', /5 tool calls/);
    assert.equal(b.label, 'session s2', 'an untitled session is named by its id');
    assert.equal(b.description, 'claude-code · 2 h ago · open');
  });

  it('says a session not counted yet is being counted, never "open" nor zero counts', () => {
    const [node] = sessionNodes(
      FOLDER,
      { sessions: [session('s4', { endedAt: null, events: null, stats: null, counted: false })], total: 1, partial: true },
      NOW,
    );
    assert.ok(node?.type === 'session');
    assert.equal(node.description, 'claude-code · 2 h ago · counting…');
    assert.equal(node.events, undefined, 'no count to place the window of latest events by');
    assert.match(node.tooltip ?? '', /events and stats: still being counted/);
    assert.doesNotMatch(node.tooltip ?? '', /prompt|tool call|checkpoint|\b0 events/);
  });

  it("shows a pulled session's machine and user, and tags it pulled", () => {
    const pulled = session('s3@laptop-0123abcd', { origin: { machine: 'laptop-0123abcd', user: 'ana', host: 'laptop' } });
    const [node] = sessionNodes(FOLDER, { sessions: [pulled], total: 1 }, NOW);
    assert.ok(node?.type === 'session');
    assert.equal(node.description, 'claude-code · 2 h ago · from ana@laptop');
    assert.equal(node.contextValue, 'session pulled');
  });

  it('ends with "Load more…" while the server has more', () => {
    const nodes = sessionNodes(FOLDER, { sessions: [session('s1')], total: 250 }, NOW);
    const last = nodes[nodes.length - 1];
    assert.ok(last?.type === 'loadMore');
    assert.equal(last.label, 'Load more…');
    assert.equal(last.description, '1 of 250 sessions shown');
    assert.equal(last.what, 'sessions');
    assert.equal(last.contextValue, 'loadMore');
  });

  it('says so when there is no session', () => {
    const nodes = sessionNodes(FOLDER, { sessions: [], total: 0 }, NOW);
    assert.equal(nodes.length, 1);
    assert.equal(nodes[0]?.type, 'message');
    assert.equal(nodes[0].label, 'No sessions recorded yet');
  });
});

describe('event nodes', () => {
  const linear = [
    ev('e1', null, 'prompt', { text: 'make the tests pass' }, 1),
    { ...ev('e2', 'e1', 'tool_call', { name: 'Bash', input: { command: 'pytest' } }, 2), summary: 'Bash(pytest)' },
    ev('e3', 'e2', 'tool_result', { isError: true, output: 'boom' }, 3),
    ev('e4', 'e3', 'checkpoint', { checkpoint: 'cp1' }, 4),
  ];
  const checkpoints = [cp('cp1', 'e4', '2026-11-21T10:04:00Z', 'after tests')];

  it('labels each event by kind and summary, and marks the head', () => {
    const nodes = eventNodes({
      folder: FOLDER,
      sessionId: 's1',
      result: { events: linear, head: 'e4', total: 4, offset: 0 },
      checkpoints,
      now: NOW,
    });
    assert.deepEqual(
      nodes.map((n) => n.label),
      ['Prompt: make the tests pass', 'Tool: Bash(pytest)', 'Result (no output)', 'after tests'],
    );
    const head = byEvent(nodes, 'e4');
    assert.equal(head.head, true);
    // the time first: VS Code cuts the row's end (ux33's screenshot: "10:2…")
    assert.match(head.description ?? '', /^10:04:00 · ● head/);
    assert.equal(head.contextValue, 'event checkpoint head');
    assert.equal(byEvent(nodes, 'e1').contextValue, 'event');
    assert.equal(byEvent(nodes, 'e1').description, '10:01:00');
    assert.equal(byEvent(nodes, 'e3').icon?.id, 'error', 'a failed tool result shows an error icon');
    assert.equal(byEvent(nodes, 'e4').key, `e|${FOLDER}|s1|e4`);
  });

  it('makes the checkpoint expandable and links it to the one before', () => {
    const earlier = cp('cp0', null, '2026-11-21T09:00:00Z', 'start', null);
    const nodes = eventNodes({
      folder: FOLDER,
      sessionId: 's1',
      result: { events: linear, head: 'e4', total: 4, offset: 0 },
      checkpoints: [...checkpoints, earlier],
      now: NOW,
    });
    const node = byEvent(nodes, 'e4');
    assert.ok(bearsCheckpoint(node));
    assert.equal(node.collapsible, 'collapsed');
    assert.deepEqual(node.checkpoint, {
      id: 'cp1',
      title: 'after tests',
      previous: { id: 'cp0', title: 'start' },
      files: 3,
    });
  });

  it('finds a checkpoint by the id in its event data when eventId is not set', () => {
    const nodes = eventNodes({
      folder: FOLDER,
      sessionId: 's1',
      result: { events: linear, head: 'e4', total: 4, offset: 0 },
      checkpoints: [cp('cp1', null, '2026-11-21T10:04:00Z', '')],
      now: NOW,
    });
    const node = byEvent(nodes, 'e4');
    assert.equal(node.checkpoint?.id, 'cp1');
    assert.equal(node.label, 'checkpoint cp1');
  });

  it('marks a non-checkpoint event that owns a checkpoint', () => {
    const nodes = eventNodes({
      folder: FOLDER,
      sessionId: 's1',
      result: { events: linear.slice(0, 1), head: 'e1', total: 1, offset: 0 },
      checkpoints: [cp('cpX', 'e1', '2026-11-21T10:01:00Z', 'file history')],
      now: NOW,
    });
    const node = byEvent(nodes, 'e1');
    assert.equal(node.label, 'Prompt: make the tests pass');
    assert.equal(node.contextValue, 'event checkpoint head');
    assert.match(node.description ?? '', /◆ file history/);
  });

  it('pages from the end: "Load earlier events…" first, then the session’s other checkpoints once all are in', () => {
    const stray = cp('cp9', 'elsewhere', '2026-11-21T11:00:00Z', 'imported');
    const page = eventNodes({
      folder: FOLDER,
      sessionId: 's1',
      result: { events: linear.slice(2), head: 'e4', total: 4, offset: 2 },
      checkpoints: [...checkpoints, stray],
      now: NOW,
    });
    const first = page[0];
    assert.ok(first?.type === 'loadMore');
    assert.equal(first.label, 'Load earlier events…');
    assert.equal(first.description, 'the last 2 of 4 events shown');
    assert.equal(first.sessionId, 's1');
    assert.deepEqual(
      page.slice(1).map((n) => n.label),
      ['Result (no output)', 'after tests'],
    );
    assert.ok(!page.some((n) => n.type === 'checkpoint'), 'no stray checkpoints before the earliest page');
    assert.doesNotMatch(byEvent(page, 'e3').description ?? '', /branch/, 'a parent before the window is no branch');
    assert.equal(byEvent(page, 'e4').head, true);

    const all = eventNodes({
      folder: FOLDER,
      sessionId: 's1',
      result: { events: linear, head: 'e4', total: 4, offset: 0 },
      checkpoints: [...checkpoints, stray],
      now: NOW,
    });
    assert.ok(!all.some((n) => n.type === 'loadMore'));
    const tail = all[all.length - 1];
    assert.ok(tail?.type === 'checkpoint');
    assert.equal(tail.label, 'imported');
    assert.equal(tail.contextValue, 'checkpoint');
    assert.equal(tail.checkpoint.previous?.id, 'cp1');
  });

  it("says an abandoned branch is off the current one on its first row only, not on each", () => {
    // e1 → e2 → e3 → e4 (abandoned, three rows) ; rewound to e1, then e1 → e5 (head)
    const events = [
      ev('e1', null, 'prompt', { text: 'first' }, 1),
      ev('e2', 'e1', 'prompt', { text: 'try A' }, 2),
      ev('e3', 'e2', 'response', { text: 'A done' }, 3),
      ev('e4', 'e3', 'prompt', { text: 'more A' }, 4),
      ev('e5', 'e1', 'prompt', { text: 'try B' }, 5),
    ];
    const nodes = eventNodes({
      folder: FOLDER,
      sessionId: 's1',
      result: { events, head: 'e5', total: 5, offset: 0 },
      checkpoints: [],
      now: NOW,
    });
    const said = ['e2', 'e3', 'e4'].filter((id) => (byEvent(nodes, id).description ?? '').includes('off the current branch'));
    assert.deepEqual(said, ['e2']);
    for (const id of ['e2', 'e3', 'e4']) {
      // every row still looks it, is tagged for its menu, and its tooltip says it
      assert.equal(byEvent(nodes, id).icon?.color, 'disabledForeground');
      assert.match(byEvent(nodes, id).contextValue, /\boffBranch\b/);
      assert.match(String(byEvent(nodes, id).tooltip), /off the current branch/);
    }
  });

  it('shows branches: where they start, where they split, and what is off the current one', () => {
    // e1 → e2 → e3 (abandoned) ; rewound to e2, then e2 → e4 → e5 (head)
    const branched = [
      ev('e1', null, 'prompt', { text: 'first' }, 1),
      ev('e2', 'e1', 'response', { text: 'answer' }, 2),
      ev('e3', 'e2', 'prompt', { text: 'try A' }, 3),
      ev('e4', 'e2', 'prompt', { text: 'try B' }, 4),
      ev('e5', 'e4', 'response', { text: 'done' }, 5),
    ];
    const nodes = eventNodes({
      folder: FOLDER,
      sessionId: 's1',
      result: { events: branched, head: 'e5', total: 5, offset: 0 },
      checkpoints: [],
      now: NOW,
    });
    assert.match(byEvent(nodes, 'e2').description ?? '', /2 branches/);
    assert.match(byEvent(nodes, 'e3').description ?? '', /off the current branch/);
    assert.match(byEvent(nodes, 'e3').contextValue, /\boffBranch\b/);
    assert.equal(byEvent(nodes, 'e3').icon?.color, 'disabledForeground');
    assert.match(byEvent(nodes, 'e4').description ?? '', /↳ branch 2 from “answer”/);
    // said where the branch starts; its later rows say it in their tooltip only
    assert.doesNotMatch(byEvent(nodes, 'e5').description ?? '', /branch/);
    assert.match(String(byEvent(nodes, 'e5').tooltip), /branch 2/);
    assert.doesNotMatch(byEvent(nodes, 'e1').description ?? '', /branch/);
    assert.doesNotMatch(String(byEvent(nodes, 'e1').tooltip), /branch/);
  });

  it("cuts a long label so the row's time stays in sight, says it whole in the tooltip, and names an empty result", () => {
    const prompt = `Refactor the parser ${'and its many tests '.repeat(8)}end`;
    const nodes = eventNodes({
      folder: FOLDER,
      sessionId: 's1',
      result: {
        events: [ev('e1', null, 'prompt', { text: prompt }, 1), ev('e2', 'e1', 'tool_result', { output: '' }, 2)],
        head: 'e2',
        total: 2,
        offset: 0,
      },
      checkpoints: [],
      now: NOW,
    });
    const row = byEvent(nodes, 'e1');
    assert.ok(row.label.length <= ROW_LABEL_WIDTH && row.label.endsWith('…'), row.label);
    assert.match(String(row.tooltip), /and its many tests and its many tests and its many tests/);
    assert.equal(byEvent(nodes, 'e2').label, 'Result (no output)');
  });

  it('leaves room for the time at the default sidebar width for a prompt near 60 characters', () => {
    // ux33's screenshot: a row of 60 characters showed "10:2…" in a sidebar of about 440 px,
    // which fits about 55 characters three levels in, the time's 8 among them
    const prompt = 'Make the logo brighter and drop the scratch notes, please.'; // 58
    const nodes = eventNodes({
      folder: FOLDER,
      sessionId: 's1',
      result: { events: [ev('e1', null, 'prompt', { text: prompt }, 1)], head: 'e1', total: 1, offset: 0 },
      checkpoints: [],
      now: NOW,
    });
    const row = byEvent(nodes, 'e1');
    const time = (row.description ?? '').split(' · ')[0] ?? '';
    assert.ok(row.label.length + ' · '.length + time.length <= 56, row.label);
    assert.match(row.description ?? '', /^10:01:00/);
  });

  it("folds a rewind's and an undo's safety checkpoint into the operation's row, one click away", () => {
    // the e2e showed two rows for each: "before rewind to “good”" above "Rewind to “good”"
    const safety = (id: string, eventId: string, minute: number, words: string, op = 'rewind'): Checkpoint => ({
      ...cp(id, eventId, `2026-11-21T10:${String(minute)}:00Z`, words), // named as the cache names it
      auto: true,
      safetyOf: { op, checkpoint: 'cp1', words },
    });
    const withOps = [
      ...linear,
      ev('e5', 'e4', 'checkpoint', { checkpoint: 'sf1' }, 15),
      { ...ev('e6', 'e5', 'rewind', { checkpoint: 'cp1', safetyCheckpoint: 'sf1' }, 16), summary: 'rewind to “after tests” (files)' },
      ev('e7', 'e6', 'checkpoint', { checkpoint: 'sf2' }, 17),
      { ...ev('e8', 'e7', 'rewind', { checkpoint: 'sf1', safetyCheckpoint: 'sf2', undo: 'op1' }, 18), summary: 'undo of rewind to “after tests” (files)' },
      // an event naming a checkpoint that is no safety checkpoint: not folded, nor offered
      { ...ev('e9', 'e8', 'rewind', { checkpoint: 'cp1', safetyCheckpoint: 'cp1' }, 19), summary: 'rewind to “after tests” (files)' },
    ];
    const all = [
      ...checkpoints,
      safety('sf1', 'e5', 15, 'before rewind to “after tests”'),
      safety('sf2', 'e7', 17, 'before undo of rewind to “after tests”', 'undo'),
    ];
    const nodes = eventNodes({
      folder: FOLDER,
      sessionId: 's1',
      result: { events: withOps, head: 'e9', total: withOps.length, offset: 0 },
      checkpoints: all,
      now: NOW,
    });
    assert.deepEqual(
      nodes.map((n) => n.label),
      [
        'Prompt: make the tests pass',
        'Tool: Bash(pytest)',
        'Result (no output)',
        'after tests',
        'Rewind to “after tests” (files)',
        'Undo of rewind to “after tests” (files)',
        'Rewind to “after tests” (files)',
      ],
    );
    const undo = byEvent(nodes, 'e8');
    assert.deepEqual(undo.contextValue.split(' '), ['event', 'beforeSaved']);
    assert.equal(undo.checkpoint?.id, 'sf2', "its one-click action goes to the state it saved");
    assert.equal(undo.checkpoint.title, 'before undo of rewind to “after tests”');
    assert.equal(undo.collapsible, 'collapsed');
    assert.equal(undo.safety?.type, 'checkpoint');
    assert.equal(undo.safety.label, 'before undo of rewind to “after tests”');
    assert.equal(undo.safety.parentKey, undo.key);
    assert.ok((undo.tooltip ?? '').includes('Rewind to the State Before This'), undo.tooltip);
    assert.equal(byEvent(nodes, 'e6').safety?.checkpoint.id, 'sf1');
    const odd = byEvent(nodes, 'e9');
    assert.equal(odd.safety, undefined);
    assert.ok(!odd.contextValue.includes('beforeSaved'), odd.contextValue);
    // each safety checkpoint once: inside its operation's row, not again among the session's
    assert.equal(nodes.filter((n) => n.type === 'checkpoint').length, 0);
  });

  it('says so when a session has no events', () => {
    const nodes = eventNodes({
      folder: FOLDER,
      sessionId: 's1',
      result: { events: [], head: null, total: 0, offset: 0 },
      checkpoints: [],
      now: NOW,
    });
    assert.deepEqual(
      nodes.map((n) => n.label),
      ['No events in this session'],
    );
  });
});

describe('placeEvents', () => {
  it('continues a lane with the first child and opens a lane for each later one', () => {
    const p = placeEvents(
      [ev('a', null, 'x'), ev('b', 'a', 'x'), ev('c', 'a', 'x'), ev('d', 'a', 'x'), ev('e', 'c', 'x'), ev('r', null, 'x')],
      'e',
    );
    const lanes = Object.fromEntries([...p].map(([id, pl]) => [id, pl.lane]));
    assert.deepEqual(lanes, { a: 1, b: 1, c: 2, d: 3, e: 2, r: 4 });
    assert.equal(p.get('a')?.children, 3);
    assert.equal(p.get('r')?.branchStart, true, 'a second root is a line of its own');
    assert.deepEqual(
      [...p].filter(([, pl]) => pl.onHeadPath === true).map(([id]) => id),
      ['a', 'c', 'e'],
    );
  });

  it('continues the first line from a parent before the window, and still branches after it', () => {
    const p = placeEvents([ev('c', 'b', 'x'), ev('d', 'c', 'x'), ev('e', 'c', 'x')], 'e');
    assert.deepEqual(
      [...p].map(([id, pl]) => [id, pl.lane, pl.branchStart]),
      [
        ['c', 1, false],
        ['d', 1, false],
        ['e', 2, true],
      ],
    );
  });

  it('does not guess the current branch when the head is not loaded', () => {
    const p = placeEvents([ev('a', null, 'x'), ev('b', 'a', 'x')], 'zzz');
    assert.equal(p.get('a')?.onHeadPath, undefined);
  });

  it('survives a cycle in bad data', () => {
    const p = placeEvents([ev('a', 'b', 'x'), ev('b', 'a', 'x')], 'b');
    assert.equal(p.size, 2);
  });
});

describe('checkpoint refs', () => {
  it('orders by time across sessions to find the previous checkpoint', () => {
    const refs = checkpointRefs([
      cp('c3', null, '2026-11-21T10:03:00Z', 'three'),
      cp('c1', null, '2026-11-21T10:01:00Z', 'one', 'other'),
      cp('c2', null, '2026-11-21T10:02:00Z', ''),
    ]);
    assert.equal(refs.get('c1')?.previous, undefined);
    assert.deepEqual(refs.get('c2')?.previous, { id: 'c1', title: 'one' });
    assert.deepEqual(refs.get('c3')?.previous, { id: 'c2', title: 'checkpoint c2' });
  });

  it("compares a pulled checkpoint with its own machine's previous one", () => {
    const pulled = (id: string, ts: string): Checkpoint => ({ ...cp(id, null, ts, id, 's9@m'), origin: 'laptop-0123abcd' });
    const refs = checkpointRefs([
      pulled('p1', '2026-11-21T10:00:00Z'),
      cp('c1', null, '2026-11-21T10:01:00Z', 'mine'),
      pulled('p2', '2026-11-21T10:02:00Z'),
      cp('c2', null, '2026-11-21T10:03:00Z', 'mine too'),
    ]);
    assert.deepEqual(refs.get('p2')?.previous, { id: 'p1', title: 'p1' });
    assert.equal(refs.get('p2')?.origin, 'laptop-0123abcd');
    assert.equal(refs.get('c1')?.previous, undefined);
    assert.deepEqual(refs.get('c2')?.previous, { id: 'c1', title: 'mine' });
    assert.equal(refs.get('c2')?.origin, undefined);
  });
});

describe('changed files of a checkpoint', () => {
  const parent = (previous?: { id: string; title: string }): CheckpointBearing => ({
    type: 'checkpoint',
    key: 'c|f|cp2',
    folder: FOLDER,
    checkpoint: { id: 'cp2', title: 'after tests', previous, files: 12 },
    label: 'after tests',
    contextValue: 'checkpoint',
    collapsible: 'collapsed',
  });
  const change = (path: string, status: Change['status'], extra: Partial<Change> = {}): Change => ({
    path,
    status,
    binary: false,
    linesAdded: 3,
    linesRemoved: 1,
    ...extra,
  });

  it('lists files sorted by path with status, lines and decorations tags', () => {
    const nodes = changeNodes(parent({ id: 'cp1', title: 'start' }), [
      change('src/b.py', 'modified'),
      change('README.md', 'added', { linesAdded: 1200, linesRemoved: 0 }),
      change('img/logo.png', 'deleted', { binary: true }),
    ]) as ChangeNode[];
    assert.deepEqual(
      nodes.map((n) => [n.label, n.description, n.contextValue]),
      [
        ['README.md', '+1,200 −0', 'change added'],
        ['logo.png', 'img · binary', 'change deleted binary'],
        ['b.py', 'src · +3 −1', 'change modified'],
      ],
    );
    assert.equal(nodes[2]?.path, 'src/b.py');
    assert.equal(nodes[2].checkpoint.id, 'cp2');
    assert.equal(nodes[2].key, 'c|f|cp2|p|src/b.py');
    assert.equal(nodes[2].parentKey, 'c|f|cp2');
  });

  it('shows a hostile path in its tooltip as text, never as a link or an image', () => {
    const beacon = 'x` ![](https:/evil.example/b.png) `';
    const nodes = changeNodes(parent({ id: 'cp1', title: 'start' }), [
      change(`${beacon}/y.py`, 'added'),
      change('z\n\n[a](https:/evil.example).py', 'added'),
    ]) as ChangeNode[];
    for (const n of nodes) {
      assert.deepEqual(liveLinks(n.tooltip ?? ''), [], n.tooltip);
    }
  });

  it('labels a file named with a bidi override or a line break by escapes', () => {
    const nodes = changeNodes(parent({ id: 'cp1', title: 'start' }), [change('docs\u202e/invoice\u202efdp.exe\nx', 'added')]) as ChangeNode[];
    assert.equal(nodes[0]?.label, 'invoice\\u202efdp.exe\\u000ax');
    assert.equal(nodes[0].description, 'docs\\u202e · +3 −1');
    assert.equal(nodes[0].path, 'docs\u202e/invoice\u202efdp.exe\nx'); // what the commands use, as it is
  });

  it('says the first checkpoint has nothing to compare with', () => {
    const nodes = changeNodes(parent(undefined), undefined);
    assert.equal(nodes.length, 1);
    assert.equal(nodes[0]?.label, 'First checkpoint: 12 files');
  });

  it('says when nothing changed', () => {
    const nodes = changeNodes(parent({ id: 'cp1', title: 'start' }), []);
    assert.equal(nodes[0]?.label, 'No files changed');
    assert.equal(nodes[0].description, 'same as start');
  });

  it('caps very long lists and says how many are left out', () => {
    const many = Array.from({ length: 7 }, (_, i) => change(`f${String(i)}.txt`, 'modified'));
    const nodes = changeNodes(parent({ id: 'cp1', title: 'start' }), many, 5);
    assert.equal(nodes.length, 6);
    assert.equal(nodes[5]?.label, '… and 2 more changed files');
  });
});
