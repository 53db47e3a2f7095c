/**
 * Added / modified / deleted decorations (badge and color, as in the Source
 * Control view) on the changed files of a checkpoint in the tree.
 */

import * as vscode from 'vscode';

import { CHANGE_SCHEME, UriError, decorationFor, parseChangeUri } from '../uris';

export class ChangeDecorationProvider implements vscode.FileDecorationProvider {
  provideFileDecoration(uri: vscode.Uri): vscode.FileDecoration | undefined {
    if (uri.scheme !== CHANGE_SCHEME) {
      return undefined;
    }
    try {
      const ref = parseChangeUri(uri);
      const look = decorationFor(ref.status);
      return new vscode.FileDecoration(look.badge, look.tooltip, new vscode.ThemeColor(look.color));
    } catch (err) {
      if (err instanceof UriError) {
        return undefined;
      }
      throw err;
    }
  }
}
