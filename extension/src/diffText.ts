/**
 * Titles of diff editors and the text shown for binary files. Pure.
 */

import { formatBytes, visible } from './format';
import { basename } from './uris';

/**
 * "app.py (after tests ↔ Now)": which file, and which two states. An editor tab's title:
 * a file name's (or a prompt's) bidi override or zero-width character is shown as an
 * escape (`visible`), as in the views' labels, or "invoice\u202efdp.exe" reordered the
 * whole title (redteam25).
 */
export function diffTitle(path: string, left: string, right: string): string {
  return visible(`${basename(path)} (${left} ↔ ${right})`);
}

/** Title of a multi-file diff: "Turnback: after tests ↔ Now" (escaped as `diffTitle`). */
export function changesTitle(left: string, right: string): string {
  return visible(`Turnback: ${left} ↔ ${right}`);
}

/**
 * What a binary file's side of a diff says instead of showing its bytes, in short lines:
 * a side of a diff is half an editor wide and does not wrap, so one long line ran out of
 * sight ("Restore This File or Rewind to Here puts it b").
 */
export function binaryNotice(path: string, size: number): string {
  return (
    `${path} is a binary file (${formatBytes(size)});\n` +
    'its bytes are not shown.\n' +
    'Restore This File or Rewind to Here\n' +
    'puts it back byte for byte.\n'
  );
}
