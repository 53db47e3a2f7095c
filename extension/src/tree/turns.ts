/**
 * A session as turns: the server builds them (turnback/turns, turnback/turnSteps);
 * this turns them into nodes. Pure (no VS Code), so labels and context values are
 * unit-tested.
 *
 * Context values: `turn` plus `rewindable` (a checkpoint before it, or a nearest one),
 * `comparable` (checkpoints at both ends), `continuable` (an agent that can resume a
 * fork of its own session file).
 */

import { countOf, formatClock, formatCount, formatDuration, formatTimestamp, oneLine, oneLineAtWord } from '../format';
import type { Checkpoint, Step, Turn, TurnsResult } from '../protocol';
import { codeSpan, escapeMarkdown } from '../markdown';
import { checkpointTitle, rewindSentence, rowLabel } from './labels';
import {
  type CheckpointNode,
  type CheckpointRef,
  type StepNode,
  type TreeNode,
  type TurnNode,
  SAFETY_TAG,
  checkpointRefs,
  checkpointRow,
  loadMore,
  message,
  safetyLines,
  safetyTaken,
  sessionKey,
} from './model';

/** Agents whose own session files Turnback can fork for "Continue Agent from Before This Turn". */
export const CONTINUABLE_AGENTS: readonly string[] = ['claude-code', 'codex'];

export function turnKey(folder: string, sessionId: string, turnId: string): string {
  return `t|${folder}|${sessionId}|${turnId}`;
}

/** "+12 −3 in 4 files"; "no file changed"; undefined when unknown. */
export function changeSummary(turn: Pick<Turn, 'changes'>): string | undefined {
  const c = turn.changes;
  if (c === null) {
    return undefined;
  }
  if (c.files === 0) {
    return 'no file changed';
  }
  return `+${formatCount(c.linesAdded)} −${formatCount(c.linesRemoved)} in ${countOf(c.files, 'file')}`;
}

/** "3 tools (1 ✗)". */
export function toolSummary(turn: Pick<Turn, 'toolCalls' | 'toolCallsFailed'>): string | undefined {
  if (turn.toolCalls === 0) {
    return undefined;
  }
  const failed = turn.toolCallsFailed > 0 ? ` (${String(turn.toolCallsFailed)} ✗)` : '';
  return `${countOf(turn.toolCalls, 'tool')}${failed}`;
}

export function turnLabel(turn: Pick<Turn, 'id' | 'prompt'>): string {
  if (turn.id === 'prelude') {
    return 'Before the first prompt';
  }
  // the server cuts it to one line of 200; a store of another version may not
  return oneLine(turn.prompt, 200) || '(empty prompt)';
}

/** How much of a prompt names its turn in a tab title or a notification: enough to know it. */
export const TURN_TITLE_WIDTH = 40;

/**
 * A turn's prompt as a title of its own (“before …” in a diff tab, a rewind's question and
 * notification): the whole prompt (up to 200 characters) pushed the tab's other side,
 * “after …”, out of sight.
 */
export function turnTitle(prompt: string): string {
  // after a whole word: a sentence quoting it reads whole (the full prompt: Show Details)
  return oneLineAtWord(prompt, TURN_TITLE_WIDTH);
}

/**
 * `offBranchSaid`: the row above is off the current branch too and says so; this one then
 * only looks it (dimmed), so that an abandoned branch says "off the current branch" once,
 * on its first row, not on every one.
 */
export function turnNode(folder: string, sessionId: string, agent: string, t: Turn, offBranchSaid = false): TurnNode {
  const parentKey = sessionKey(folder, sessionId);
  // the time first: VS Code cuts a row's end, and it is what tells rows apart
  const desc: string[] = [formatClock(t.ts)];
  if (t.head) {
    desc.push('● head');
  }
  if (t.durationMs !== null && t.durationMs > 0) {
    desc.push(formatDuration(t.durationMs));
  }
  const tools = toolSummary(t);
  if (tools !== undefined) {
    desc.push(tools);
  }
  const changes = changeSummary(t);
  if (changes !== undefined) {
    desc.push(changes);
  } else if (t.before === null && t.after === null) {
    desc.push('no checkpoint');
  }
  if (t.branchStart) {
    desc.push('↳ branch');
  }
  if (t.onHeadPath === false && !offBranchSaid) {
    desc.push('off the current branch');
  }
  const tags = ['turn'];
  // checkpointTitle: the label is store text, shown in notifications and modal questions
  const nearest = t.before === null && t.nearest ? { id: t.nearest.id, title: checkpointTitle(t.nearest) } : undefined;
  if (t.before !== null || nearest !== undefined) {
    tags.push('rewindable');
  }
  let checkpoint: CheckpointRef | undefined;
  if (t.before !== null && t.after !== null && t.before !== t.after) {
    tags.push('comparable');
    const title = turnTitle(turnLabel(t));
    checkpoint = { id: t.after, title: `after “${title}”`, previous: { id: t.before, title: `before “${title}”` } };
  }
  if (CONTINUABLE_AGENTS.includes(agent) && t.id !== 'prelude') {
    tags.push('continuable');
  }
  if (t.onHeadPath === false) {
    tags.push('offBranch');
  }
  // times are a transcript's text: one that is no time is shown as it is, escaped
  const tip = [`**${escapeMarkdown(turnLabel(t))}**`, '', `turn ${String(t.index)} · ${escapeMarkdown(formatTimestamp(t.ts))}`];
  if (tools !== undefined) {
    tip.push(tools);
  }
  tip.push(changes ?? (t.before === null ? 'no checkpoint before this turn' : 'no checkpoint after this turn'));
  if (nearest !== undefined) {
    tip.push(`nearest checkpoint: ${escapeMarkdown(nearest.title)}`);
  }
  if (t.onHeadPath === false) {
    tip.push('off the current branch');
  }
  let icon = { id: t.toolCallsFailed > 0 ? 'comment-unresolved' : 'comment', color: undefined as string | undefined };
  if (t.head) {
    icon = { id: icon.id, color: 'charts.blue' };
  } else if (t.onHeadPath === false) {
    icon = { id: icon.id, color: 'disabledForeground' };
  }
  return {
    type: 'turn',
    key: turnKey(folder, sessionId, t.id),
    parentKey,
    folder,
    sessionId,
    turnId: t.id,
    prompt: turnLabel(t),
    agent,
    before: t.before ?? undefined,
    after: t.after ?? undefined,
    nearest,
    checkpoint,
    label: rowLabel(turnLabel(t)),
    description: desc.join(' · '),
    tooltip: tip.join('  \n'),
    contextValue: tags.join(' '),
    collapsible: 'collapsed',
    icon: icon.color !== undefined ? { id: icon.id, color: icon.color } : { id: icon.id },
  };
}

/** The loaded turns of a session (the latest page or pages), "Load earlier turns…" first. */
export function turnNodes(folder: string, sessionId: string, result: TurnsResult): TreeNode[] {
  const parentKey = sessionKey(folder, sessionId);
  const agent = result.session.agent || 'unknown';
  const nodes: TreeNode[] = [];
  if (result.offset > 0) {
    const more = loadMore(parentKey, folder, 'turns', result.turns.length, result.total, sessionId);
    nodes.push({ ...more, description: `the last ${formatCount(result.turns.length)} of ${formatCount(result.total)} turns shown` });
  }
  let offBefore = false;
  for (const t of result.turns) {
    const off = t.onHeadPath === false;
    nodes.push(turnNode(folder, sessionId, agent, t, off && offBefore));
    offBefore = off;
  }
  if (result.turns.length === 0) {
    nodes.push(message(parentKey, 0, 'No events in this session'));
  }
  return nodes;
}

const STEP_ICONS: Record<string, string> = {
  tool: 'tools',
  response: 'hubot',
  thinking: 'lightbulb',
  usage: 'dashboard',
  checkpoint: 'git-commit',
  tool_result: 'output',
  note: 'note',
  rewind: 'history',
  raw: 'json',
  prompt: 'comment',
};

/** A tool call and its result in one row: `Bash(pytest -q) ✗ 1 failed`. */
export function stepLabel(s: Step): string {
  if (s.kind === 'rewind') {
    const label = oneLine(s.label, 300);
    return rewindSentence(label) ?? label;
  }
  if (s.kind !== 'tool') {
    return oneLine(s.label, 300);
  }
  const mark = s.pending === true ? '…' : s.failed === true ? '✗' : '✓';
  const label = oneLine(s.label, 100);
  return s.detail !== undefined && s.detail !== '' ? `${label} ${mark} ${oneLine(s.detail, 200)}` : `${label} ${mark}`;
}

/**
 * A turn's steps: thinking, usage and raw lines only when `showFolded`, else one
 * row saying how many are hidden (clicking it shows them). A rewind's or an undo's safety
 * checkpoint (`checkpoints`: the folder's, from the listing) is shown inside the
 * operation's row, which rewinds to it in one click, not as a step of its own above it.
 */
export function stepNodes(
  turn: TurnNode,
  steps: readonly Step[],
  showFolded: boolean,
  checkpoints: readonly Checkpoint[] = [],
  now = Date.now(),
): TreeNode[] {
  const nodes: TreeNode[] = [];
  let hidden = 0;
  const byId = new Map(checkpoints.map((cp) => [cp.id, cp]));
  const refs = checkpoints.length > 0 ? checkpointRefs(checkpoints) : new Map<string, CheckpointRef>();
  const taken = new Map<string, Checkpoint>(); // step id → its safety checkpoint
  const inside = new Set<string>(); // the event ids of those checkpoints' steps
  for (const s of steps) {
    const cp = s.kind === 'rewind' ? safetyTaken(s.safetyCheckpoint, byId) : undefined;
    if (cp !== undefined && refs.has(cp.id)) {
      taken.set(s.id, cp);
      if (cp.eventId !== null && cp.sessionId === turn.sessionId) {
        inside.add(cp.eventId);
      }
    }
  }
  for (const s of steps) {
    if (s.folded === true && !showFolded) {
      hidden += 1;
      continue;
    }
    if (s.kind === 'checkpoint' && inside.has(s.id)) {
      continue; // inside its operation's row
    }
    const icon = STEP_ICONS[s.kind] ?? 'circle-small';
    const key = `${turn.key}|s|${s.id}`;
    const cp = taken.get(s.id);
    const ref = cp !== undefined ? refs.get(cp.id) : undefined;
    const safety: CheckpointNode | undefined =
      cp !== undefined && ref !== undefined ? checkpointRow(turn.folder, turn.sessionId, cp, ref, now, key) : undefined;
    const tip = [escapeMarkdown(stepLabel(s)), escapeMarkdown(formatTimestamp(s.ts)), `event ${codeSpan(s.id)}`];
    if (ref !== undefined) {
      tip.push('', ...safetyLines(ref));
    }
    const node: StepNode = {
      type: 'step',
      key,
      parentKey: turn.key,
      folder: turn.folder,
      sessionId: turn.sessionId,
      eventId: s.id,
      ...(safety !== undefined ? { checkpoint: ref, safety } : {}),
      label: rowLabel(stepLabel(s)),
      description: formatClock(s.ts),
      tooltip: tip.join('  \n'),
      contextValue: `step ${s.kind}${s.failed === true ? ' failed' : ''}${safety !== undefined ? ` ${SAFETY_TAG}` : ''}`,
      collapsible: safety !== undefined ? 'collapsed' : 'none',
      icon: s.failed === true ? { id: 'error', color: 'errorForeground' } : { id: icon },
    };
    nodes.push(node);
  }
  if (hidden > 0) {
    nodes.push(
      message(turn.key, 1, `${countOf(hidden, 'thinking and usage step', 'thinking and usage steps')} hidden`, {
        description: 'click to show',
        icon: { id: 'eye' },
        command: { id: 'turnback.toggleDetails', title: 'Show Thinking and Usage' },
      }),
    );
  }
  if (steps.length === 0) {
    nodes.push(message(turn.key, 2, 'No steps after the prompt'));
  }
  return nodes;
}

/** The head line of an expanded turn when its changes are unknown: why, and what to do. */
export function noCheckpointNote(turn: TurnNode): TreeNode | undefined {
  if (turn.checkpoint !== undefined) {
    return undefined;
  }
  const why = turn.before === undefined ? 'No checkpoint before this turn' : 'No checkpoint after this turn';
  const offer =
    turn.before === undefined && turn.nearest !== undefined
      ? `Rewind to Before This Turn offers the nearest: “${turn.nearest.title}”`
      : 'its changed files are not known';
  return message(turn.key, 0, why, { description: offer, icon: { id: 'info' } });
}
