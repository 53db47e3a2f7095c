/**
 * Serves `turnback:` documents — a file as a checkpoint holds it — through
 * `turnback/fileContent`, so the diff editor can show any two states. A binary
 * file is described in words instead of shown as garbage; a file the
 * checkpoint does not have is empty (the diff then shows it added or deleted).
 */

import * as vscode from 'vscode';

import type { TurnbackClient } from './client';
import { describeError } from './errors';
import { binaryNotice } from './diffText';
import { ABSENT, CONTENT_SCHEME, type ContentRef, contentUriParts, parseContentUri } from './uris';

/** The URI of a file in a checkpoint, or of "no file" (ABSENT). */
export function contentUri(ref: ContentRef): vscode.Uri {
  return vscode.Uri.from(contentUriParts(ref));
}

export class CheckpointContentProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly client: TurnbackClient) {}

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    if (uri.scheme !== CONTENT_SCHEME) {
      return '';
    }
    const ref = parseContentUri(uri);
    if (ref.checkpoint === ABSENT) {
      return '';
    }
    try {
      const r = await this.client.request(
        'turnback/fileContent',
        { folder: ref.folder, checkpoint: ref.checkpoint, path: ref.path },
        token,
      );
      if (!r.exists) {
        return '';
      }
      if (r.binary || r.text === undefined) {
        return binaryNotice(ref.path, r.size);
      }
      return r.text;
    } catch (err) {
      throw new Error(describeError(`Reading ${ref.path} from checkpoint ${ref.checkpoint}`, err), { cause: err });
    }
  }
}
