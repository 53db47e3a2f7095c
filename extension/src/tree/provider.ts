/**
 * The Sessions view: fetches through the cache, builds nodes with tree/model.ts,
 * and turns them into TreeItems. Refreshes when the cache drops data (a
 * `turnback/didChange`, Load more…, Refresh), debounced so that a burst of
 * appends redraws once.
 */

import * as vscode from 'vscode';

import type { StoreCache } from '../cache';
import type { ServerState } from '../client';
import { describeError, errorText } from '../errors';
import { folderId } from '../folders';
import type { Checkpoint, SessionInfo } from '../protocol';
import { changeUriParts } from '../uris';
import { noCheckpointNote, stepNodes, turnKey, turnNodes } from './turns';
import {
  type CheckpointNode,
  type SessionNode,
  type TreeNode,
  type TurnNode,
  bearsCheckpoint,
  changeNodes,
  checkpointRefs,
  eventKey,
  eventNodes,
  folderKey,
  folderNode,
  message,
  sessionKey,
  sessionNode,
  sessionNodes,
} from './model';
import { checkpointTitle, checkpointTooltip, rowLabel } from './labels';
import { formatAge, formatClock, inline } from '../format';

/** The session the store files checkpoints made outside any agent session under. */
export const WORKSPACE_SESSION = 'workspace';

const REFRESH_DELAY_MS = 150;
/** VS Code applies tree refreshes ~200 ms after they are fired; reveal after that. */
const REVEAL_RETRY_MS = 400;
const REVEAL_ATTEMPTS = 4;

export class SessionTreeProvider implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<TreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  /** The latest node object per key, for getParent and reveal. */
  private readonly nodes = new Map<string, TreeNode>();
  /** Sessions shown although not on the loaded page (Show Session…, Search Sessions…). */
  private readonly pinned = new Map<string, SessionInfo[]>();
  private timer: NodeJS.Timeout | undefined;
  /** Sessions shown as turns (the default) or as the stream of their events. */
  private eventsMode = false;
  /** Thinking and usage steps shown in turns. */
  private showFolded = false;
  /** Folders with no store: with none anywhere, the view is empty and its welcome shows. */
  readonly noStore = new Set<string>();
  private lastNoStore: boolean | undefined;
  private readonly noStoreChanged = new vscode.EventEmitter<boolean>();
  /** Fires when "no folder has a store" (the first run) starts or stops being true. */
  readonly onDidChangeNoStore = this.noStoreChanged.event;
  private readonly disposables: { dispose(): unknown }[] = [];

  constructor(
    private readonly cache: StoreCache,
    private readonly serverState: () => ServerState,
  ) {
    this.disposables.push(
      this.changed,
      this.noStoreChanged,
      cache.onDidChange(() => {
        this.refreshSoon();
      }),
    );
  }

  /** Redraws at once (a pending debounced redraw is folded in). */
  refreshNow(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.changed.fire(undefined);
  }

  setEventsMode(on: boolean): void {
    this.eventsMode = on;
    void vscode.commands.executeCommand('setContext', 'turnback.eventsView', on);
    this.refreshNow();
  }

  get showingEvents(): boolean {
    return this.eventsMode;
  }

  toggleFolded(): void {
    this.showFolded = !this.showFolded;
    void vscode.commands.executeCommand('setContext', 'turnback.showFolded', this.showFolded);
    this.refreshNow();
  }

  refreshSoon(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.changed.fire(undefined);
    }, REFRESH_DELAY_MS);
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    const state =
      node.collapsible === 'expanded'
        ? vscode.TreeItemCollapsibleState.Expanded
        : node.collapsible === 'collapsed'
          ? vscode.TreeItemCollapsibleState.Collapsed
          : vscode.TreeItemCollapsibleState.None;
    const item = new vscode.TreeItem(node.label, state);
    item.id = node.key;
    item.description = node.description;
    item.contextValue = node.contextValue;
    if (node.tooltip !== undefined) {
      const md = new vscode.MarkdownString(node.tooltip);
      item.tooltip = md;
    }
    if (node.icon !== undefined) {
      item.iconPath = new vscode.ThemeIcon(
        node.icon.id,
        node.icon.color !== undefined ? new vscode.ThemeColor(node.icon.color) : undefined,
      );
    }
    switch (node.type) {
      case 'change':
        // The file's own icon from the icon theme, and the A/M/D decoration.
        item.resourceUri = vscode.Uri.from(
          changeUriParts({ folder: node.folder, checkpoint: node.checkpoint.id, path: node.path, status: node.status }),
        );
        item.iconPath = vscode.ThemeIcon.File;
        item.command = { command: 'turnback.openChange', title: 'Open Changes', arguments: [node] };
        break;
      case 'loadMore':
        item.command = { command: 'turnback.loadMore', title: 'Load More', arguments: [node] };
        break;
      case 'message':
        if (node.command !== undefined) {
          item.command = { command: node.command.id, title: node.command.title, arguments: node.command.args };
        }
        break;
      default:
        break;
    }
    item.accessibilityInformation = { label: [node.label, node.description].filter(Boolean).join(', ') };
    return item;
  }

  /**
   * Children keep the object of the same key from one refresh to the next
   * (updated in place): VS Code knows elements by object, and reveal() of a
   * node kept from earlier must find it.
   */
  async getChildren(node?: TreeNode): Promise<TreeNode[]> {
    const children = await this.children(node);
    return children.map((fresh) => {
      const old = this.nodes.get(fresh.key);
      if (old?.type !== fresh.type) {
        this.nodes.set(fresh.key, fresh);
        return fresh;
      }
      const target = old as unknown as Record<string, unknown>;
      for (const k of Object.keys(target)) {
        if (!(k in fresh)) {
          // eslint-disable-next-line @typescript-eslint/no-dynamic-delete
          delete target[k];
        }
      }
      Object.assign(target, fresh);
      return old;
    });
  }

  getParent(node: TreeNode): TreeNode | undefined {
    return node.parentKey !== undefined ? this.nodes.get(node.parentKey) : undefined;
  }

  private async children(node?: TreeNode): Promise<TreeNode[]> {
    if (node === undefined) {
      return this.roots();
    }
    try {
      switch (node.type) {
        case 'folder':
          return await this.sessionsOf(node.folder);
        case 'session':
          return this.eventsMode ? await this.eventsOf(node) : await this.turnsOf(node);
        case 'turn':
          return await this.insideTurn(node);
        case 'step':
          return node.safety !== undefined ? [node.safety] : [];
        case 'event':
        case 'checkpoint':
          if (node.type === 'event' && node.safety !== undefined) {
            return [node.safety]; // a rewind's or an undo's row: the checkpoint it took first
          }
          if (!bearsCheckpoint(node)) {
            return [];
          }
          return changeNodes(
            node,
            node.checkpoint.previous !== undefined
              ? await this.cache.changes(node.folder, node.checkpoint.previous.id, node.checkpoint.id)
              : undefined,
          );
        default:
          return [];
      }
    } catch (err) {
      return [
        message(node.key, 99, describeError('Loading', err), {
          icon: { id: 'error', color: 'errorForeground' },
          contextValue: 'message error',
          command: { id: 'turnback.showOutput', title: 'Show Server Log' },
        }),
      ];
    }
  }

  private async roots(): Promise<TreeNode[]> {
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (folders.length === 0) {
      return [];
    }
    const state = this.serverState();
    if (state.kind === 'failed') {
      return [
        message('root', 0, 'Turnback server is not running', {
          description: state.reason,
          tooltip: `${state.reason}  \nClick to restart the server.`,
          icon: { id: 'warning', color: 'problemsWarningIcon.foreground' },
          contextValue: 'message serverFailed',
          command: { id: 'turnback.restartServer', title: 'Restart Server' },
        }),
      ];
    }
    const nodes = await Promise.all(
      folders.map(async (f) => {
        const uri = folderId(f);
        const status = await this.cache.status(uri).catch(() => undefined);
        if (status?.exists === false) {
          this.noStore.add(uri);
        } else {
          this.noStore.delete(uri);
        }
        return folderNode({ uri, name: f.name }, status);
      }),
    );
    const none = nodes.every((n) => this.noStore.has(n.folder));
    if (none !== this.lastNoStore) {
      this.lastNoStore = none;
      void vscode.commands.executeCommand('setContext', 'turnback.noStore', none);
      this.noStoreChanged.fire(none);
    }
    // No store anywhere: an empty view, so that its welcome (viewsWelcome) explains.
    return none ? [] : nodes;
  }

  private async sessionsOf(folder: string): Promise<TreeNode[]> {
    const [listed, checkpoints] = await Promise.all([this.cache.sessions(folder), this.cache.checkpoints(folder)]);
    const now = Date.now();
    // Checkpoints made outside any agent session sit directly under the folder, by time
    // among the sessions (newest first), not inside a "Workspace checkpoints" row.
    const loose = looseCheckpoints(folder, checkpoints, now);
    const result = { ...listed, sessions: listed.sessions.filter((s) => s.id !== WORKSPACE_SESSION) };
    if (result.sessions.length < listed.sessions.length) {
      result.total -= 1;
    }
    const nodes = mergeByTime(
      sessionNodes(folder, result, now).filter((n) => !(loose.length > 0 && n.type === 'message')),
      loose,
      result.sessions,
      checkpoints,
    );
    const loaded = new Set(result.sessions.map((s) => s.id));
    const extra = (this.pinned.get(folder) ?? []).filter((s) => !loaded.has(s.id));
    if (extra.length === 0) {
      return nodes;
    }
    // Pinned sessions go before "Load more…" so the page marker stays last.
    const more = nodes.length > 0 && nodes[nodes.length - 1]?.type === 'loadMore' ? nodes.pop() : undefined;
    const pinnedNodes = extra.map((s) => {
      const n = sessionNode(folder, s, now);
      return { ...n, description: `${n.description ?? ''} · found` };
    });
    return [...nodes.filter((n) => n.type !== 'message'), ...pinnedNodes, ...(more ? [more] : [])];
  }

  private async turnsOf(node: SessionNode): Promise<TreeNode[]> {
    const result = await this.cache.turns(node.folder, node.sessionId);
    return turnNodes(node.folder, node.sessionId, result);
  }

  /** A turn's changed files (start ↔ end), then its steps. */
  private async insideTurn(node: TurnNode): Promise<TreeNode[]> {
    const steps = this.cache.steps(node.folder, node.sessionId, node.turnId);
    const head: TreeNode[] = [];
    const note = noCheckpointNote(node);
    if (note !== undefined) {
      head.push(note);
    }
    const cp = node.checkpoint;
    if (cp?.previous !== undefined) {
      const changes = await this.cache.changes(node.folder, cp.previous.id, cp.id);
      head.push(...changeNodes({ ...node, checkpoint: cp }, changes));
    }
    const [done, checkpoints] = await Promise.all([steps, this.cache.checkpoints(node.folder)]);
    return [...head, ...stepNodes(node, done, this.showFolded, checkpoints)];
  }

  private async eventsOf(node: SessionNode): Promise<TreeNode[]> {
    const [result, checkpoints] = await Promise.all([
      this.cache.session(node.folder, node.sessionId, node.events),
      this.cache.checkpoints(node.folder),
    ]);
    return eventNodes({
      folder: node.folder,
      sessionId: node.sessionId,
      result,
      checkpoints,
      now: Date.now(),
    });
  }

  /** The folder's node, fetching the roots if the tree has not shown them yet. */
  private async folderNodeOf(folder: string): Promise<TreeNode | undefined> {
    const known = this.nodes.get(folderKey(folder));
    if (known !== undefined) {
      return known;
    }
    const roots = await this.getChildren(undefined);
    return roots.find((r) => r.key === folderKey(folder));
  }

  /** The session's node, pinning the session when it is not on the loaded page. */
  private async sessionNodeOf(folder: string, session: SessionInfo): Promise<TreeNode | undefined> {
    const loaded = await this.cache.sessions(folder).catch(() => undefined);
    if (loaded?.sessions.some((s) => s.id === session.id) !== true) {
      const list = this.pinned.get(folder) ?? [];
      if (!list.some((s) => s.id === session.id)) {
        list.push(session);
        this.pinned.set(folder, list);
      }
    }
    const parent = await this.folderNodeOf(folder);
    if (parent === undefined) {
      return undefined;
    }
    await this.getChildren(parent);
    return this.nodes.get(sessionKey(folder, session.id));
  }

  /**
   * Reveals a node. VS Code applies a refresh a little later than it is fired
   * (debounced) and forgets the refreshed nodes then, so a reveal right after
   * a change can miss its node: the refresh is fired now, and a miss retried.
   */
  private async reveal(view: vscode.TreeView<TreeNode>, node: TreeNode, focus: boolean): Promise<void> {
    this.refreshNow();
    let last: unknown;
    for (let attempt = 0; attempt < REVEAL_ATTEMPTS; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, REVEAL_RETRY_MS));
      try {
        await view.reveal(node, { select: true, focus, expand: node.type === 'session' });
        return;
      } catch (err) {
        last = err;
      }
    }
    void vscode.window.showWarningMessage(`Could not show it in the Turnback view: ${errorText(last)}`);
  }

  /**
   * Shows a session in the tree, expanded and selected, even when it is not on
   * the loaded page of its folder.
   */
  async revealSession(view: vscode.TreeView<TreeNode>, folder: string, session: SessionInfo): Promise<void> {
    const node = await this.sessionNodeOf(folder, session);
    if (node === undefined) {
      void vscode.window.showWarningMessage(`Session ${inline(session.id)} is not in the tree of this folder.`);
      return;
    }
    await this.reveal(view, node, true);
  }

  /** Selects an event (a new checkpoint's, say) in the tree, expanding its session. */
  async revealEvent(view: vscode.TreeView<TreeNode>, folder: string, sessionId: string, eventId: string): Promise<void> {
    if (sessionId === WORKSPACE_SESSION) {
      const parent = await this.folderNodeOf(folder);
      if (parent !== undefined) {
        await this.getChildren(parent);
        const cps = await this.cache.checkpoints(folder).catch(() => []);
        const cp = cps.find((c) => c.eventId === eventId);
        const node = cp !== undefined ? this.nodes.get(looseKey(folder, cp.id)) : undefined;
        if (node !== undefined) {
          await this.reveal(view, node, false);
        }
      }
      return;
    }
    if (!this.eventsMode) {
      await this.revealTurn(view, folder, sessionId, undefined, eventId);
      return;
    }
    const window = await this.cache.session(folder, sessionId, undefined).catch(() => undefined);
    if (window === undefined) {
      return;
    }
    const session = await this.sessionNodeOf(folder, window.session);
    if (session === undefined) {
      return;
    }
    await this.getChildren(session);
    const node = this.nodes.get(eventKey(folder, sessionId, eventId));
    if (node !== undefined) {
      await this.reveal(view, node, false);
    }
  }

  /** Selects a turn (by id, or the one holding an event, else the latest) in its session. */
  async revealTurn(
    view: vscode.TreeView<TreeNode>,
    folder: string,
    sessionId: string,
    turnId: string | undefined,
    eventId?: string,
  ): Promise<void> {
    const turns = await this.cache.turns(folder, sessionId).catch(() => undefined);
    if (turns === undefined) {
      return;
    }
    const session = await this.sessionNodeOf(folder, turns.session);
    if (session === undefined) {
      return;
    }
    await this.getChildren(session);
    const found =
      turns.turns.find((t) => t.id === turnId) ??
      turns.turns.find((t) => eventId !== undefined && t.lastEvent === eventId) ??
      (turnId === undefined ? turns.turns[turns.turns.length - 1] : undefined);
    const node = found !== undefined ? this.nodes.get(turnKey(folder, sessionId, found.id)) : undefined;
    if (node !== undefined) {
      await this.reveal(view, node, true);
    } else if (turnId !== undefined) {
      void vscode.window.showInformationMessage('That turn is not among the loaded turns of its session: Load earlier turns… shows it.');
    }
  }

  dispose(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
    }
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

function looseKey(folder: string, checkpointId: string): string {
  return `c|${folder}|${checkpointId}`;
}

/** The workspace session's checkpoints as rows of the folder, newest first. */
function looseCheckpoints(folder: string, all: readonly Checkpoint[], now: number): CheckpointNode[] {
  const refs = checkpointRefs(all);
  return all
    .filter((cp) => cp.sessionId === WORKSPACE_SESSION || cp.sessionId === null)
    .sort((a, b) => (a.ts < b.ts ? 1 : a.ts > b.ts ? -1 : 0))
    .flatMap((cp) => {
      const ref = refs.get(cp.id);
      if (ref === undefined) {
        return [];
      }
      const node: CheckpointNode = {
        type: 'checkpoint',
        key: looseKey(folder, cp.id),
        parentKey: folderKey(folder),
        folder,
        checkpoint: ref,
        label: rowLabel(checkpointTitle(cp)), // the icon says checkpoint
        description: `${formatClock(cp.ts)} · ${formatAge(cp.ts, now)}`,
        tooltip: checkpointTooltip(cp),
        contextValue: 'checkpoint',
        collapsible: 'collapsed',
        icon: { id: 'git-commit' },
      };
      return [node];
    });
}

/** Sessions (newest first, as listed) and loose checkpoints merged by time; paging rows stay last. */
function mergeByTime(
  sessionRows: TreeNode[],
  loose: CheckpointNode[],
  sessions: readonly SessionInfo[],
  checkpoints: readonly Checkpoint[],
): TreeNode[] {
  const started = new Map(sessions.map((s) => [s.id, s.startedAt ?? '']));
  const cpTs = new Map(checkpoints.map((c) => [c.id, c.ts]));
  const timeOf = (n: TreeNode): string =>
    n.type === 'session' ? (started.get(n.sessionId) ?? '') : n.type === 'checkpoint' ? (cpTs.get(n.checkpoint.id) ?? '') : '';
  const tail = sessionRows.filter((n) => n.type !== 'session');
  const rows = [...sessionRows.filter((n) => n.type === 'session'), ...loose];
  rows.sort((a, b) => (timeOf(a) < timeOf(b) ? 1 : timeOf(a) > timeOf(b) ? -1 : 0));
  return [...rows, ...tail];
}
