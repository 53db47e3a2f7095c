/**
 * The status bar item: the age of the active folder's last checkpoint and how
 * many it has ("$(history) 5m · 12"), and an eye while agents are followed (the
 * tooltip says which, in the server's words). A click reveals the Sessions view.
 * The age is redrawn every 30 s without asking the server again.
 */

import * as vscode from 'vscode';

import type { StoreCache } from './cache';
import type { ServerState } from './client';
import { activeFolder, folderId } from './folders';
import type { Checkpoint, Following, SetAside, WatchLimit } from './protocol';
import { statusText } from './statusText';

const TICK_MS = 30_000;

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly disposables: { dispose(): unknown }[] = [];
  private readonly timer: NodeJS.Timeout;
  private last:
    | {
        checkpoints: readonly Checkpoint[];
        folderName: string;
        following: Following | undefined;
        watchLimit: WatchLimit | null;
        setAside: readonly SetAside[];
      }
    | undefined;
  private generation = 0;

  constructor(
    private readonly cache: StoreCache,
    private readonly serverState: () => ServerState,
  ) {
    this.item = vscode.window.createStatusBarItem('turnback.status', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'Turnback';
    this.item.command = 'turnback.showView';
    this.disposables.push(
      this.item,
      cache.onDidChange(() => {
        void this.update();
      }),
      vscode.window.onDidChangeActiveTextEditor(() => {
        void this.update();
      }),
    );
    this.timer = setInterval(() => {
      this.redraw();
    }, TICK_MS);
    void this.update();
  }

  /** Fetches the active folder's checkpoints (from the cache) and redraws. */
  async update(): Promise<void> {
    const generation = ++this.generation;
    const state = this.serverState();
    const folder = activeFolder();
    if (folder === undefined) {
      this.item.hide();
      return;
    }
    if (state.kind === 'failed') {
      this.last = undefined;
      this.item.text = '$(warning) Turnback';
      this.item.tooltip = `${state.reason} Click to show the log.`;
      this.item.command = 'turnback.showOutput';
      this.item.show();
      return;
    }
    try {
      const [checkpoints, status] = await Promise.all([
        this.cache.checkpoints(folderId(folder)),
        this.cache.status(folderId(folder)),
      ]);
      if (generation !== this.generation) {
        return; // a newer update is on its way
      }
      this.last = {
        checkpoints,
        folderName: folder.name,
        following: status.following,
        watchLimit: status.watchLimit ?? null,
        setAside: status.setAside ?? [],
      };
      this.item.command = 'turnback.showView';
      this.redraw();
    } catch {
      // The server is starting or failed; the state change triggers another update.
      if (generation === this.generation) {
        this.item.hide();
      }
    }
  }

  private redraw(): void {
    if (this.last === undefined) {
      return;
    }
    const { checkpoints, folderName, following, watchLimit, setAside } = this.last;
    const { text, tooltip } = statusText(checkpoints, folderName, Date.now(), following, watchLimit, setAside);
    this.item.text = text;
    this.item.tooltip = tooltip;
    this.item.show();
  }

  dispose(): void {
    clearInterval(this.timer);
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
