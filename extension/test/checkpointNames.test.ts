import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { CheckpointNames } from '../src/checkpointNames';
import type { FileVersion, Step } from '../src/protocol';

// ids as the store makes them (64 hex digits); its labels quote the first 12
const TESTS = `ab54a072d588${'1'.repeat(52)}`;
const SAFETY = `325c5f935905${'2'.repeat(52)}`;
const UNDO = `3299e910a888${'3'.repeat(52)}`;
const REDO = `4411aa22bb33${'4'.repeat(52)}`;
const all = [
  { id: TESTS, label: 'Tests pass' },
  { id: SAFETY, label: 'before rewind to ab54a072d588' },
  { id: UNDO, label: 'before undo to 325c5f935905' },
];

describe('checkpoint ids in store text', () => {
  const names = new CheckpointNames(all);

  it("names a rewind's safety checkpoint by the checkpoint it rewound to, not its id", () => {
    assert.equal(names.name('before rewind to ab54a072d588'), 'before rewind to “Tests pass”');
    assert.equal(names.name('rewind to ab54a072d588 (files)'), 'rewind to “Tests pass” (files)');
  });

  it("names an undo's through the safety checkpoint it went back to", () => {
    assert.equal(names.name('before undo to 325c5f935905'), 'before undo to “before rewind to “Tests pass””');
  });

  it('leaves an unknown, ambiguous or non-id word as it is, and stops at a cycle', () => {
    assert.equal(names.name('rewind to 0123456789ab (files)'), 'rewind to 0123456789ab (files)');
    assert.equal(names.name('fix deadbeef and cafe'), 'fix deadbeef and cafe');
    const twins = new CheckpointNames([
      { id: `aaaaaaaaaaaa${'1'.repeat(52)}`, label: 'one' },
      { id: `aaaaaaaaaaaa${'2'.repeat(52)}`, label: 'two' },
    ]);
    assert.equal(twins.name('before rewind to aaaaaaaaaaaa'), 'before rewind to aaaaaaaaaaaa');
    const loop = new CheckpointNames([{ id: `bbbbbbbbbbbb${'1'.repeat(52)}`, label: 'before undo to bbbbbbbbbbbb' }]);
    assert.match(loop.name('before undo to bbbbbbbbbbbb'), /^before undo to “before undo to “before undo to “before undo to bbbbbbbbbbbb”””$/);
  });

  it("reads only the start of a named checkpoint's own label, however many ids it holds", () => {
    const id = `cccccccccccc${'1'.repeat(52)}`;
    const huge = Array.from({ length: 20_000 }, () => 'cccccccccccc').join(' ');
    const named = new CheckpointNames([{ id, label: huge }]).name('before rewind to cccccccccccc');
    // one title of at most 80 characters, holding names of its own at most 80 long each
    assert.ok(named.length < 200, named);
    assert.match(named, /^before rewind to ““/);
  });

  it('names ids in checkpoint labels, steps, event summaries and file versions, and keeps the rest', () => {
    assert.equal(names.checkpoint({ id: SAFETY, label: all[1]?.label ?? '' }).label, 'before rewind to “Tests pass”');
    const kept = { id: TESTS, label: 'Tests pass' };
    assert.equal(names.checkpoint(kept), kept);
    const step: Step = { id: 'e1', kind: 'rewind', label: 'rewind to ab54a072d588 (files)', ts: '2026-11-29T03:39:28Z' };
    assert.deepEqual(names.step(step), { ...step, label: 'rewind to “Tests pass” (files)' });
    const event = { id: 'e2', parent: null, ts: step.ts, kind: 'rewind', summary: step.label };
    assert.equal(names.event(event).summary, 'rewind to “Tests pass” (files)');
    const version = {
      checkpoint: { id: UNDO, label: 'before undo to 325c5f935905' },
      previousLabel: 'before rewind to ab54a072d588',
    } as unknown as FileVersion;
    const named = names.version(version);
    assert.equal(named.checkpoint.label, 'before undo to “before rewind to “Tests pass””');
    assert.equal(named.previousLabel, 'before rewind to “Tests pass”');
  });

  it("says a safety checkpoint the server marks in the server's words, never its own", () => {
    const marked = new CheckpointNames([
      { id: TESTS, label: 'Tests pass' },
      {
        id: SAFETY,
        label: 'before rewind to ab54a072d588',
        safetyOf: { op: 'rewind', checkpoint: 'ab54a072d588', words: 'before rewind to “Tests pass”' },
      },
      {
        id: UNDO,
        label: 'before undo to 325c5f935905',
        safetyOf: { op: 'undo', checkpoint: '325c5f935905', words: 'before undo of rewind to “Tests pass”' },
      },
      // a later server's operation and words: shown as sent, no table of words here
      { id: REDO, label: 'before undo to 3299e910a888', safetyOf: { op: 'later', checkpoint: '3299e910a888', words: 'before a later thing' } },
    ]);
    // "before undo to “before rewind to “Tests pass””" before
    assert.equal(marked.checkpoint({ id: UNDO, label: 'before undo to 325c5f935905' }).label, 'before undo of rewind to “Tests pass”');
    assert.equal(marked.checkpoint({ id: REDO, label: 'before undo to 3299e910a888' }).label, 'before a later thing');
    assert.equal(marked.checkpoint({ id: SAFETY, label: 'before rewind to ab54a072d588' }).label, 'before rewind to “Tests pass”');
    // an undo's event, or text naming an undo's safety checkpoint, says its words too
    assert.equal(marked.name('rewind to 3299e910a888 (files)'), 'rewind to “before undo of rewind to “Tests pass”” (files)');
    // a file version whose previous version is an undo's safety checkpoint
    const version = { checkpoint: { id: TESTS, label: 'Tests pass' }, previous: UNDO, previousLabel: 'before undo to 325c5f935905' } as unknown as FileVersion;
    assert.equal(marked.version(version).previousLabel, 'before undo of rewind to “Tests pass”');
    // a file version's checkpoint carries its record's safetyOf, without words: the listed words
    const recorded = {
      checkpoint: { id: UNDO, label: 'before undo to 325c5f935905', safetyOf: { op: 'undo', checkpoint: '325c5f935905' } },
      previous: null,
      previousLabel: null,
    } as unknown as FileVersion;
    assert.equal(marked.version(recorded).checkpoint.label, 'before undo of rewind to “Tests pass”');
  });

  it('names the label of a mark without words, or with words of the wrong shape, and bounds long words', () => {
    const bare = new CheckpointNames([
      { id: TESTS, label: 'Tests pass' },
      { id: SAFETY, label: 'before rewind to ab54a072d588', safetyOf: { op: 'rewind', checkpoint: 'ab54a072d588' } },
      { id: UNDO, label: 'before undo to 325c5f935905', safetyOf: { op: 'undo', checkpoint: '325c5f935905', words: 7 as unknown as string } },
    ]);
    assert.equal(bare.checkpoint({ id: SAFETY, label: 'before rewind to ab54a072d588' }).label, 'before rewind to “Tests pass”');
    assert.equal(bare.checkpoint({ id: UNDO, label: 'before undo to 325c5f935905' }).label, 'before undo to “before rewind to “Tests pass””');
    const long = new CheckpointNames([{ id: TESTS, label: 'x', safetyOf: { op: 'rewind', checkpoint: 'ab54a072d588', words: 'w'.repeat(1_000_000) } }]);
    assert.equal(long.checkpoint({ id: TESTS, label: 'x' }).label.length, 400);
    assert.ok(long.name('rewind to ab54a072d588').length < 120);
  });
});
