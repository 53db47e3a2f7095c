import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { noIcons, pickText } from '../src/format';
import { changedFileItem, checkpointItem, hookItem, sessionItem } from '../src/picks';
import type { Checkpoint, SessionInfo } from '../src/protocol';
import { checkpointRefs } from '../src/tree/model';
import { repoRoot } from './repo';

// VS Code's own pattern (base/common/iconLabels.ts): a `$(name)` not preceded by a backslash
// renders as an icon in a quick pick's label, description and detail
const RENDERED_ICON = /(?<!\\)\$\([A-Za-z0-9-]+(?:~[A-Za-z]+)?\)/;

function noneRendered(item: { label: string; description?: string; detail?: string }): void {
  for (const text of [item.label, item.description ?? '', item.detail ?? '']) {
    assert.doesNotMatch(text, RENDERED_ICON, text);
  }
}

// the setter, an options object's key, or MarkdownString's second argument
const TURNS_ICONS_ON = /\.supportThemeIcons\s*=|supportThemeIcons\s*:|MarkdownString\([^)]*,\s*true\s*\)/;

const NOW = Date.parse('2026-11-28T08:00:00Z');

describe('quick-pick items from store data render no icons', () => {
  it('escapes each $(name) with one backslash, which VS Code takes away', () => {
    assert.equal(noIcons('$(check) tests pass'), '\\$(check) tests pass');
    assert.equal(noIcons('a $(sync~spin) b $(x-y)'), 'a \\$(sync~spin) b \\$(x-y)');
    assert.equal(noIcons('\\$(x)'), '\\\\$(x)', 'a backslash already there stays visible');
    assert.equal(noIcons('$(not an icon) costs $(5'), '$(not an icon) costs $(5', 'no icon there: untouched');
    assert.equal(pickText('$(alert)\u202e.txt'), '\\$(alert)\\u202e.txt');
  });

  it('a session: its title, agent and id', () => {
    const s: SessionInfo = {
      id: 'ses-$(key)',
      title: '$(check) all tests pass',
      agent: '$(hubot)',
      startedAt: '2026-11-28T07:00:00Z',
      endedAt: null,
      stats: { prompts: 1, toolCalls: 2, checkpoints: 3 },
    };
    const item = sessionItem(s, NOW);
    noneRendered(item);
    assert.equal(item.label, '\\$(check) all tests pass');
    assert.equal(item.session, s);
    noneRendered(sessionItem({ ...s, title: '', stats: null }, NOW));
  });

  it("Rewind to Checkpoint's pick: a checkpoint's label and id", () => {
    const cp: Checkpoint = {
      id: 'cp-$(trash)',
      label: '$(warning) before $(shield) the refactoring',
      ts: '2026-11-28T07:30:00Z',
      sessionId: null,
      eventId: null,
      auto: false,
      partial: false,
    };
    const ref = checkpointRefs([cp]).get(cp.id);
    assert.ok(ref);
    const item = checkpointItem(cp, ref, NOW);
    noneRendered(item);
    assert.equal(item.ref, ref);
  });

  it("Compare with Now's fallback pick: a file's name", () => {
    const item = changedFileItem('src/$(error) broken.ts');
    noneRendered(item);
    assert.equal(item.label, 'src/\\$(error) broken.ts');
    assert.equal(changedFileItem('a\nb.txt').label, 'a\\u000ab.txt', 'a line break shown, not taken');
  });

  it("the hooks' pick: shown escaped, asked of the server by its own name", () => {
    const h = { agent: 'x$(bug)', file: '/home/u/$(gear)/settings.json', installed: false, events: {}, note: '$(info) no hook file' };
    const item = hookItem(h, true);
    noneRendered(item);
    assert.equal(item.agent, 'x$(bug)');
    assert.equal(item.picked, true);
  });

  it('no Markdown tooltip renders icons: nothing sets supportThemeIcons on store text', () => {
    // a tooltip built from store text with escapeMarkdown (which escapes `(`, not `$`)
    // rendered `$(name)` as an icon where supportThemeIcons was on (the Sessions view's
    // tooltips, whose own text uses no icon)
    const src = path.join(repoRoot(), 'extension', 'src');
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          walk(full);
        } else if (entry.name.endsWith('.ts') && TURNS_ICONS_ON.test(readFileSync(full, 'utf8'))) {
          offenders.push(path.relative(src, full));
        }
      }
    };
    walk(src);
    assert.deepEqual(offenders, []);
  });
});
