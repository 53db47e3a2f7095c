/**
 * Titles of diff editors and the text shown for binary files. Pure.
 */

import { formatBytes } from './format';
import { basename } from './uris';

/** "app.py (after tests ↔ Now)": which file, and which two states. */
export function diffTitle(path: string, left: string, right: string): string {
  return `${basename(path)} (${left} ↔ ${right})`;
}

/** Title of a multi-file diff: "Turnback: after tests ↔ Now". */
export function changesTitle(left: string, right: string): string {
  return `Turnback: ${left} ↔ ${right}`;
}

/** What a binary file's side of a diff says instead of showing its bytes. */
export function binaryNotice(path: string, size: number): string {
  return (
    `${path} is a binary file (${formatBytes(size)}); its bytes are not shown.\n` +
    'Restore This File or Rewind to Here puts it back byte for byte.\n'
  );
}
