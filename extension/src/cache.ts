/**
 * What the tree and the status bar show, fetched once and kept until the
 * server says the store changed (`turnback/didChange`). Changes between two
 * checkpoints never change (checkpoints are immutable), so they stay cached.
 */

import * as vscode from 'vscode';

import type { TurnbackClient } from './client';
import { CheckpointNames } from './checkpointNames';
import { matchFolder, folderId } from './folders';
import type { EventWindow } from './tree/model';
import type {
  Change,
  Checkpoint,
  DidChangeParams,
  FileHistoryResult,
  Step,
  TurnsResult,
  SessionsResult,
  StatusResult,
} from './protocol';

/** Immutable change lists kept at most; the oldest goes first. */
const MAX_CACHED_CHANGES = 200;

export class StoreCache implements vscode.Disposable {
  private readonly memo = new Map<string, Promise<unknown>>();
  private readonly changesMemo = new Map<string, Promise<Change[]>>();
  private readonly limits = new Map<string, number>();
  private readonly changed = new vscode.EventEmitter<string | undefined>();

  /** Fires after data was dropped: a folder URI, or undefined for everything. */
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly client: TurnbackClient,
    private readonly pageSize: () => number,
  ) {}

  private remember<T>(key: string, fetch: () => Promise<T>): Promise<T> {
    const hit = this.memo.get(key) as Promise<T> | undefined;
    if (hit !== undefined) {
      return hit;
    }
    const p = fetch();
    this.memo.set(key, p);
    // A failure is not cached: the next look retries.
    p.catch(() => {
      if (this.memo.get(key) === p) {
        this.memo.delete(key);
      }
    });
    return p;
  }

  private limit(key: string): number {
    return this.limits.get(key) ?? this.pageSize();
  }

  status(folder: string): Promise<StatusResult> {
    return this.remember(`status|${folder}`, () => this.client.request('turnback/status', { folder }));
  }

  /** The newest sessions, as many pages as were asked for. */
  sessions(folder: string): Promise<SessionsResult> {
    const limit = this.limit(`sessions|${folder}`);
    return this.remember(`sessions|${folder}`, () =>
      this.client.request('turnback/sessions', { folder, offset: 0, limit }),
    );
  }

  /**
   * A session's latest events, as many pages as were asked for. `knownTotal`
   * (the event count from the sessions list) places the window without an
   * extra request; if more events arrived since, the window moves to the end.
   */
  session(folder: string, sessionId: string, knownTotal: number | undefined): Promise<EventWindow> {
    const key = `session|${folder}|${sessionId}`;
    const limit = this.limit(key);
    return this.remember(key, async () => {
      const fetch = async (offset: number): Promise<EventWindow> => {
        const [r, names] = await Promise.all([
          this.client.request('turnback/session', { folder, sessionId, offset, limit }),
          this.names(folder),
        ]);
        return { ...r, events: r.events.map((e) => names.event(e)), offset };
      };
      const first = await fetch(Math.max(0, (knownTotal ?? 0) - limit));
      const end = first.offset + first.events.length;
      return end < first.total ? fetch(Math.max(0, first.total - limit)) : first;
    });
  }

  /** A session's latest turns, as many pages as were asked for. */
  turns(folder: string, sessionId: string): Promise<TurnsResult> {
    const key = `turns|${folder}|${sessionId}`;
    const limit = this.limit(key);
    return this.remember(key, () => this.client.request('turnback/turns', { folder, sessionId, limit }));
  }

  /** One turn's steps. */
  steps(folder: string, sessionId: string, turnId: string): Promise<Step[]> {
    return this.remember(`steps|${folder}|${sessionId}|${turnId}`, async () => {
      const [r, names] = await Promise.all([
        this.client.request('turnback/turnSteps', { folder, sessionId, turnId }),
        this.names(folder),
      ]);
      return r.steps.map((st) => names.step(st));
    });
  }

  /** The checkpoints where a file changed, newest first. */
  fileHistory(folder: string, path: string): Promise<FileHistoryResult> {
    const key = `history|${folder}|${path}`;
    const limit = this.limit(key);
    return this.remember(key, async () => {
      const [r, names] = await Promise.all([
        this.client.request('turnback/fileHistory', { folder, path, limit }),
        this.names(folder),
      ]);
      return { ...r, versions: r.versions.map((v) => names.version(v)) };
    });
  }

  /** Every checkpoint of the folder. */
  checkpoints(folder: string): Promise<Checkpoint[]> {
    return this.remember(`checkpoints|${folder}`, async () => {
      const r = await this.client.request('turnback/checkpoints', { folder });
      const names = new CheckpointNames(r.checkpoints);
      return r.checkpoints.map((cp) => names.checkpoint(cp));
    });
  }

  /**
   * Names for the checkpoint ids in store text (checkpointNames.ts), from the folder's
   * checkpoints; none when they cannot be listed, so that the text still shows, with ids.
   */
  private async names(folder: string): Promise<CheckpointNames> {
    try {
      return new CheckpointNames(await this.checkpoints(folder));
    } catch {
      return new CheckpointNames([]);
    }
  }

  /** What changed from one checkpoint to another (cached: both are immutable). */
  changes(folder: string, from: string, to: string): Promise<Change[]> {
    const key = `${folder}|${from}|${to}`;
    const hit = this.changesMemo.get(key);
    if (hit !== undefined) {
      return hit;
    }
    const p = this.client.request('turnback/changes', { folder, from, to }).then((r) => r.changes);
    this.changesMemo.set(key, p);
    p.catch(() => this.changesMemo.delete(key));
    if (this.changesMemo.size > MAX_CACHED_CHANGES) {
      const oldest = this.changesMemo.keys().next().value;
      if (oldest !== undefined) {
        this.changesMemo.delete(oldest);
      }
    }
    return p;
  }

  /** One more page of a file's history next time it is read. */
  loadMoreHistory(folder: string, path: string): void {
    const key = `history|${folder}|${path}`;
    this.limits.set(key, this.limit(key) + this.pageSize());
    this.memo.delete(key);
    this.changed.fire(folder);
  }

  /** One more page of sessions (or of a session's events) next time they are read. */
  loadMore(folder: string, sessionId?: string, what: 'sessions' | 'events' | 'turns' = 'events'): void {
    const key =
      sessionId === undefined
        ? `sessions|${folder}`
        : what === 'turns'
          ? `turns|${folder}|${sessionId}`
          : `session|${folder}|${sessionId}`;
    this.limits.set(key, this.limit(key) + this.pageSize());
    this.memo.delete(key);
    this.changed.fire(folder);
  }

  /** Drops what a `turnback/didChange` says is stale. */
  storeChanged(params: DidChangeParams): void {
    const wf = matchFolder(params.folder);
    if (wf === undefined) {
      this.invalidateAll();
      return;
    }
    const folder = folderId(wf);
    this.memo.delete(`status|${folder}`);
    this.memo.delete(`sessions|${folder}`);
    if (params.checkpoints) {
      this.memo.delete(`checkpoints|${folder}`);
      this.dropPrefix(`history|${folder}|`);
    }
    const sessions = Array.isArray(params.sessions) ? params.sessions : [];
    for (const id of sessions) {
      this.memo.delete(`session|${folder}|${id}`);
      this.memo.delete(`turns|${folder}|${id}`);
      this.dropPrefix(`steps|${folder}|${id}|`);
    }
    if (params.checkpoints) {
      // A checkpoint ends a turn: every session's turns may have changed ends.
      this.dropPrefix(`turns|${folder}|`);
    }
    this.changed.fire(folder);
  }

  private dropPrefix(prefix: string): void {
    for (const key of [...this.memo.keys()]) {
      if (key.startsWith(prefix)) {
        this.memo.delete(key);
      }
    }
  }

  /** Drops everything except immutable change lists (Refresh, a server restart). */
  invalidateAll(): void {
    this.memo.clear();
    this.changed.fire(undefined);
  }

  dispose(): void {
    this.changed.dispose();
  }
}
