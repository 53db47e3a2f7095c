import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
  type BundleManifest,
  type LaunchEnv,
  type LaunchPlan,
  abiTag,
  isSupported,
  parsePythonVersion,
  planLaunch,
  serverEnvironment,
} from '../src/launch';

const ROOT = '/ext';
const py311 = { major: 3, minor: 11 };

function env(files: string[], manifest?: BundleManifest, platform = 'linux-x64'): LaunchEnv {
  const set = new Set(files.map((f) => path.posix.join(ROOT, f)));
  return { extensionRoot: ROOT, exists: (p) => set.has(p), join: (...parts) => path.posix.join(...parts), manifest, platform };
}

/** The reason of a refused plan; fails the test if the plan was not refused. */
function refusal(plan: LaunchPlan): string {
  if (plan.ok) {
    assert.fail(`expected a refusal, got ${JSON.stringify(plan)}`);
  }
  return plan.reason;
}

const manifest: BundleManifest = { pythonVersions: ['3.10', '3.11', '3.12'], platform: 'linux-x64' };
const bundled = ['bundled/tool/turnback', 'bundled/libs/cp311', 'bundled/libs/common'];

describe('python version', () => {
  it('parses the probe output and checks the minimum', () => {
    assert.deepEqual(parsePythonVersion('3.12\n'), { major: 3, minor: 12 });
    assert.equal(parsePythonVersion('Python 3.12'), undefined);
    assert.equal(isSupported({ major: 3, minor: 9 }), false);
    assert.equal(isSupported({ major: 3, minor: 10 }), true);
    assert.equal(isSupported({ major: 4, minor: 0 }), true);
    assert.equal(abiTag({ major: 3, minor: 13 }), 'cp313');
  });
});

describe('planLaunch', () => {
  it('uses the bundled package and the dependencies of that Python version', () => {
    assert.deepEqual(planLaunch(env(bundled, manifest), 'python3', py311), {
      ok: true,
      mode: 'bundled',
      pythonPath: ['/ext/bundled/tool', '/ext/bundled/libs/cp311', '/ext/bundled/libs/common'],
    });
  });

  it('uses the live sources of a checkout, with bundled dependencies if built', () => {
    assert.deepEqual(planLaunch(env(['server/turnback/server']), '.venv/bin/python', py311), {
      ok: true,
      mode: 'development',
      pythonPath: ['/ext/server'],
    });
    assert.deepEqual(planLaunch(env(['server/turnback/server', ...bundled]), 'python3', py311), {
      ok: true,
      mode: 'development',
      pythonPath: ['/ext/server', '/ext/bundled/libs/cp311', '/ext/bundled/libs/common'],
    });
  });

  it('refuses an old Python, naming the setting', () => {
    assert.match(refusal(planLaunch(env(bundled, manifest), '/usr/bin/python3', { major: 3, minor: 8 })), /Python 3\.8; Turnback needs Python 3\.10 or newer.*turnback\.python/);
  });

  it('says which versions the build carries when this one is missing', () => {
    assert.match(refusal(planLaunch(env(bundled, manifest), 'python3.13', { major: 3, minor: 13 })), /Python 3\.10, 3\.11, 3\.12, not for Python 3\.13 \(python3\.13\)/);
  });

  it('says when the build is for another platform', () => {
    assert.match(refusal(planLaunch(env(bundled, manifest, 'darwin-arm64'), 'python3', py311)), /for linux-x64, not darwin-arm64/);
  });

  it('says when the server itself is missing', () => {
    assert.match(refusal(planLaunch(env(['bundled/libs/cp311']), 'python3', py311)), /no Turnback server/);
  });
});

describe('serverEnvironment', () => {
  it('puts the bundled folders first and drops what could shadow them', () => {
    const out = serverEnvironment(
      { PATH: '/usr/bin', PYTHONPATH: '/somewhere/else', PYTHONHOME: '/opt/py', UNSET: undefined },
      ['/ext/bundled/tool', '/ext/bundled/libs/cp311'],
      ':',
    );
    assert.equal(out.PYTHONPATH, '/ext/bundled/tool:/ext/bundled/libs/cp311');
    assert.equal(out.PYTHONHOME, undefined);
    assert.equal(out.PATH, '/usr/bin');
    assert.equal(out.PYTHONNOUSERSITE, '1');
    assert.equal(out.PYTHONUNBUFFERED, '1');
    assert.ok(!('UNSET' in out));
  });
});
