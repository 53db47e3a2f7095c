import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { type ConfigReader, pageSize, serverSettings } from '../src/settings';

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
