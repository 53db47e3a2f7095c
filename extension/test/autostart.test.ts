import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { type AutostartInput, autostart, followsAnyAgent } from '../src/autostart';
import { repoRoot } from './repo';

const base: AutostartInput = { folders: 1, trusted: true, hasStore: false, followAgents: undefined };

describe('starting the server without a click', () => {
  it('starts in a trusted folder with no store: agents are followed by default', () => {
    assert.equal(autostart(base).start, true);
    assert.equal(autostart({ ...base, followAgents: { codex: false } }).start, true);
  });

  it('does not start in an untrusted folder without a store: nothing is read', () => {
    const d = autostart({ ...base, trusted: false });
    assert.equal(d.start, false);
    assert.match(d.why, /not trusted/);
  });

  it('does not start with followAgents off and no store', () => {
    const d = autostart({ ...base, followAgents: false });
    assert.equal(d.start, false);
    assert.match(d.why, /followAgents is off/);
  });

  it('starts with a store, trusted or not (an untrusted one is browsed)', () => {
    assert.equal(autostart({ ...base, hasStore: true, trusted: false }).start, true);
    assert.equal(autostart({ ...base, hasStore: true, followAgents: false }).start, true);
  });

  it('does not start with no folder open', () => {
    assert.equal(autostart({ ...base, folders: 0, hasStore: true }).start, false);
  });

  it('reads followAgents as the server does: a wrong type is the default (on)', () => {
    assert.equal(followsAnyAgent(false), false);
    assert.equal(followsAnyAgent(true), true);
    assert.equal(followsAnyAgent('no'), true);
    assert.equal(followsAnyAgent(undefined), true);
  });

  it('activates in every window once start-up has finished', () => {
    const manifest = JSON.parse(readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')) as {
      activationEvents: string[];
      capabilities: { untrustedWorkspaces: { supported: unknown } };
    };
    assert.ok(manifest.activationEvents.includes('onStartupFinished'));
    assert.ok(!manifest.activationEvents.includes('*'), '"*" would slow every window\'s start-up');
    assert.equal(manifest.capabilities.untrustedWorkspaces.supported, 'limited');
  });
});
