/**
 * Tree nodes built from server responses. Pure (no VS Code), so the shape of
 * the tree — labels, context values, paging, branches, the head — is unit-tested;
 * tree/provider.ts only turns these nodes into `TreeItem`s and fetches data.
 *
 * Context values are space-separated tags (`event checkpoint head`) matched in
 * package.json menus with `viewItem =~ /\bcheckpoint\b/`.
 */

import { countOf, formatAge, formatClock, formatCount, formatTimestamp, oneLine, shortId, visible } from '../format';
import type {
  Change,
  Checkpoint,
  SessionEvent,
  SessionInfo,
  SessionResult,
  SessionsResult,
  StatusResult,
} from '../protocol';
import { codeSpan, escapeMarkdown } from '../markdown';
import { basename, dirname } from '../uris';
import {
  type IconSpec,
  checkpointTitle,
  checkpointTooltip,
  eventLabel,
  eventSummary,
  kindIcon,
  rowLabel,
  sessionTitle,
  sessionTooltip,
} from './labels';

export type Collapsible = 'none' | 'collapsed' | 'expanded';

interface BaseNode {
  /** Stable and unique in the tree: VS Code keeps expansion and selection by it. */
  key: string;
  parentKey?: string;
  label: string;
  description?: string;
  /** Markdown. */
  tooltip?: string;
  contextValue: string;
  collapsible: Collapsible;
  icon?: IconSpec;
}

export interface FolderNode extends BaseNode {
  type: 'folder';
  folder: string;
}

export interface SessionNode extends BaseNode {
  type: 'session';
  folder: string;
  sessionId: string;
  title: string;
  /** The event count the sessions list gave, to place the window of latest events. */
  events?: number;
}

/** Where a checkpoint sits: what its changed files are compared against. */
export interface CheckpointRef {
  id: string;
  title: string;
  /** The checkpoint taken just before it in this folder; absent for the first. */
  previous?: { id: string; title: string };
  files?: number;
  /** Pulled from this machine: files only (its conversation is the teammate's). */
  origin?: string;
}

export interface EventNode extends BaseNode {
  type: 'event';
  folder: string;
  sessionId: string;
  eventId: string;
  kind: string;
  head: boolean;
  checkpoint?: CheckpointRef;
  /** A rewind's or an undo's safety checkpoint, shown inside its row (`checkpoint` is it). */
  safety?: CheckpointNode;
}

/** A checkpoint of the session whose event is not among the loaded events. */
export interface CheckpointNode extends BaseNode {
  type: 'checkpoint';
  folder: string;
  sessionId?: string;
  checkpoint: CheckpointRef;
}

export interface ChangeNode extends BaseNode {
  type: 'change';
  folder: string;
  checkpoint: CheckpointRef;
  path: string;
  status: Change['status'];
  binary: boolean;
}

export interface LoadMoreNode extends BaseNode {
  type: 'loadMore';
  folder: string;
  what: 'sessions' | 'events' | 'turns';
  sessionId?: string;
  loaded: number;
  total: number;
}

/** A prompt and everything until the next one (tree/turns.ts builds them). */
export interface TurnNode extends BaseNode {
  type: 'turn';
  folder: string;
  sessionId: string;
  turnId: string;
  prompt: string;
  agent: string;
  /** The checkpoint it started from and the one it ended at (absent: none recorded). */
  before?: string;
  after?: string;
  /** For a turn with no checkpoint before it: the folder's closest one, offered instead. */
  nearest?: { id: string; title: string };
  /** Its start ↔ end as a checkpoint with a previous one: its changed files reuse ChangeNode. */
  checkpoint?: CheckpointRef;
}

/** One step of a turn: a tool call with its result, a response, a thinking block… */
export interface StepNode extends BaseNode {
  type: 'step';
  folder: string;
  sessionId: string;
  eventId: string;
  /** A rewind's or an undo's step: its safety checkpoint, inside its row (as EventNode's). */
  checkpoint?: CheckpointRef;
  safety?: CheckpointNode;
}

export interface MessageNode extends BaseNode {
  type: 'message';
  command?: { id: string; title: string; args?: unknown[] };
}

export type TreeNode =
  | FolderNode
  | SessionNode
  | EventNode
  | CheckpointNode
  | ChangeNode
  | LoadMoreNode
  | TurnNode
  | StepNode
  | MessageNode;

/** Nodes that stand for one checkpoint (rewind, compare and "changed files" apply). */
export type CheckpointBearing =
  | (EventNode & { checkpoint: CheckpointRef })
  | CheckpointNode
  | (TurnNode & { checkpoint: CheckpointRef });

export function bearsCheckpoint(node: TreeNode): node is CheckpointBearing {
  return (node.type === 'event' && node.checkpoint !== undefined) || node.type === 'checkpoint';
}

export function folderKey(folder: string): string {
  return `f|${folder}`;
}

export function sessionKey(folder: string, sessionId: string): string {
  return `s|${folder}|${sessionId}`;
}

export function eventKey(folder: string, sessionId: string, eventId: string): string {
  return `e|${folder}|${sessionId}|${eventId}`;
}

export function message(parentKey: string, index: number, label: string, extra?: Partial<MessageNode>): MessageNode {
  return {
    type: 'message',
    key: `${parentKey}|msg|${String(index)}`,
    parentKey,
    label,
    contextValue: 'message',
    collapsible: 'none',
    icon: { id: 'info' },
    ...extra,
  };
}

// ---------------------------------------------------------------- folders

export function folderNode(
  folder: { uri: string; name: string },
  status: StatusResult | undefined,
): FolderNode {
  let description: string | undefined;
  let tooltip = `**${escapeMarkdown(folder.name)}**`;
  if (status) {
    description = `${countOf(status.sessions, 'session')} · ${countOf(status.checkpoints, 'checkpoint')}`;
    tooltip += `  \nstore: ${codeSpan(status.store)}`;
  }
  return {
    type: 'folder',
    key: folderKey(folder.uri),
    folder: folder.uri,
    label: folder.name,
    description,
    tooltip,
    contextValue: 'folder',
    collapsible: 'expanded',
    icon: { id: 'root-folder' },
  };
}

// ---------------------------------------------------------------- sessions

export function sessionNode(folder: string, s: SessionInfo, now: number): SessionNode {
  const title = sessionTitle(s);
  // the agent and a pulled session's user and host are a transcript's or a store's text
  const parts = [oneLine(s.agent, 40) || 'unknown', formatAge(s.startedAt, now)];
  if (s.origin !== undefined) {
    parts.push(`from ${oneLine(s.origin.user ?? '?', 40)}@${oneLine(s.origin.host ?? s.origin.machine, 60)}`);
  } else if (s.counted === false) {
    parts.push('counting…'); // whether it ended is not known before its lines are read
  } else if (!s.endedAt) {
    parts.push('open');
  }
  return {
    type: 'session',
    key: sessionKey(folder, s.id),
    parentKey: folderKey(folder),
    folder,
    sessionId: s.id,
    title,
    events: s.events ?? undefined,
    label: title,
    description: parts.join(' · '),
    tooltip: sessionTooltip(s),
    // `pulled`: another machine's (read-only; only that machine can forget it on the remote)
    contextValue: s.origin !== undefined ? 'session pulled' : 'session',
    collapsible: 'collapsed',
    icon: { id: 'comment-discussion' },
  };
}

/** The sessions of a folder (as loaded so far), then "Load more…" when there are more. */
export function sessionNodes(folder: string, result: SessionsResult, now: number): TreeNode[] {
  const parentKey = folderKey(folder);
  const nodes: TreeNode[] = result.sessions.map((s) => sessionNode(folder, s, now));
  if (result.sessions.length === 0) {
    nodes.push(
      message(parentKey, 0, 'No sessions recorded yet', {
        description: 'run an agent, or Import Sessions…',
        command: { id: 'turnback.importSessions', title: 'Import Sessions…' },
      }),
    );
  }
  if (result.total > result.sessions.length) {
    nodes.push(loadMore(parentKey, folder, 'sessions', result.sessions.length, result.total));
  }
  return nodes;
}

export function loadMore(
  parentKey: string,
  folder: string,
  what: 'sessions' | 'events' | 'turns',
  loaded: number,
  total: number,
  sessionId?: string,
): LoadMoreNode {
  return {
    type: 'loadMore',
    key: `${parentKey}|more`,
    parentKey,
    folder,
    what,
    sessionId,
    loaded,
    total,
    // Sessions come newest first, so more are older ones below; a session's
    // latest events are shown, so more are earlier ones above.
    label: what === 'sessions' ? 'Load more…' : `Load earlier ${what}…`,
    description: `${what === 'sessions' ? '' : 'the last '}${formatCount(loaded)} of ${formatCount(total)} ${what} shown`,
    contextValue: 'loadMore',
    collapsible: 'none',
    icon: { id: 'ellipsis' },
  };
}

// ---------------------------------------------------------------- branches

/** Where an event sits in its session's tree of events. */
export interface Placement {
  /** 1 for the first line of events; each branch gets the next number in order of appearance. */
  lane: number;
  /** The event starts a branch: its parent already had an earlier child (or it is a later root). */
  branchStart: boolean;
  /** How many children the event has (a branch point has more than one). */
  children: number;
  /** On the path from the root to the head; undefined when the head is not loaded. */
  onHeadPath: boolean | undefined;
}

/**
 * Places each event on a lane. Events come in append order, so a parent comes
 * before its children; the first child continues its parent's lane and every
 * later child starts a new one (a branch made by a rewind or a fork).
 */
export function placeEvents(events: readonly SessionEvent[], head: string | null): Map<string, Placement> {
  const out = new Map<string, Placement>();
  const continued = new Set<string>();
  let nextLane = 1;
  for (const e of events) {
    let lane: number;
    let branchStart = false;
    const parent = e.parent !== null ? out.get(e.parent) : undefined;
    if (e.parent !== null && parent !== undefined) {
      parent.children += 1;
      if (continued.has(e.parent)) {
        lane = nextLane++;
        branchStart = true;
      } else {
        continued.add(e.parent);
        lane = parent.lane;
      }
    } else if (e.parent !== null) {
      // The parent is before the loaded window: the event continues the first line.
      lane = 1;
      nextLane = Math.max(nextLane, 2);
    } else {
      // A root: a line of its own unless it is the very first.
      branchStart = nextLane > 1;
      lane = nextLane++;
    }
    out.set(e.id, { lane, branchStart, children: 0, onHeadPath: undefined });
  }
  if (head !== null && out.has(head)) {
    for (const p of out.values()) {
      p.onHeadPath = false;
    }
    const byId = new Map(events.map((e) => [e.id, e]));
    let cur: string | null = head;
    const seen = new Set<string>();
    while (cur !== null && !seen.has(cur)) {
      seen.add(cur);
      const p = out.get(cur);
      if (p === undefined) {
        break;
      }
      p.onHeadPath = true;
      cur = byId.get(cur)?.parent ?? null;
    }
  }
  return out;
}

// ---------------------------------------------------------------- checkpoints

/** A checkpoint as nodes refer to it, with the one before it (by time) in the folder. */
export function checkpointRefs(all: readonly Checkpoint[]): Map<string, CheckpointRef> {
  const sorted = [...all].sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
  const refs = new Map<string, CheckpointRef>();
  // the previous checkpoint of the same machine: a teammate's pulled checkpoint is compared
  // with the one the teammate took before it, not with whatever this machine took meanwhile
  const prev = new Map<string, CheckpointRef>();
  for (const cp of sorted) {
    const before = prev.get(cp.origin ?? '');
    const ref: CheckpointRef = {
      id: cp.id,
      title: checkpointTitle(cp),
      previous: before ? { id: before.id, title: before.title } : undefined,
      files: cp.files,
      ...(cp.origin !== undefined ? { origin: cp.origin } : {}),
    };
    refs.set(cp.id, ref);
    prev.set(cp.origin ?? '', ref);
  }
  return refs;
}

function checkpointIdInData(e: SessionEvent): string | undefined {
  if (e.kind !== 'checkpoint') {
    return undefined;
  }
  const data = e.data ?? {};
  for (const key of ['checkpoint', 'checkpointId', 'id']) {
    const v = data[key];
    if (typeof v === 'string' && v.length > 0) {
      return v;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------- events

/** A session's events from `offset` on (the latest page or pages). */
export type EventWindow = Pick<SessionResult, 'session' | 'events' | 'head' | 'total'> & { offset: number };

export interface EventsInput {
  folder: string;
  sessionId: string;
  result: Pick<EventWindow, 'events' | 'head' | 'total' | 'offset'>;
  /** Every checkpoint of the folder (any order): for "previous" and for the session's own. */
  checkpoints: readonly Checkpoint[];
  now: number;
}

/**
 * The latest events of a session, in order, with the head marked and branches
 * shown; an event that owns a checkpoint can be expanded into its changed
 * files. "Load earlier events…" comes first while earlier ones exist; once all
 * are loaded, checkpoints of the session whose event is not among them follow,
 * so none is out of reach.
 */
export function eventNodes(input: EventsInput): TreeNode[] {
  const { folder, sessionId, result, checkpoints } = input;
  const parentKey = sessionKey(folder, sessionId);
  const refs = checkpointRefs(checkpoints);
  const byEvent = new Map<string, Checkpoint>();
  const byId = new Map<string, Checkpoint>();
  for (const cp of checkpoints) {
    byId.set(cp.id, cp);
    if (cp.eventId !== null && cp.sessionId === sessionId) {
      byEvent.set(cp.eventId, cp);
    }
  }
  const events = result.events;
  // a rewind's or an undo's safety checkpoint is shown inside the operation's row: one
  // user action, one row (its own row read "before undo of rewind to “X”" above "Undo of
  // rewind to “X”")
  const folded = new Map<string, Checkpoint>(); // operation's event id → its safety checkpoint
  const foldedIds = new Set<string>();
  for (const e of events) {
    const taken = e.kind === 'rewind' ? safetyTaken(e.data?.safetyCheckpoint, byId) : undefined;
    if (taken !== undefined) {
      folded.set(e.id, taken);
      foldedIds.add(taken.id);
    }
  }
  const placement = placeEvents(events, result.head);
  const branched = events.some((e) => placement.get(e.id)?.branchStart === true);
  const summaries = new Map(events.map((e) => [e.id, eventSummary(e, 40) || e.kind]));
  const shown = new Set<string>();
  const nodes: TreeNode[] = [];
  if (result.offset > 0) {
    nodes.push(loadMore(parentKey, folder, 'events', events.length, result.total, sessionId));
  }

  let offBefore = false; // the row above is off the current branch, and said so
  for (const e of events) {
    const p = placement.get(e.id);
    const off = p?.onHeadPath === false;
    const fromData = checkpointIdInData(e);
    const cp = byEvent.get(e.id) ?? (fromData !== undefined ? byId.get(fromData) : undefined);
    const ref = cp ? refs.get(cp.id) : undefined;
    if (cp) {
      shown.add(cp.id);
    }
    const isHead = result.head === e.id;
    if (cp !== undefined && foldedIds.has(cp.id) && !isHead && e.kind === 'checkpoint') {
      continue; // inside its operation's row
    }
    const taken = folded.get(e.id);
    const takenRef = taken !== undefined ? refs.get(taken.id) : undefined;
    const tags = ['event'];
    if (ref) {
      tags.push('checkpoint');
    }
    if (isHead) {
      tags.push('head');
    }
    // the time first: VS Code cuts a row's end, and it is what tells rows apart
    const desc: string[] = [formatClock(e.ts)];
    if (isHead) {
      desc.push('● head');
    }
    // a branch is said where it starts; its later rows say it in their tooltip only (every
    // row of the current branch read "· branch 2")
    if (p?.branchStart === true) {
      const from = e.parent !== null ? summaries.get(e.parent) : undefined;
      desc.push(from !== undefined ? `↳ branch ${String(p.lane)} from “${from}”` : `↳ branch ${String(p.lane)}`);
    }
    if (p !== undefined && p.children > 1) {
      desc.push(`${String(p.children)} branches`);
    }
    if (off) {
      // once, on the first row of a run: every row of an abandoned branch said it
      if (!offBefore) {
        desc.push('off the current branch');
      }
      tags.push('offBranch');
    }
    offBefore = off;
    if (cp && e.kind !== 'checkpoint' && ref) {
      desc.push(`◆ ${ref.title}`);
    }
    let icon = kindIcon(e);
    if (isHead) {
      icon = { id: icon.id, color: 'charts.blue' };
    } else if (p?.onHeadPath === false) {
      icon = { id: icon.id, color: 'disabledForeground' };
    }
    const tooltipLines = [
      `**${escapeMarkdown(eventLabel(e, cp))}**`,
      '',
      `id: \`${e.id}\``,
      `time: ${escapeMarkdown(formatTimestamp(e.ts))}`,
    ];
    if (isHead) {
      tooltipLines.push('the session head: new events attach here');
    }
    if (branched && p !== undefined && p.lane > 1) {
      tooltipLines.push(`branch ${String(p.lane)}`);
    }
    if (off) {
      tooltipLines.push('off the current branch');
    }
    if (cp) {
      tooltipLines.push('', checkpointTooltip(cp));
    }
    const key = eventKey(folder, sessionId, e.id);
    let safety: CheckpointNode | undefined;
    if (taken !== undefined && takenRef !== undefined) {
      tags.push(SAFETY_TAG);
      tooltipLines.push('', ...safetyLines(takenRef));
      safety = checkpointRow(folder, sessionId, taken, takenRef, input.now, key);
    }
    nodes.push({
      type: 'event',
      key,
      parentKey,
      folder,
      sessionId,
      eventId: e.id,
      kind: e.kind,
      head: isHead,
      checkpoint: safety !== undefined ? takenRef : ref,
      safety,
      label: rowLabel(eventLabel(e, cp)),
      description: desc.filter((d) => d.length > 0).join(' · '),
      tooltip: tooltipLines.join('  \n'),
      contextValue: tags.join(' '),
      collapsible: ref !== undefined || safety !== undefined ? 'collapsed' : 'none',
      icon,
    });
  }

  if (result.offset === 0) {
    const rest = checkpoints
      .filter((cp) => cp.sessionId === sessionId && !shown.has(cp.id))
      .sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
    for (const cp of rest) {
      const ref = refs.get(cp.id);
      if (ref) {
        nodes.push(checkpointRow(folder, sessionId, cp, ref, input.now, parentKey));
      }
    }
  }
  if (events.length === 0 && nodes.length === 0) {
    nodes.push(message(parentKey, 0, 'No events in this session'));
  }
  return nodes;
}

/** A checkpoint's own row: under its session (its event not loaded) or inside the row of
 * the rewind or undo that took it (`parentKey`). */
export function checkpointRow(
  folder: string,
  sessionId: string,
  cp: Checkpoint,
  ref: CheckpointRef,
  now: number,
  parentKey: string,
): CheckpointNode {
  return {
    type: 'checkpoint',
    key: `c|${folder}|${cp.id}`,
    parentKey,
    folder,
    sessionId,
    checkpoint: ref,
    label: rowLabel(ref.title), // the icon says checkpoint
    description: `${formatClock(cp.ts)} · ${formatAge(cp.ts, now)}`,
    tooltip: checkpointTooltip(cp),
    contextValue: 'checkpoint',
    collapsible: 'collapsed',
    icon: { id: 'git-commit' },
  };
}

// ---------------------------------------------------------------- safety checkpoints

/** The context tag of a rewind's or an undo's row holding its safety checkpoint: its
 * "Rewind to the State Before This" (package.json) matches it. */
export const SAFETY_TAG = 'beforeSaved';

/**
 * The checkpoint a rewind's or an undo's event or step names as the one it took first,
 * when the server's listing marks it a safety checkpoint (`safetyOf`: automatic, of this
 * workspace); anything else a store's event may say there is not folded, nor offered.
 */
export function safetyTaken(id: unknown, byId: ReadonlyMap<string, Checkpoint>): Checkpoint | undefined {
  if (typeof id !== 'string') {
    return undefined;
  }
  const cp = byId.get(id);
  return cp?.safetyOf !== undefined ? cp : undefined;
}

/** What a rewind's or an undo's tooltip says of the state it saved first (Markdown). */
export function safetyLines(ref: CheckpointRef): string[] {
  return [
    `Before it, Turnback saved the workspace as “${escapeMarkdown(ref.title)}”.`,
    'Rewind to the State Before This puts it back; expand the row for that checkpoint.',
  ];
}

// ---------------------------------------------------------------- changes

/** At most this many changed files are listed under one checkpoint. */
export const MAX_CHANGES_SHOWN = 500;

/**
 * The files a checkpoint changed compared with the checkpoint before it, folders
 * first by path. The first checkpoint has nothing before it: one line says so.
 */
export function changeNodes(
  parent: CheckpointBearing,
  changes: readonly Change[] | undefined,
  max = MAX_CHANGES_SHOWN,
): TreeNode[] {
  const cp = parent.checkpoint;
  if (cp.previous === undefined || changes === undefined) {
    const files = typeof cp.files === 'number' ? `: ${countOf(cp.files, 'file')}` : '';
    return [
      message(parent.key, 0, `First checkpoint${files}`, {
        description: 'nothing earlier to compare with; use Compare with Now',
        icon: { id: 'info' },
      }),
    ];
  }
  if (changes.length === 0) {
    return [
      message(parent.key, 0, 'No files changed', {
        description: `same as ${cp.previous.title}`,
      }),
    ];
  }
  const sorted = [...changes].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const nodes: TreeNode[] = sorted.slice(0, max).map((c) => changeNode(parent, c));
  if (sorted.length > max) {
    nodes.push(
      message(parent.key, 1, `… and ${formatCount(sorted.length - max)} more changed files`, {
        description: 'Compare with Previous Checkpoint shows them all',
      }),
    );
  }
  return nodes;
}

function changeNode(parent: CheckpointBearing, c: Change): ChangeNode {
  const dir = dirname(c.path);
  const stat = c.binary
    ? 'binary'
    : `+${formatCount(c.linesAdded)} −${formatCount(c.linesRemoved)}`;
  const verb = { added: 'Added', modified: 'Modified', deleted: 'Deleted' }[c.status];
  return {
    type: 'change',
    key: `${parent.key}|p|${c.path}`,
    parentKey: parent.key,
    folder: parent.folder,
    checkpoint: parent.checkpoint,
    path: c.path,
    status: c.status,
    binary: c.binary,
    // a file name may hold a bidi override or a line break: shown as escapes
    label: visible(basename(c.path)),
    description: dir ? `${visible(dir)} · ${stat}` : stat,
    tooltip: `${codeSpan(c.path)}  \n${verb} in ${escapeMarkdown(parent.checkpoint.title)}${c.binary ? ' (binary)' : ''}`,
    contextValue: `change ${c.status}${c.binary ? ' binary' : ''}`,
    collapsible: 'none',
  };
}

/** "checkpoint 1a2b3c4d" style fallback for things shown by id only. */
export function describeCheckpointId(id: string): string {
  return `checkpoint ${shortId(id)}`;
}
