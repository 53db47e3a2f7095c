/**
 * package.json (the extension manifest) against the code: every command in a
 * menu exists and is registered, menus match the context values the tree
 * model produces, settings are described, versions are pinned.
 */

import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { repoRoot } from './repo';

interface Command {
  command: string;
  title: string;
  category?: string;
}
interface MenuItem {
  command: string;
  when?: string;
  group?: string;
}
interface Manifest {
  main: string;
  engines: { vscode: string };
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  capabilities: { untrustedWorkspaces: { supported: string | boolean; restrictedConfigurations?: string[] } };
  contributes: {
    commands: Command[];
    menus: Record<string, MenuItem[]>;
    views: Record<string, { id: string }[]>;
    viewsContainers: { activitybar: { id: string; title: string }[] };
    configuration: { properties: Record<string, { type?: unknown; default?: unknown; markdownDescription?: string; description?: string }> };
  };
}

const root = repoRoot();
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as Manifest;
const commandsSource = readFileSync(path.join(root, 'extension', 'src', 'commands', 'index.ts'), 'utf8');
const declared = new Set(manifest.contributes.commands.map((c) => c.command));

describe('extension manifest', () => {
  it('declares every command it registers, and registers every command it declares', () => {
    const registered = new Set([...commandsSource.matchAll(/'(turnback\.[A-Za-z]+)':/g)].map((m) => m[1] ?? ''));
    assert.ok(registered.size >= 15, `found ${String(registered.size)} registered commands`);
    assert.deepEqual([...registered].sort(), [...declared].sort());
  });

  it('puts every command in the "Turnback" category', () => {
    for (const c of manifest.contributes.commands) {
      assert.equal(c.category, 'Turnback', c.command);
      assert.ok(c.title.length > 0, c.command);
    }
  });

  it('has the palette commands the issue names', () => {
    const titles = new Map(manifest.contributes.commands.map((c) => [c.title, c.command]));
    for (const t of [
      'Create Checkpoint',
      'Rewind to Checkpoint…',
      'Undo Rewind',
      'Show Session…',
      'Import Sessions…',
      'Search Sessions…',
      'Collect Garbage',
      'Restart Server',
      'Open Store Folder',
    ]) {
      const id = titles.get(t);
      assert.ok(id !== undefined, t);
      const hidden = manifest.contributes.menus.commandPalette?.find((m) => m.command === id && m.when === 'false');
      assert.equal(hidden, undefined, `${t} is in the palette`);
    }
  });

  it('only uses declared commands in menus', () => {
    for (const [menu, items] of Object.entries(manifest.contributes.menus)) {
      for (const item of items) {
        assert.ok(declared.has(item.command), `${menu}: ${item.command}`);
      }
    }
  });

  it('has the view and container the docs name', () => {
    assert.deepEqual(manifest.contributes.viewsContainers.activitybar.map((c) => [c.id, c.title]), [['turnback', 'Turnback']]);
    assert.deepEqual(manifest.contributes.views.turnback?.map((v) => v.id), ['turnback.sessions', 'turnback.fileHistory']);
    assert.match(commandsSource, /VIEW_ID = 'turnback\.sessions'/);
  });

  it('describes every setting, with a type and a default', () => {
    const props = manifest.contributes.configuration.properties;
    for (const name of ['python', 'storePath', 'autoCheckpoint', 'ignores', 'sizeCapBytes', 'retention.keepLast']) {
      assert.ok(`turnback.${name}` in props, name);
    }
    for (const [name, p] of Object.entries(props)) {
      assert.match(name, /^turnback\./);
      assert.ok((p.markdownDescription ?? p.description ?? '').length > 20, `${name} is described`);
      assert.ok(p.type !== undefined && 'default' in p, `${name} has a type and a default`);
    }
  });

  it('is limited in untrusted workspaces, and rewinding needs trust', () => {
    const u = manifest.capabilities.untrustedWorkspaces;
    assert.equal(u.supported, 'limited');
    assert.deepEqual(u.restrictedConfigurations, ['turnback.python', 'turnback.storePath']);
    const inline = manifest.contributes.menus['view/item/context'] ?? [];
    for (const item of inline.filter((i) => ['turnback.rewindHere', 'turnback.rewindBefore', 'turnback.restoreFile', 'turnback.fork'].includes(i.command))) {
      assert.match(item.when ?? '', /isWorkspaceTrusted/, item.command);
    }
  });

  it('pins every dependency to an exact version', () => {
    for (const [name, version] of Object.entries({ ...manifest.dependencies, ...manifest.devDependencies })) {
      assert.match(version, /^\d+\.\d+\.\d+$/, `${name}@${version}`);
    }
  });

  it('keeps @types/vscode within the engine it declares', () => {
    const engine = /^\^(\d+)\.(\d+)/.exec(manifest.engines.vscode);
    const types = /^(\d+)\.(\d+)/.exec(manifest.devDependencies['@types/vscode'] ?? '');
    assert.ok(engine && types);
    assert.ok(Number(types[2]) <= Number(engine[2]) && types[1] === engine[1]);
  });
});

describe('tree menus against model context values', () => {
  const items = manifest.contributes.menus['view/item/context'] ?? [];

  /** Whether the `viewItem =~ /re/` clause of an entry accepts a context value. */
  function shows(command: string, contextValue: string, group: RegExp): boolean {
    return items
      .filter((i) => i.command === command && group.test(i.group ?? ''))
      .some((i) => {
        const m = /viewItem =~ \/(.+?)\/(?: |$)/.exec(i.when ?? '');
        assert.ok(m, `${command} has a viewItem clause`);
        return new RegExp(m[1] ?? '').test(contextValue);
      });
  }

  const inline = /^inline/;
  it('offers Rewind to Here inline on checkpoints only', () => {
    assert.ok(shows('turnback.rewindHere', 'event checkpoint head', inline));
    assert.ok(shows('turnback.rewindHere', 'checkpoint', inline));
    assert.ok(!shows('turnback.rewindHere', 'event head', inline));
    assert.ok(!shows('turnback.rewindHere', 'change modified', inline));
  });

  it('offers Compare with Now on checkpoints and changed files, Restore on files only', () => {
    assert.ok(shows('turnback.compareWithNow', 'event checkpoint', inline));
    assert.ok(shows('turnback.compareWithNow', 'change deleted binary', inline));
    assert.ok(shows('turnback.restoreFile', 'change added', inline));
    assert.ok(!shows('turnback.restoreFile', 'event checkpoint', inline));
    assert.ok(!shows('turnback.compareWithNow', 'session', inline));
  });

  it("offers Forget Pushed Session on this machine's sessions, not on pulled ones", () => {
    assert.ok(shows('turnback.forgetPushedSession', 'session', /.*/));
    assert.ok(!shows('turnback.forgetPushedSession', 'session pulled', /.*/));
    assert.ok(!shows('turnback.forgetPushedSession', 'event', /.*/));
    assert.ok(!shows('turnback.forgetPushedSession', 'folder', /.*/));
  });

  it("offers one inline action on a turn row, so that a selected row keeps its time in sight", () => {
    // two icons (rewind, compare) took the room of a selected turn row's description
    const turn = 'turn rewindable comparable continuable';
    const onTurn = items.filter((i) => (i.group ?? '').startsWith('inline') && shows(i.command, turn, inline));
    assert.deepEqual(onTurn.map((i) => i.command), ['turnback.rewindTurn']);
    assert.ok(shows('turnback.compareTurn', turn, /^2_compare/), 'Compare This Turn in the context menu');
  });

  it("offers Rewind to the State Before This on a rewind's or an undo's row that holds its safety checkpoint", () => {
    for (const row of ['event beforeSaved', 'event head beforeSaved', 'step rewind beforeSaved']) {
      assert.ok(shows('turnback.rewindBefore', row, inline), row);
      assert.ok(shows('turnback.rewindBefore', row, /^1_rewind/), row);
      assert.ok(!shows('turnback.rewindHere', row, inline), `${row}: one rewind icon, the clear one`);
    }
    assert.ok(!shows('turnback.rewindBefore', 'event', inline));
    assert.ok(!shows('turnback.rewindBefore', 'step rewind', inline));
  });

  it('offers Fork Here on every event, in the context menu', () => {
    assert.ok(shows('turnback.fork', 'event', /.*/));
    assert.ok(shows('turnback.fork', 'event checkpoint offBranch', /.*/));
    assert.ok(!shows('turnback.fork', 'session', /.*/));
  });
});
