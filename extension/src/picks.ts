/**
 * Quick-pick items built from store data (session titles, agents, checkpoint labels, file
 * names, hook notes). VS Code renders `$(name)` in a quick pick's label, description and
 * detail as an icon, so every such text passes `noIcons` (and `visible` or `oneLine`). Pure,
 * so each item is unit-tested.
 */

import { countOf, formatAge, noIcons, oneLine, pickText } from './format';
import type { Checkpoint, HookState, SessionInfo } from './protocol';
import { sessionTitle } from './tree/labels';
import type { CheckpointRef } from './tree/model';

/** The shape of `vscode.QuickPickItem` these items fill (without importing VS Code). */
export interface PickItem {
  label: string;
  description?: string;
  detail?: string;
  picked?: boolean;
}

/** A session: its title, agent and age, its counts and id. */
export function sessionItem(s: SessionInfo, now: number): PickItem & { session: SessionInfo } {
  const stats = s.stats;
  const counts =
    s.counted === false
      ? 'still being counted' // a partial answer's header line: no count is known yet
      : stats !== undefined && stats !== null
        ? `${countOf(stats.prompts ?? 0, 'prompt')} · ${countOf(stats.toolCalls ?? 0, 'tool call')} · ${countOf(
            stats.checkpoints ?? 0,
            'checkpoint',
          )}`
        : undefined;
  const id = pickText(s.id);
  return {
    label: noIcons(sessionTitle(s)),
    description: noIcons(`${oneLine(s.agent, 40)} · ${formatAge(s.startedAt, now)}`),
    detail: counts !== undefined ? `${counts} · ${id}` : id,
    session: s,
  };
}

/** A checkpoint to rewind to: its title (`checkpointRefs`), its age, its id. */
export function checkpointItem(cp: Checkpoint, ref: CheckpointRef, now: number): PickItem & { ref: CheckpointRef } {
  return {
    label: pickText(ref.title),
    description: `${formatAge(cp.ts, now)}${cp.auto ? ' · automatic' : ''}`,
    detail: pickText(cp.id),
    ref,
  };
}

/** A changed file of Compare with Now's fallback pick (VS Code without the multi-file diff). */
export function changedFileItem(relativePath: string): PickItem {
  return { label: pickText(relativePath) };
}

/** An agent's hooks: the agent, the file they live in, installed or why not. */
export function hookItem(h: HookState, install: boolean): PickItem & { agent: string } {
  return {
    label: pickText(h.agent),
    description: pickText(h.file),
    detail: h.installed ? 'installed' : h.note ? noIcons(oneLine(h.note, 200)) : 'not installed',
    picked: install ? !h.installed : h.installed,
    agent: h.agent, // what is asked of the server: the name as it came, not as shown
  };
}
