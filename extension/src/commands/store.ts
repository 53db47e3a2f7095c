/**
 * Store-wide commands: Collect Garbage, Open Store Folder, Restart Server, Refresh.
 */

import * as path from 'node:path';

import * as vscode from 'vscode';

import { countOf, formatBytes, inline } from '../format';
import { matchFolder, pickFolder } from '../folders';
import { type Services, confirmedArg, requireTrust, showError, stringField, withProgress } from './common';

/** turnback.gc: a dry run says what would go; the real run after a yes. */
export async function collectGarbage(services: Services, arg: unknown): Promise<void> {
  if (!requireTrust('Collect Garbage')) {
    return;
  }
  const folder = await pickFolder(stringField(arg, 'folder'), 'Collect garbage in which folder’s store?');
  if (folder === undefined) {
    return;
  }
  try {
    if (!confirmedArg(arg)) {
      const dry = await withProgress('finding unreferenced objects…', () =>
        services.client.request('turnback/gc', { folder, dryRun: true }),
      );
      const dropped = dry.checkpointsDropped ?? [];
      if (dry.objectsRemoved === 0 && dropped.length === 0) {
        void vscode.window.showInformationMessage('Nothing to collect: every stored object is still referenced.');
        return;
      }
      const lines = [
        `Remove ${countOf(dry.objectsRemoved, 'unreferenced object')}, freeing ${formatBytes(dry.bytesFreed)}.`,
      ];
      if (dropped.length > 0) {
        lines.push(`The retention settings drop ${countOf(dropped.length, 'old automatic checkpoint')}.`);
      }
      const answer = await vscode.window.showWarningMessage(
        'Collect garbage in the Turnback store?',
        { modal: true, detail: lines.join('\n') },
        'Collect Garbage',
      );
      if (answer !== 'Collect Garbage') {
        return;
      }
    }
    const r = await withProgress('collecting garbage…', () => services.client.request('turnback/gc', { folder }));
    services.cache.invalidateAll();
    const after = typeof r.bytes === 'number' ? `; the store now holds ${formatBytes(r.bytes)}` : '';
    void vscode.window.showInformationMessage(
      `Removed ${countOf(r.objectsRemoved, 'object')}, freed ${formatBytes(r.bytesFreed)}${after}.`,
    );
  } catch (err) {
    showError('Collect Garbage', err);
  }
}

/** turnback.openStoreFolder: in the Explorer when the store is inside the workspace, else in the OS. */
export async function openStoreFolder(services: Services, arg: unknown): Promise<void> {
  const folder = await pickFolder(stringField(arg, 'folder'));
  if (folder === undefined) {
    return;
  }
  try {
    const status = await services.client.request('turnback/status', { folder });
    const store = vscode.Uri.file(status.store);
    const wf = matchFolder(folder);
    const rel = wf?.uri.scheme === 'file' ? path.relative(wf.uri.fsPath, status.store) : undefined;
    const inside = rel !== undefined && !rel.startsWith('..') && !path.isAbsolute(rel);
    if (inside) {
      await vscode.commands.executeCommand('revealInExplorer', store);
    } else {
      await vscode.commands.executeCommand('revealFileInOS', store);
    }
    void vscode.window.showInformationMessage(`Turnback store: ${inline(status.store)}`);
  } catch (err) {
    showError('Open Store Folder', err);
  }
}

export async function restartServer(services: Services): Promise<void> {
  try {
    await withProgress('restarting the server…', () => services.client.restart());
  } catch (err) {
    showError('Restart Server', err);
  }
  services.cache.invalidateAll();
  const state = services.client.currentState;
  if (state.kind === 'failed') {
    void vscode.window.showErrorMessage(state.reason, 'Show Server Log').then((a) => {
      if (a !== undefined) {
        services.client.output.show();
      }
    });
  }
}
