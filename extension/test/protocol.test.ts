/**
 * The method names of extension/src/protocol.ts and server/turnback/server/rpc/methods.py
 * must agree: a rename on one side alone would break every client silently.
 */

import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { AGENT_SOURCES, Fields, IMPORT_SOURCES, Methods, NOTIFICATIONS, Notifications, REQUESTS, SafetyOps } from '../src/protocol';
import { repoRoot } from './repo';

interface PythonMethods {
  constants: Map<string, string>;
  requests: string[];
  notifications: string[];
}

/** Reads NAME = "turnback/…" constants and the REQUESTS / NOTIFICATIONS tuples. */
function parseMethodsPy(source: string): PythonMethods {
  const constants = new Map<string, string>();
  for (const m of source.matchAll(/^([A-Z][A-Z0-9_]*)\s*=\s*"([^"]+)"\s*$/gm)) {
    constants.set(m[1] ?? '', m[2] ?? '');
  }
  const tuple = (name: string): string[] => {
    const m = new RegExp(`^${name}\\s*=\\s*\\(([^)]*)\\)`, 'm').exec(source);
    assert.ok(m, `methods.py defines ${name} = (…)`);
    return (m[1] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0)
      .map((ident) => {
        const value = constants.get(ident);
        assert.ok(value !== undefined, `${name} names ${ident}, which methods.py defines`);
        return value;
      });
  };
  return { constants, requests: tuple('REQUESTS'), notifications: tuple('NOTIFICATIONS') };
}

/** CREATE_CHECKPOINT → createCheckpoint, the key protocol.ts uses. */
function camel(constant: string): string {
  return constant.toLowerCase().replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

const py = parseMethodsPy(
  readFileSync(path.join(repoRoot(), 'server', 'turnback', 'server', 'rpc', 'methods.py'), 'utf8'),
);

describe('protocol constants against methods.py', () => {
  it('parses a non-trivial list from methods.py', () => {
    assert.ok(py.requests.length >= 12, `found ${String(py.requests.length)} requests`);
    assert.deepEqual(py.notifications, ['turnback/didChange']);
  });

  it("names an answer's fields and the safety operations as methods.py does", () => {
    for (const [key, value] of [...Object.entries(Fields), ...Object.entries(SafetyOps)]) {
      const constant = [...py.constants.keys()].find((k) => camel(k) === key);
      assert.ok(constant !== undefined, `methods.py has no constant for ${key}`);
      assert.equal(py.constants.get(constant), value, constant);
    }
  });

  it('has the same request names', () => {
    assert.deepEqual([...REQUESTS].sort(), [...py.requests].sort());
  });

  it('has the same notification names', () => {
    assert.deepEqual([...NOTIFICATIONS].sort(), [...py.notifications].sort());
  });

  it('keys each name like its Python constant', () => {
    const all: Record<string, string> = { ...Methods, ...Notifications, ...Fields, ...SafetyOps };
    for (const [constant, value] of py.constants) {
      assert.equal(all[camel(constant)], value, `${constant} = "${value}" is Methods.${camel(constant)}`);
    }
    assert.equal(Object.keys(all).length, py.constants.size);
  });

  it('uses the turnback/ prefix and camelCase throughout', () => {
    for (const name of [...REQUESTS, ...NOTIFICATIONS]) {
      assert.match(name, /^turnback\/[a-z][A-Za-z]*$/);
    }
  });
});

describe('import sources', () => {
  it("name the server's registry's sources, its agents (found where they keep sessions) first", () => {
    const source = readFileSync(path.join(repoRoot(), 'server/turnback/importers/registry.py'), 'utf8');
    const entries = source.split(/^\s*Source\(/m).slice(1);
    const names = entries.map((e) => /^"([^"]+)"/.exec(e)?.[1] ?? '');
    // each entry runs to the next "Source(": the last one's tail holds no "agent=True"
    const agents = entries.filter((e) => /\bagent=True\b/.test(e)).map((e) => /^"([^"]+)"/.exec(e)?.[1] ?? '');
    assert.deepEqual([...IMPORT_SOURCES], names);
    assert.deepEqual([...AGENT_SOURCES], agents);
  });
});
