/**
 * The words of a rewind: the confirmation built from a dry run, and the
 * notification after it. Pure, so what a user is asked to agree to is tested.
 */

import { countOf, listPaths } from './format';
import type { RewindMode, RewindResult } from './protocol';

/** At most this many paths per list in a modal dialog. */
export const MAX_LISTED = 12;

export const MODE_TITLES: Record<RewindMode, string> = {
  files: 'Files',
  conversation: 'Conversation',
  both: 'Files and conversation',
};

export const MODE_DETAILS: Record<RewindMode, string> = {
  files: 'Put the workspace files back as they were; the session is unchanged.',
  conversation: "Move the session's head back to this point: the next event starts a new branch. Files are unchanged.",
  both: 'Put the files back and move the session head to this point.',
};

function overwritten(r: RewindResult): string[] {
  if (r.overwritten !== undefined) {
    return r.overwritten;
  }
  // Older servers only send `written` (overwritten + created).
  const created = new Set(r.created ?? []);
  return r.written.filter((p) => !created.has(p));
}

function created(r: RewindResult): string[] {
  return r.created ?? [];
}

export function touchesFiles(mode: RewindMode): boolean {
  return mode !== 'conversation';
}

export function changesNothing(r: RewindResult): boolean {
  return r.written.length === 0 && r.removed.length === 0 && created(r).length === 0;
}

export interface Confirmation {
  message: string;
  detail: string;
  /** The button that goes ahead. */
  action: string;
}

/**
 * The modal that asks before a rewind, listing what the dry run says will be
 * overwritten, created and deleted.
 */
export function rewindConfirmation(
  dry: RewindResult,
  target: string,
  mode: RewindMode,
  what: 'rewind' | 'restore' | 'undo' = 'rewind',
): Confirmation {
  const lines: string[] = [];
  if (touchesFiles(mode)) {
    const ow = overwritten(dry);
    const cr = created(dry);
    if (changesNothing(dry)) {
      lines.push('The files already match; no file changes.');
    }
    if (ow.length > 0) {
      lines.push(`Overwrite ${countOf(ow.length, 'file')}:`, listPaths(ow, MAX_LISTED));
    }
    if (cr.length > 0) {
      lines.push(`Create ${countOf(cr.length, 'file')}:`, listPaths(cr, MAX_LISTED));
    }
    if (dry.removed.length > 0) {
      lines.push(`Delete ${countOf(dry.removed.length, 'file')}:`, listPaths(dry.removed, MAX_LISTED));
    }
  }
  if (mode !== 'files') {
    lines.push("The session's head moves back to this checkpoint; later events stay, on their own branch.");
  }
  lines.push('', 'A safety checkpoint is taken first: Undo Rewind brings the current state back.');
  const message =
    what === 'undo'
      ? 'Undo the last rewind?'
      : what === 'restore'
        ? `Restore ${target}?`
        : `Rewind to ${target} (${MODE_TITLES[mode].toLowerCase()})?`;
  const action = what === 'undo' ? 'Undo Rewind' : what === 'restore' ? 'Restore' : 'Rewind';
  return { message, detail: lines.join('\n'), action };
}

/** "Rewound to “after tests”: 2 files overwritten, 1 created, 1 deleted." */
export function rewindSummary(r: RewindResult, target: string, what: 'rewind' | 'restore' | 'undo'): string {
  const parts: string[] = [];
  const ow = overwritten(r).length;
  const cr = created(r).length;
  if (ow > 0) {
    parts.push(`${countOf(ow, 'file')} overwritten`);
  }
  if (cr > 0) {
    parts.push(`${String(cr)} created`);
  }
  if (r.removed.length > 0) {
    parts.push(`${String(r.removed.length)} deleted`);
  }
  const files = parts.length > 0 ? parts.join(', ') : 'no file changed';
  const head = r.mode === 'conversation' || r.mode === 'both' ? '; session head moved' : '';
  const verb = what === 'undo' ? 'Undid the last rewind' : what === 'restore' ? `Restored ${target}` : `Rewound to ${target}`;
  return `${verb}: ${files}${head}.`;
}

/**
 * The notification after a rewind: `rewindSummary` naming the target as shown (a turn's
 * title cut to a few words), and, when `whole` (the target named in full) says more, the
 * same sentence naming it in full, for its Show Details.
 */
export function rewindToast(
  r: RewindResult,
  target: string,
  what: 'rewind' | 'restore' | 'undo',
  whole?: string,
): { text: string; detail?: string } {
  const text = rewindSummary(r, target, what);
  if (whole === undefined || whole === target || what === 'undo') {
    return { text };
  }
  return { text, detail: rewindSummary(r, whole, what) };
}

/** Every path a rewind put in place or removed: the editors showing them reload from disk. */
export function affectedPaths(r: RewindResult): string[] {
  return [...new Set([...r.written, ...(r.overwritten ?? []), ...created(r), ...r.removed])];
}
