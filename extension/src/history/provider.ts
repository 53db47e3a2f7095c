/**
 * The File History view: follows the active editor and lists, newest first, the
 * checkpoints where its file changed (turnback/fileHistory). Stable APIs only (no
 * proposed Timeline API): a tree view of Turnback's own.
 */

import * as vscode from 'vscode';

import type { StoreCache } from '../cache';
import { describeError } from '../errors';
import { folderId } from '../folders';
import { type HistoryRow, historyRows } from './model';

export const HISTORY_VIEW_ID = 'turnback.fileHistory';

interface Target {
  folder: string;
  path: string;
  name: string;
}

export class FileHistoryProvider implements vscode.TreeDataProvider<HistoryRow>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private target: Target | undefined;
  private view: vscode.TreeView<HistoryRow> | undefined;
  private readonly disposables: { dispose(): unknown }[] = [];

  constructor(private readonly cache: StoreCache) {
    this.disposables.push(
      this.changed,
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (e !== undefined) {
          this.follow(e.document.uri);
        }
      }),
      cache.onDidChange(() => {
        this.changed.fire(undefined);
      }),
    );
  }

  attach(view: vscode.TreeView<HistoryRow>): void {
    this.view = view;
    const uri = vscode.window.activeTextEditor?.document.uri;
    if (uri !== undefined) {
      this.follow(uri);
    } else {
      this.render();
    }
  }

  /** Shows the history of `uri` (a file of a workspace folder; anything else is ignored). */
  follow(uri: vscode.Uri): boolean {
    if (uri.scheme !== 'file') {
      return false;
    }
    const wf = vscode.workspace.getWorkspaceFolder(uri);
    if (wf === undefined) {
      return false;
    }
    const path = vscode.workspace.asRelativePath(uri, false);
    if (path === '' || path.startsWith('..') || path === uri.fsPath) {
      return false;
    }
    this.target = { folder: folderId(wf), path, name: path.split('/').pop() ?? path };
    this.render();
    return true;
  }

  get current(): Target | undefined {
    return this.target;
  }

  loadMore(): void {
    if (this.target !== undefined) {
      this.cache.loadMoreHistory(this.target.folder, this.target.path);
    }
  }

  private render(): void {
    if (this.view !== undefined) {
      // With no file yet the view is empty and its welcome (package.json) says what to do.
      this.view.description = this.target?.path;
    }
    this.changed.fire(undefined);
  }

  getTreeItem(row: HistoryRow): vscode.TreeItem {
    const item = new vscode.TreeItem(
      row.label,
      row.kind === 'group' ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
    );
    item.id = row.key;
    item.description = row.description;
    if (row.kind === 'group') {
      item.contextValue = 'savedVersions';
      item.tooltip = row.tooltip;
      item.iconPath = new vscode.ThemeIcon('history');
    } else if (row.kind === 'version') {
      item.contextValue = row.contextValue;
      const md = new vscode.MarkdownString(row.tooltip);
      item.tooltip = md;
      item.iconPath = new vscode.ThemeIcon(
        row.status === 'added' ? 'diff-added' : row.status === 'deleted' ? 'diff-removed' : 'diff-modified',
      );
      item.command = {
        command: 'turnback.openChange',
        title: 'Open Changes',
        arguments: [{ folder: row.folder, checkpoint: row.checkpoint, path: row.path, status: row.status }],
      };
    } else if (row.kind === 'more') {
      item.iconPath = new vscode.ThemeIcon('ellipsis');
      item.command = { command: 'turnback.fileHistoryLoadMore', title: 'Load More' };
    } else {
      item.iconPath = new vscode.ThemeIcon('info');
    }
    item.accessibilityInformation = { label: [row.label, row.description].filter(Boolean).join(', ') };
    return item;
  }

  async getChildren(row?: HistoryRow): Promise<HistoryRow[]> {
    if (row?.kind === 'group') {
      return row.children;
    }
    if (row !== undefined || this.target === undefined) {
      return [];
    }
    const { folder, path } = this.target;
    try {
      return historyRows(folder, await this.cache.fileHistory(folder, path), Date.now());
    } catch (err) {
      return [{ kind: 'info', key: 'error', label: describeError('Loading the file history', err) }];
    }
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
