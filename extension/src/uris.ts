/**
 * The extension's URI schemes, encoded and decoded without VS Code so that the
 * round trip is unit-tested; callers build a `vscode.Uri` with `Uri.from(parts)`.
 *
 * - `turnback:/<folder path>/<path>?folder=…&checkpoint=…&path=…` — a file as
 *   it is in a checkpoint, served by the content provider through
 *   `turnback/fileContent`. The URI path is the file's own path on disk, so
 *   the editor picks the language from its extension, the tab shows the
 *   file's name, and the multi-file diff pairs it with the working file
 *   instead of calling it a rename. The query is what is read back.
 * - `turnback-change:…` — the same, plus `status`, for the resource of a
 *   changed-file tree item; it only carries the status for the decoration provider.
 */

import type { ChangeStatus } from './protocol';

export const CONTENT_SCHEME = 'turnback';
export const CHANGE_SCHEME = 'turnback-change';

/**
 * The checkpoint of "no file", for the side of a diff where the file does not
 * exist; the server's ids never start with '-'.
 */
export const ABSENT = '-';

export interface UriParts {
  scheme: string;
  /** The host of a UNC folder (`file://server/share/...` on Windows), else ''. */
  authority: string;
  path: string;
  query: string;
}

/** A file of a checkpoint. `path` is relative to the workspace folder, with `/` separators. */
export interface ContentRef {
  folder: string;
  checkpoint: string;
  path: string;
}

export interface ChangeRef extends ContentRef {
  status: ChangeStatus;
}

export class UriError extends Error {}

const STATUSES: readonly ChangeStatus[] = ['added', 'modified', 'deleted'];

function checkRelative(path: string): string {
  if (path.length === 0) {
    throw new UriError('the file path is empty');
  }
  if (path.startsWith('/')) {
    throw new UriError(`the file path ${JSON.stringify(path)} must be relative to the workspace folder`);
  }
  return path;
}

/**
 * The path part of a folder URI, decoded, as VS Code's `Uri.path` has it: "file:///a%20b/"
 * → "/a b"; a Windows drive "file:///c%3A/work" → "/c:/work"; a UNC share
 * "file://server/share/x" → "/share/x" (its host is `folderAuthority`). "" if it is no URI.
 */
export function folderPath(folder: string): string {
  try {
    return decodeURIComponent(new URL(folder).pathname).replace(/\/+$/, '');
  } catch {
    return '';
  }
}

/** The host of a folder URI on a UNC share ("file://server/share" → "server"), else ''. */
export function folderAuthority(folder: string): string {
  try {
    const host = new URL(folder).host;
    return host === 'localhost' ? '' : host;
  } catch {
    return '';
  }
}

function displayPath(ref: ContentRef): string {
  return `${folderPath(ref.folder)}/${checkRelative(ref.path)}`;
}

export function contentUriParts(ref: ContentRef): UriParts {
  const query = new URLSearchParams({ folder: ref.folder, checkpoint: ref.checkpoint, path: ref.path });
  return { scheme: CONTENT_SCHEME, authority: folderAuthority(ref.folder), path: displayPath(ref), query: query.toString() };
}

export function changeUriParts(ref: ChangeRef): UriParts {
  const query = new URLSearchParams({
    folder: ref.folder,
    checkpoint: ref.checkpoint,
    path: ref.path,
    status: ref.status,
  });
  return { scheme: CHANGE_SCHEME, authority: folderAuthority(ref.folder), path: displayPath(ref), query: query.toString() };
}

function required(query: URLSearchParams, name: string, scheme: string): string {
  const value = query.get(name);
  if (value === null || value.length === 0) {
    throw new UriError(`a ${scheme}: URI needs a '${name}' in its query`);
  }
  return value;
}


/** Reads a `turnback:` URI back; throws UriError naming what is missing. */
export function parseContentUri(parts: { query: string }): ContentRef {
  const query = new URLSearchParams(parts.query);
  return {
    folder: required(query, 'folder', CONTENT_SCHEME),
    checkpoint: required(query, 'checkpoint', CONTENT_SCHEME),
    path: required(query, 'path', CONTENT_SCHEME),
  };
}

/** Reads a `turnback-change:` URI back; throws UriError naming what is wrong. */
export function parseChangeUri(parts: { query: string }): ChangeRef {
  const query = new URLSearchParams(parts.query);
  const status = required(query, 'status', CHANGE_SCHEME);
  if (!(STATUSES as readonly string[]).includes(status)) {
    throw new UriError(`unknown change status ${JSON.stringify(status)}; expected ${STATUSES.join(', ')}`);
  }
  return {
    folder: required(query, 'folder', CHANGE_SCHEME),
    checkpoint: required(query, 'checkpoint', CHANGE_SCHEME),
    path: required(query, 'path', CHANGE_SCHEME),
    status: status as ChangeStatus,
  };
}

/** The last segment of a relative path ("src/app.py" → "app.py"). */
export function basename(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? path : path.slice(i + 1);
}

/** The folder part of a relative path ("src/app.py" → "src", "app.py" → ""). */
export function dirname(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

/** Badge, tooltip and theme color of a change status, as the Source Control view shows them. */
export function decorationFor(status: ChangeStatus): { badge: string; tooltip: string; color: string } {
  switch (status) {
    case 'added':
      return { badge: 'A', tooltip: 'Added', color: 'gitDecoration.addedResourceForeground' };
    case 'modified':
      return { badge: 'M', tooltip: 'Modified', color: 'gitDecoration.modifiedResourceForeground' };
    case 'deleted':
      return { badge: 'D', tooltip: 'Deleted', color: 'gitDecoration.deletedResourceForeground' };
  }
}
