import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { RewindResult } from '../src/protocol';
import { affectedPaths, changesNothing, rewindConfirmation, rewindSummary, rewindToast } from '../src/rewindText';
import { turnTitle } from '../src/tree/turns';

function result(extra: Partial<RewindResult>): RewindResult {
  return { written: [], overwritten: [], created: [], removed: [], safetyCheckpoint: 'safe1', dryRun: true, ...extra };
}

describe('rewind confirmation', () => {
  it('lists what the dry run will overwrite, create and delete', () => {
    const dry = result({
      written: ['a.py', 'b.py', 'new.txt'],
      overwritten: ['a.py', 'b.py'],
      created: ['new.txt'],
      removed: ['junk.log'],
    });
    const c = rewindConfirmation(dry, '“after tests”', 'files');
    assert.equal(c.message, 'Rewind to “after tests” (files)?');
    assert.equal(c.action, 'Rewind');
    assert.equal(
      c.detail,
      [
        'Overwrite 2 files:',
        '  a.py\n  b.py',
        'Create 1 file:',
        '  new.txt',
        'Delete 1 file:',
        '  junk.log',
        '',
        'A safety checkpoint is taken first: Undo Rewind brings the current state back.',
      ].join('\n'),
    );
  });

  it('works out overwritten files from `written` when the server sends no `overwritten`', () => {
    const dry: RewindResult = {
      written: ['a.py', 'new.txt'],
      created: ['new.txt'],
      removed: [],
      safetyCheckpoint: null,
      dryRun: true,
    };
    assert.match(rewindConfirmation(dry, 'x', 'files').detail, /Overwrite 1 file:\n {2}a\.py\nCreate 1 file:\n {2}new\.txt/);
  });

  it('lists a path named with line breaks or a bidi override on one line of its own', () => {
    const planted = 'x\n\nThe files already match; no file changes.\n\u202eelif';
    const c = rewindConfirmation(result({ removed: [planted, 'y.py'] }), 'x', 'files');
    const lines = c.detail.split('\n');
    assert.deepEqual(lines.slice(0, 3), ['Delete 2 files:', '  x\\u000a\\u000aThe files already match; no file changes.\\u000a\\u202eelif', '  y.py']);
    assert.ok(!lines.includes('The files already match; no file changes.'));
  });

  it('cuts long lists', () => {
    const many = Array.from({ length: 30 }, (_, i) => `f${String(i)}`);
    const c = rewindConfirmation(result({ written: many, overwritten: many }), 'x', 'files');
    assert.match(c.detail, /… and 18 more/);
  });

  it('explains conversation rewinds and says when files already match', () => {
    const conv = rewindConfirmation(result({}), '“x”', 'conversation');
    assert.equal(conv.message, 'Rewind to “x” (conversation)?');
    assert.doesNotMatch(conv.detail, /already match/);
    assert.match(conv.detail, /head moves back/);
    const both = rewindConfirmation(result({}), '“x”', 'both');
    assert.match(both.detail, /already match/);
    assert.match(both.detail, /head moves back/);
  });

  it('words restore and undo their own way', () => {
    assert.equal(rewindConfirmation(result({}), 'a.py from “x”', 'files', 'restore').message, 'Restore a.py from “x”?');
    const undo = rewindConfirmation(result({}), 'the last rewind', 'files', 'undo');
    assert.equal(undo.message, 'Undo the last rewind?');
    assert.equal(undo.action, 'Undo Rewind');
  });
});

describe('rewind summary', () => {
  it('counts what happened', () => {
    const r = result({ written: ['a', 'b', 'c'], overwritten: ['a', 'b'], created: ['c'], removed: ['d'], dryRun: false });
    assert.equal(rewindSummary(r, '“after tests”', 'rewind'), 'Rewound to “after tests”: 2 files overwritten, 1 created, 1 deleted.');
    assert.equal(rewindSummary(result({ mode: 'both' }), '“x”', 'rewind'), 'Rewound to “x”: no file changed; session head moved.');
    assert.equal(rewindSummary(r, '', 'undo'), 'Undid the last rewind: 2 files overwritten, 1 created, 1 deleted.');
  });

  it('knows every touched path and when nothing changes', () => {
    const r = result({ written: ['a', 'c'], overwritten: ['a'], created: ['c'], removed: ['d'] });
    assert.deepEqual(affectedPaths(r).sort(), ['a', 'c', 'd']);
    assert.equal(changesNothing(r), false);
    assert.equal(changesNothing(result({})), true);
  });
});

describe('rewind notification', () => {
  const prompt = 'Add a farewell(name) next to greet() with a docstring and a test';
  const r = result({ written: ['a.py'], overwritten: ['a.py'], dryRun: false });

  it('names a long turn by whole words, so that its sentence reads whole', () => {
    // it was cut inside a word: “Add a farewell(name) next to greet() wi…”
    assert.equal(turnTitle(prompt), 'Add a farewell(name) next to greet()…');
    assert.equal(turnTitle('fix it'), 'fix it');
    // one word longer than the width: cut in it, nothing better to do
    assert.equal(turnTitle('x'.repeat(60)), `${'x'.repeat(39)}…`);
    // no dangling punctuation before the ellipsis
    assert.equal(turnTitle('Rename the module and then the tests, every import too'), 'Rename the module and then the tests…');
  });

  it('puts the whole prompt behind Show Details when the title was cut', () => {
    const toast = rewindToast(r, `before “${turnTitle(prompt)}”`, 'rewind', `before “${prompt}”`);
    assert.equal(toast.text, 'Rewound to before “Add a farewell(name) next to greet()…”: 1 file overwritten.');
    assert.equal(toast.detail, `Rewound to before “${prompt}”: 1 file overwritten.`);
    assert.equal(rewindToast(r, '“x”', 'rewind', '“x”').detail, undefined);
    assert.equal(rewindToast(r, '“x”', 'rewind').detail, undefined);
  });
});
