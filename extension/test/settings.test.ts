import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { type ConfigReader, pageSize, rowLabelWidth, serverSettings } from '../src/settings';
import { ROW_LABEL_WIDTH, rowLabel, setRowLabelWidth } from '../src/tree/labels';

function reader(values: Record<string, unknown>): ConfigReader {
  return { get: (key) => values[key] };
}

describe('server settings', () => {
  it('passes the turnback.* settings under the names the server reads', () => {
    const s = serverSettings(
      reader({
        storePath: ' ../history ',
        autoCheckpoint: false,
        followAgents: true,
        watch: false,
        ignores: ['*.log', 7, ''],
        sizeCapBytes: 1048576,
        retention: { keepLast: 20, keepDays: 7.5, quotaBytes: 1e9 },
      }),
      true,
    );
    assert.deepEqual(s, {
      storePath: '../history',
      autoCheckpoint: false,
      followAgents: true,
      watch: false,
      ignores: ['*.log'],
      sizeCapBytes: 1048576,
      retention: { keepLast: 20, keepDays: 7.5, quotaBytes: 1e9 },
      readOnly: false,
    });
  });

  it('uses defaults for unset or mistyped values', () => {
    assert.deepEqual(serverSettings(reader({ sizeCapBytes: 0, retention: 'x', autoCheckpoint: 'yes' }), true), {
      storePath: null,
      autoCheckpoint: true,
      followAgents: true,
      watch: true,
      ignores: [],
      sizeCapBytes: null,
      retention: { keepLast: null, keepDays: null, quotaBytes: null },
      readOnly: false,
    });
  });

  it('never lets an untrusted workspace write', () => {
    const s = serverSettings(reader({ autoCheckpoint: true, followAgents: true }), false);
    assert.equal(s.autoCheckpoint, false);
    assert.equal(s.followAgents, false);
    assert.equal(s.readOnly, true);
  });

  it('passes followAgents per agent, dropping values that are not booleans', () => {
    const s = serverSettings(reader({ followAgents: { codex: false, aider: 'no', 'claude-code': true } }), true);
    assert.deepEqual(s.followAgents, { codex: false, 'claude-code': true });
    assert.equal(serverSettings(reader({ followAgents: { codex: false } }), false).followAgents, false);
  });

  it('clamps the page size', () => {
    assert.equal(pageSize(reader({})), 200);
    assert.equal(pageSize(reader({ pageSize: 3 })), 10);
    assert.equal(pageSize(reader({ pageSize: 1e9 })), 5000);
    assert.equal(pageSize(reader({ pageSize: 55.7 })), 55);
  });
});

describe('row label width', () => {
  it("cuts rows at turnback.rowLabelWidth, clamped, for a sidebar wider than the default", () => {
    // VS Code gives a tree no width: a wide sidebar showed 44 characters of a prompt all the same
    assert.equal(rowLabelWidth(reader({}), ROW_LABEL_WIDTH), 44);
    assert.equal(rowLabelWidth(reader({ rowLabelWidth: 'wide' }), ROW_LABEL_WIDTH), 44);
    assert.equal(rowLabelWidth(reader({ rowLabelWidth: 5 }), ROW_LABEL_WIDTH), 20);
    assert.equal(rowLabelWidth(reader({ rowLabelWidth: 1e6 }), ROW_LABEL_WIDTH), 200);
    const prompt = 'Add a farewell(name) next to greet() with a test, and wire it into the CLI as bye.';
    try {
      setRowLabelWidth(rowLabelWidth(reader({ rowLabelWidth: 90 }), ROW_LABEL_WIDTH));
      assert.equal(rowLabel(prompt), prompt);
      setRowLabelWidth(ROW_LABEL_WIDTH);
      assert.equal(rowLabel(prompt), 'Add a farewell(name) next to greet() with a…');
    } finally {
      setRowLabelWidth(ROW_LABEL_WIDTH);
    }
  });
});
