/**
 * Diff editors: a changed file against the checkpoint before (a click in the
 * tree), a file or a whole checkpoint against the working tree (Compare with
 * Now), a whole checkpoint against the one before (Compare with Previous).
 * Checkpoint sides are `turnback:` documents; the working side is the file itself.
 */

import * as vscode from 'vscode';

import { contentUri } from '../contentProvider';
import { changesTitle, diffTitle } from '../diffText';
import { fileUri, pickFolder } from '../folders';
import { countOf } from '../format';
import { changedFileItem } from '../picks';
import type { Change } from '../protocol';
import type { CheckpointRef } from '../tree/model';
import { ABSENT } from '../uris';
import { type Services, checkpointArg, pathArg, showError, stringField, withProgress } from './common';

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

function side(folder: string, checkpoint: string, path: string): vscode.Uri {
  return contentUri({ folder, checkpoint, path });
}

/** A changed file of a checkpoint against the checkpoint before it. */
export async function openChange(arg: unknown): Promise<void> {
  const target = checkpointArg(arg);
  const path = pathArg(arg);
  const status = stringField(arg, 'status');
  if (target === undefined || path === undefined) {
    return;
  }
  const folder = await pickFolder(target.folder);
  if (folder === undefined) {
    return;
  }
  const cp = target.checkpoint;
  const prev = cp.previous;
  const left = side(folder, status === 'added' || prev === undefined ? ABSENT : prev.id, path);
  const right = side(folder, status === 'deleted' ? ABSENT : cp.id, path);
  await vscode.commands.executeCommand(
    'vscode.diff',
    left,
    right,
    diffTitle(path, prev?.title ?? 'nothing', cp.title),
    { preview: true },
  );
}

/** Opens a multi-file diff, or, where VS Code has none, a pick of the files. */
async function openChanges(title: string, rows: [vscode.Uri, vscode.Uri, vscode.Uri, string][]): Promise<void> {
  try {
    await vscode.commands.executeCommand(
      'vscode.changes',
      title,
      rows.map(([label, left, right]) => [label, left, right]),
    );
    return;
  } catch {
    // Older VS Code: no multi-file diff editor.
  }
  const picked = await vscode.window.showQuickPick(
    rows.map(([label, left, right, diff]) => ({
      ...changedFileItem(vscode.workspace.asRelativePath(label, false)),
      left,
      right,
      diff,
    })),
    { title, placeHolder: `${countOf(rows.length, 'changed file')}: pick one to compare` },
  );
  if (picked !== undefined) {
    await vscode.commands.executeCommand('vscode.diff', picked.left, picked.right, picked.diff);
  }
}

function rowsAgainstNow(folder: string, cp: CheckpointRef, changes: readonly Change[]): [vscode.Uri, vscode.Uri, vscode.Uri, string][] {
  return changes.map((c) => {
    const file = fileUri(folder, c.path);
    // `added`: in the working tree, not in the checkpoint; `deleted`: the other way round.
    const left = side(folder, c.status === 'added' ? ABSENT : cp.id, c.path);
    const right = c.status === 'deleted' ? side(folder, ABSENT, c.path) : file;
    return [file, left, right, diffTitle(c.path, cp.title, 'Now')];
  });
}

/** Compare with Now: a changed file, or every file that differs from the checkpoint. */
export async function compareWithNow(services: Services, arg: unknown): Promise<void> {
  const target = checkpointArg(arg);
  if (target === undefined) {
    void vscode.window.showErrorMessage('Compare with Now needs a checkpoint: use it from the Turnback view.');
    return;
  }
  const folder = await pickFolder(target.folder);
  if (folder === undefined) {
    return;
  }
  const cp = target.checkpoint;
  const path = pathArg(arg);
  if (path !== undefined) {
    const file = fileUri(folder, path);
    const status = stringField(arg, 'status');
    const left = side(folder, status === 'deleted' ? ABSENT : cp.id, path);
    const right = (await exists(file)) ? file : side(folder, ABSENT, path);
    await vscode.commands.executeCommand('vscode.diff', left, right, diffTitle(path, cp.title, 'Now'));
    return;
  }
  let changes: Change[];
  try {
    changes = await withProgress(`comparing “${cp.title}” with the workspace…`, async () => {
      const r = await services.client.request('turnback/changes', { folder, from: cp.id });
      return r.changes;
    });
  } catch (err) {
    showError('Compare with Now', err);
    return;
  }
  if (changes.length === 0) {
    void vscode.window.showInformationMessage(`The workspace matches “${cp.title}”.`);
    return;
  }
  await openChanges(changesTitle(cp.title, 'Now'), rowsAgainstNow(folder, cp, changes));
}

/** Compare with Previous Checkpoint: what a checkpoint changed, all files at once. */
export async function compareWithPrevious(services: Services, arg: unknown): Promise<void> {
  const target = checkpointArg(arg);
  if (target === undefined) {
    return;
  }
  if (pathArg(arg) !== undefined) {
    await openChange(arg);
    return;
  }
  const folder = await pickFolder(target.folder);
  if (folder === undefined) {
    return;
  }
  const cp = target.checkpoint;
  const prev = cp.previous;
  if (prev === undefined) {
    void vscode.window.showInformationMessage(`“${cp.title}” is the first checkpoint: nothing earlier to compare with.`);
    return;
  }
  let changes: Change[];
  try {
    changes = await services.cache.changes(folder, prev.id, cp.id);
  } catch (err) {
    showError('Compare with Previous Checkpoint', err);
    return;
  }
  if (changes.length === 0) {
    void vscode.window.showInformationMessage(`“${cp.title}” has the same files as “${prev.title}”.`);
    return;
  }
  const rows: [vscode.Uri, vscode.Uri, vscode.Uri, string][] = changes.map((c) => [
    fileUri(folder, c.path),
    side(folder, c.status === 'added' ? ABSENT : prev.id, c.path),
    side(folder, c.status === 'deleted' ? ABSENT : cp.id, c.path),
    diffTitle(c.path, prev.title, cp.title),
  ]);
  await openChanges(changesTitle(prev.title, cp.title), rows);
}
