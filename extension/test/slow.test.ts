import * as assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';

import { NOTIFY_AFTER_MS, whenSlow } from '../src/slow';

describe('a progress notification only for a slow task', () => {
  it('shows none for a task that settles first, succeeded or failed', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      let shown = 0;
      const ok = Promise.resolve(1);
      const failed = Promise.reject(new Error('cannot rewind'));
      failed.catch(() => undefined);
      whenSlow(ok, NOTIFY_AFTER_MS, () => (shown += 1));
      whenSlow(failed, NOTIFY_AFTER_MS, () => (shown += 1));
      await ok;
      await failed.catch(() => undefined);
      mock.timers.tick(NOTIFY_AFTER_MS * 10);
      assert.equal(shown, 0);
    } finally {
      mock.timers.reset();
    }
  });

  it('shows one for a task still running when the time is up, and none before', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      let shown = 0;
      let finish: (v: number) => void = () => undefined;
      const running = new Promise<number>((resolve) => (finish = resolve));
      whenSlow(running, NOTIFY_AFTER_MS, () => (shown += 1));
      mock.timers.tick(NOTIFY_AFTER_MS - 1);
      assert.equal(shown, 0);
      mock.timers.tick(1);
      assert.equal(shown, 1);
      finish(1);
      await running;
      mock.timers.tick(NOTIFY_AFTER_MS * 10);
      assert.equal(shown, 1);
    } finally {
      mock.timers.reset();
    }
  });
});
