/**
 * The first run, in a folder with no store: Start Recording This Workspace (the
 * first checkpoint makes the store) and Import Agent Sessions Found Here (what the
 * importers find in their usual places, counted by the server).
 */

import * as vscode from 'vscode';

import { pickFolder } from '../folders';
import { countOf, inline } from '../format';
import type { ImportCandidatesResult } from '../protocol';
import { type Services, requireTrust, showError, stringField, withProgress } from './common';

/** Asks the server what could be imported here and says so in the view's title bar (a
 * message in the view itself would hide its welcome). */
export async function describeCandidates(services: Services): Promise<ImportCandidatesResult | undefined> {
  const folder = (vscode.workspace.workspaceFolders ?? [])[0];
  if (folder === undefined) {
    return undefined;
  }
  try {
    const found = await services.client.request('turnback/importCandidates', { folder: folder.uri.toString() });
    await vscode.commands.executeCommand('setContext', 'turnback.importable', found.total > 0);
    services.view.description =
      found.total > 0
        ? `Found here: ${found.sources.map((s) => countOf(s.files, `${s.source} session`)).join(', ')}.`
        : undefined;
    return found;
  } catch {
    return undefined;
  }
}

/** turnback.startRecording: the first checkpoint of the folder (it creates the store). */
export async function startRecording(services: Services, arg: unknown): Promise<void> {
  if (!requireTrust('Start Recording')) {
    return;
  }
  const folder = await pickFolder(stringField(arg, 'folder'), 'Record which workspace folder?');
  if (folder === undefined) {
    return;
  }
  try {
    const r = await withProgress('taking the first checkpoint…', () =>
      services.client.request('turnback/createCheckpoint', { folder, label: 'Recording started' }),
    );
    services.view.description = undefined;
    services.cache.invalidateAll();
    void vscode.window.showInformationMessage(
      `Turnback records this workspace: first checkpoint of ${countOf(r.checkpoint.files ?? 0, 'file')} taken.`,
    );
  } catch (err) {
    showError('Start Recording', err);
  }
}

/** turnback.importFound: every source that has sessions for this folder, imported at once. */
export async function importFound(services: Services, arg: unknown): Promise<void> {
  if (!requireTrust('Import Sessions')) {
    return;
  }
  const folder = await pickFolder(stringField(arg, 'folder'), 'Import into which workspace folder?');
  if (folder === undefined) {
    return;
  }
  try {
    const found = await services.client.request('turnback/importCandidates', { folder });
    if (found.total === 0) {
      void vscode.window.showInformationMessage(
        'No agent sessions found for this folder in the usual places; Import Sessions… reads a file or folder you pick.',
      );
      return;
    }
    let sessions = 0;
    for (const s of found.sources) {
      const r = await withProgress(`importing ${inline(s.source)} sessions…`, () =>
        services.client.request('turnback/import', { folder, source: s.source as never }),
      );
      sessions += r.sessions.length;
    }
    services.view.description = undefined;
    services.cache.invalidateAll();
    void vscode.window.showInformationMessage(
      `Imported ${countOf(sessions, 'session')} from ${found.sources.map((s) => inline(s.source)).join(', ')}.`,
    );
  } catch (err) {
    showError('Import Sessions', err);
  }
}
