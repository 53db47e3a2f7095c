/**
 * Wording of the status bar item. Pure, so it is tested.
 */

import { countOf, formatAge, formatShortAge } from './format';
import type { Checkpoint, Following, SetAside, WatchLimit } from './protocol';
import { checkpointTitle } from './tree/labels';

/** The icon shown while agents are followed, by the server's state. */
const FOLLOW_ICONS: Partial<Record<Following['state'], string>> = {
  importing: ' $(sync~spin)',
  following: ' $(eye)',
};

/**
 * Text and tooltip of the item: the newest checkpoint's age and the count, what is
 * followed (the server's own sentence, `following.summary`), and a warning first while
 * the kernel's watch limit keeps folders unwatched or the store has set something aside
 * (the server's sentences, which say what to do).
 */
export function statusText(
  checkpoints: readonly Checkpoint[],
  folderName: string,
  now: number,
  following?: Following,
  watchLimit?: WatchLimit | null,
  setAside?: readonly SetAside[],
): { text: string; tooltip: string } {
  let { text, tooltip } = checkpointText(checkpoints, folderName, now);
  if (following !== undefined) {
    text += FOLLOW_ICONS[following.state] ?? '';
    tooltip = `${tooltip}\nTurnback is ${following.summary}.`;
  }
  const warnings = [
    ...(watchLimit !== undefined && watchLimit !== null ? [watchLimit.message] : []),
    ...(setAside ?? []).map((s) => s.message),
  ];
  if (warnings.length > 0) {
    text = `$(warning) ${text}`;
    tooltip = `${warnings.join('\n\n')}\n\n${tooltip}`;
  }
  return {
    text,
    tooltip,
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
  // "7 checkpoints · 5m ago": "5m · 7" alone said neither what was counted nor what was 5m
  const short = formatShortAge(last.ts, now);
  const age = short === 'now' ? 'just now' : short === '?' ? 'time unknown' : `${short} ago`;
  return {
    text: `$(history) ${countOf(checkpoints.length, 'checkpoint')} · ${age}`,
    tooltip:
      `Turnback: last checkpoint “${checkpointTitle(last)}” ${formatAge(last.ts, now)}; ` +
      `${countOf(checkpoints.length, 'checkpoint')} in ${folderName}. Click to show the Turnback view.`,
  };
}
