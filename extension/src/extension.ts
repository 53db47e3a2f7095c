/**
 * Entry point: wires the server connection, the Sessions view, the diff
 * documents, decorations, the status bar and the commands together.
 */

import { existsSync } from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { autostart } from './autostart';
import { LineAttribution } from './blame/annotator';
import { StoreCache } from './cache';
import { TurnbackClient } from './client';
import { VIEW_ID, registerCommands } from './commands';
import { CheckpointContentProvider } from './contentProvider';
import { onPythonEnvironmentChange } from './python';
import { SECTION, pageSize, rowLabelWidth } from './settings';
import { ROW_LABEL_WIDTH, setRowLabelWidth } from './tree/labels';
import { StatusBar } from './statusBar';
import { ChangeDecorationProvider } from './tree/decorations';
import type { TreeNode } from './tree/model';
import { SessionTreeProvider } from './tree/provider';
import { CONTENT_SCHEME } from './uris';
import { describeCandidates } from './commands/firstRun';
import { FileHistoryProvider, HISTORY_VIEW_ID } from './history/provider';
import type { HistoryRow } from './history/model';

let client: TurnbackClient | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Turnback', { log: true });
  client = new TurnbackClient(context.extensionPath, output);
  const turnback = client;
  const cache = new StoreCache(turnback, () => pageSize(vscode.workspace.getConfiguration(SECTION)));
  setRowLabelWidth(rowLabelWidth(vscode.workspace.getConfiguration(SECTION), ROW_LABEL_WIDTH));
  const tree = new SessionTreeProvider(cache, () => turnback.currentState);
  const view = vscode.window.createTreeView<TreeNode>(VIEW_ID, {
    treeDataProvider: tree,
    showCollapseAll: true,
  });
  const statusBar = new StatusBar(cache, () => turnback.currentState);
  const history = new FileHistoryProvider(cache);
  const historyView = vscode.window.createTreeView<HistoryRow>(HISTORY_VIEW_ID, { treeDataProvider: history });
  history.attach(historyView);
  const attribution = new LineAttribution(turnback);
  const services = { client: turnback, cache, tree, view, history, attribution };

  context.subscriptions.push(
    output,
    turnback,
    cache,
    tree,
    view,
    statusBar,
    vscode.workspace.registerTextDocumentContentProvider(CONTENT_SCHEME, new CheckpointContentProvider(turnback)),
    vscode.window.registerFileDecorationProvider(new ChangeDecorationProvider()),
    history,
    historyView,
    attribution,
    ...registerCommands(services),
    tree.onDidChangeNoStore((none) => {
      // The first run: no store in any folder; say what the importers would find.
      if (none) {
        void describeCandidates(services);
      } else {
        view.description = undefined;
      }
    }),
    turnback.onDidChangeStore((params) => {
      cache.storeChanged(params);
    }),
    turnback.onDidChangeState((state) => {
      // Running again (or failed): everything cached may be stale or missing.
      if (state.kind === 'running' || state.kind === 'failed') {
        cache.invalidateAll();
      }
      void vscode.commands.executeCommand('setContext', 'turnback.serverState', state.kind);
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      // The language client tells the server; a first folder may need a server at all.
      startIfWanted(turnback);
      cache.invalidateAll();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      // Trusted now: the workspace's own settings apply, writing is allowed, and
      // agents' sessions of this folder may be read: start a server that was not running.
      if (turnback.currentState.kind === 'stopped') {
        startIfWanted(turnback);
      } else {
        void turnback.restart();
      }
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(`${SECTION}.python`)) {
        void turnback.restart();
      } else if (e.affectsConfiguration(`${SECTION}.pageSize`)) {
        cache.invalidateAll();
      } else if (e.affectsConfiguration(`${SECTION}.rowLabelWidth`)) {
        setRowLabelWidth(rowLabelWidth(vscode.workspace.getConfiguration(SECTION), ROW_LABEL_WIDTH));
        cache.invalidateAll(); // the views are drawn again, their rows cut anew
      } else if (e.affectsConfiguration(SECTION)) {
        startIfWanted(turnback); // followAgents turned on, a storePath set
        void turnback.sendSettings();
      }
    }),
  );

  void onPythonEnvironmentChange(() => {
    if (vscode.workspace.getConfiguration(SECTION).get<string>('python', '').trim() === '') {
      void turnback.restart();
    }
  }).then((d) => {
    if (d !== undefined) {
      context.subscriptions.push(d);
    }
  });

  startIfWanted(turnback);
}

/**
 * Starts a stopped server when this window wants one without a click (a store
 * here, or agents to follow in a trusted folder: `autostart.ts`); otherwise the
 * view or a command starts it when asked.
 */
function startIfWanted(turnback: TurnbackClient): void {
  if (turnback.currentState.kind !== 'stopped') {
    return;
  }
  const folders = vscode.workspace.workspaceFolders ?? [];
  const decision = autostart({
    folders: folders.length,
    trusted: vscode.workspace.isTrusted,
    hasStore: folders.some(hasStore) || (process.env.TURNBACK_STORE ?? '') !== '',
    followAgents: vscode.workspace.getConfiguration(SECTION).get('followAgents'),
  });
  turnback.output.info(`${decision.start ? 'Starting' : 'Not starting'} the server: ${decision.why}`);
  if (decision.start) {
    void turnback.start();
  }
}

/** A store of this folder: `.turnback` in it, or one configured elsewhere (`turnback.storePath`). */
function hasStore(folder: vscode.WorkspaceFolder): boolean {
  const configured = vscode.workspace.getConfiguration(SECTION, folder.uri).get<string>('storePath', '');
  if (configured.trim() !== '') {
    return true;
  }
  return folder.uri.scheme === 'file' && existsSync(path.join(folder.uri.fsPath, '.turnback'));
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
