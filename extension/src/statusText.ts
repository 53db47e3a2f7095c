/**
 * Wording of the status bar item. Pure, so it is tested.
 */

import { countOf, formatAge, formatShortAge } from './format';
import type { Checkpoint, Following } from './protocol';
import { checkpointTitle } from './tree/labels';

/** The icon shown while agents are followed, by the server's state. */
const FOLLOW_ICONS: Partial<Record<Following['state'], string>> = {
  importing: ' $(sync~spin)',
  following: ' $(eye)',
};

/**
 * Text and tooltip of the item: the newest checkpoint's age and the count, and
 * what is followed (the server's own sentence, `following.summary`).
 */
export function statusText(
  checkpoints: readonly Checkpoint[],
  folderName: string,
  now: number,
  following?: Following,
): { text: string; tooltip: string } {
  const base = checkpointText(checkpoints, folderName, now);
  if (following === undefined) {
    return base;
  }
  return {
    text: base.text + (FOLLOW_ICONS[following.state] ?? ''),
    tooltip: `${base.tooltip}\nTurnback is ${following.summary}.`,
  };
}

function checkpointText(
  checkpoints: readonly Checkpoint[],
  folderName: string,
  now: number,
): { text: string; tooltip: string } {
  let last: Checkpoint | undefined;
  for (const cp of checkpoints) {
    if (last === undefined || cp.ts > last.ts) {
      last = cp;
    }
  }
  if (last === undefined) {
    return {
      text: '$(history) no checkpoints',
      tooltip: `Turnback: ${folderName} has no checkpoints yet. Click to show the Turnback view.`,
    };
  }
  return {
    text: `$(history) ${formatShortAge(last.ts, now)} · ${String(checkpoints.length)}`,
    tooltip:
      `Turnback: last checkpoint “${checkpointTitle(last)}” ${formatAge(last.ts, now)}; ` +
      `${countOf(checkpoints.length, 'checkpoint')} in ${folderName}. Click to show the Turnback view.`,
  };
}
