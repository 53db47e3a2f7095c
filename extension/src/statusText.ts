/**
 * Wording of the status bar item. Pure, so it is tested.
 */

import { countOf, formatAge, formatShortAge } from './format';
import type { Checkpoint, WatchLimit } from './protocol';
import { checkpointTitle } from './tree/labels';

/**
 * Text and tooltip of the item: the newest checkpoint's age and the count; a warning
 * first while the kernel's watch limit keeps folders unwatched.
 */
export function statusText(
  checkpoints: readonly Checkpoint[],
  folderName: string,
  now: number,
  watchLimit?: WatchLimit | null,
): { text: string; tooltip: string } {
  const plain = checkpointText(checkpoints, folderName, now);
  if (watchLimit === undefined || watchLimit === null) {
    return plain;
  }
  return {
    text: `$(warning) ${plain.text}`,
    tooltip: `${watchLimit.message}\n\n${plain.tooltip}`,
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
