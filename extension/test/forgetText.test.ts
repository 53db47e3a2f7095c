import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { forgetConfirmation, forgetSummary } from '../src/forgetText';
import type { PushHistoryResult } from '../src/protocol';

describe('forget pushed session confirmation', () => {
  it("names the session and says what git's history means for it", () => {
    const c = forgetConfirmation('Fix the app', '20261122T101500-a1b2c3');
    assert.equal(c.message, 'Forget “Fix the app” on the history remote?');
    assert.equal(c.action, 'Forget and Push');
    assert.match(c.detail, /Session 20261122T101500-a1b2c3 will never be pushed again/);
    assert.match(c.detail, /replaces this machine's history on the remote/);
    assert.match(c.detail, /This store keeps the session/);
    assert.match(c.detail, /until it collects garbage/);
    assert.match(c.detail, /anyone who already pulled it keeps a copy/);
    assert.match(c.detail, /rotate it/);
  });

  it('says what the remote holds after the push', () => {
    const r: PushHistoryResult = {
      url: '/srv/history.git',
      ref: 'refs/turnback/laptop-0123abcd',
      machine: 'laptop-0123abcd',
      sessions: 3,
      checkpoints: 1,
      newCheckpoints: 1,
      objects: 12,
      bytes: 2048,
      upToDate: false,
      dryRun: false,
      replaces: true,
      forgotten: ['20261122T101500-a1b2c3'],
      redactions: [],
    };
    assert.equal(
      forgetSummary('Fix the app', r),
      '“Fix the app” forgotten: refs/turnback/laptop-0123abcd at /srv/history.git now holds 3 sessions and 1 checkpoint without it.',
    );
    assert.match(forgetSummary('Fix the app', { ...r, upToDate: true }), /will not be pushed again/);
  });
});
