/**
 * Open editors around a rewind. Before: unsaved changes in the folder are
 * either saved (so the safety checkpoint holds them) or discarded, never lost
 * silently. After: editors show what is on disk.
 */

import * as vscode from 'vscode';

import { countOf, listPaths } from './format';
import { MAX_LISTED } from './rewindText';

function inside(folder: vscode.Uri, uri: vscode.Uri): boolean {
  if (uri.scheme !== folder.scheme || uri.authority !== folder.authority) {
    return false;
  }
  const base = folder.path.endsWith('/') ? folder.path : `${folder.path}/`;
  return uri.path.startsWith(base);
}

/** Unsaved documents of files under `folder`; with `paths`, only those (workspace-relative). */
export function dirtyDocuments(folder: string, paths?: readonly string[]): vscode.TextDocument[] {
  const root = vscode.Uri.parse(folder);
  const wanted = paths ? new Set(paths.map((p) => vscode.Uri.joinPath(root, ...p.split('/')).toString())) : undefined;
  return vscode.workspace.textDocuments.filter(
    (d) =>
      d.isDirty &&
      d.uri.scheme === 'file' &&
      inside(root, d.uri) &&
      (wanted === undefined || wanted.has(d.uri.toString())),
  );
}

function relative(folder: string, doc: vscode.TextDocument): string {
  return vscode.workspace.asRelativePath(doc.uri, false) || doc.uri.fsPath || folder;
}

/** Reverts a document to what is on disk (VS Code has no API for it but the command on the active editor). */
async function revert(doc: vscode.TextDocument): Promise<void> {
  await vscode.window.showTextDocument(doc, { preview: false, preserveFocus: false });
  await vscode.commands.executeCommand('workbench.action.files.revert');
}

/**
 * Asks what to do with unsaved editors before files are replaced. Returns false
 * when the user cancels (nothing happens then).
 */
export async function settleUnsaved(folder: string, action: string, paths?: readonly string[]): Promise<boolean> {
  const dirty = dirtyDocuments(folder, paths);
  if (dirty.length === 0) {
    return true;
  }
  const names = dirty.map((d) => relative(folder, d));
  const save = 'Save All First';
  const discard = 'Discard Changes';
  const choice = await vscode.window.showWarningMessage(
    `${countOf(dirty.length, 'file has', 'files have')} unsaved changes.`,
    {
      modal: true,
      detail:
        `${listPaths(names, MAX_LISTED)}\n\n${action} replaces files on disk. Save them first (the safety ` +
        'checkpoint then keeps them, so Undo brings them back), or discard the unsaved changes.',
    },
    save,
    discard,
  );
  if (choice === save) {
    for (const d of dirty) {
      if (!(await d.save())) {
        void vscode.window.showErrorMessage(`Could not save ${relative(folder, d)}; nothing was changed.`);
        return false;
      }
    }
    return true;
  }
  if (choice === discard) {
    for (const d of dirty) {
      await revert(d);
    }
    return true;
  }
  return false;
}

/**
 * After a rewind: documents of the touched files that are still unsaved (typed
 * into while it ran) are reverted, so every editor shows the disk. Saved ones
 * reload by themselves when the file watcher sees the change.
 */
export async function showDisk(folder: string, paths: readonly string[]): Promise<void> {
  if (paths.length === 0) {
    return;
  }
  for (const d of dirtyDocuments(folder, paths)) {
    await revert(d);
  }
}
