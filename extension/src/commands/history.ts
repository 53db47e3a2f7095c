/**
 * The File History view's commands: Show File History (palette, editor title, explorer),
 * Restore This Version (the usual undoable restore of one file), Reveal Turn.
 */

import * as vscode from 'vscode';

import { HISTORY_VIEW_ID } from '../history/provider';
import type { VersionRow } from '../history/model';
import { type Services, isTreeNode } from './common';
import { restoreFile } from './rewind';

function versionArg(arg: unknown): VersionRow | undefined {
  return typeof arg === 'object' && arg !== null && (arg as { kind?: unknown }).kind === 'version'
    ? (arg as VersionRow)
    : undefined;
}

/** turnback.showFileHistory: the given file (explorer, editor title) or the active editor's. */
export async function showFileHistory(services: Services, arg: unknown): Promise<void> {
  const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
  if (uri === undefined || services.history?.follow(uri) !== true) {
    void vscode.window.showInformationMessage('Show File History needs a file of a workspace folder: open one first.');
    return;
  }
  await vscode.commands.executeCommand(`${HISTORY_VIEW_ID}.focus`);
}

/** turnback.restoreVersion: the file as this checkpoint holds it (undoable). */
export async function restoreVersion(services: Services, arg: unknown): Promise<void> {
  const row = versionArg(arg);
  if (row === undefined) {
    return;
  }
  await restoreFile(services, { folder: row.folder, checkpoint: { id: row.checkpoint.id, title: row.checkpoint.title }, path: row.path });
}

/** turnback.revealTurn: selects the version's turn in the Sessions view. */
export async function revealTurn(services: Services, arg: unknown): Promise<void> {
  const row = versionArg(arg);
  if (row?.sessionId === undefined || isTreeNode(arg)) {
    void vscode.window.showInformationMessage('This version was not made in a turn of an agent session.');
    return;
  }
  if (services.tree.showingEvents) {
    services.tree.setEventsMode(false);
  }
  await vscode.commands.executeCommand('turnback.showView');
  await services.tree.revealTurn(services.view, row.folder, row.sessionId, row.turnId);
}
