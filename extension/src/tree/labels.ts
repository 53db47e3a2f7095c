/**
 * Words and icons for what the tree shows. Pure, so that labels stay stable
 * (end-to-end tests find tree items by them) and are unit-tested.
 */

import {
  countOf,
  formatBytes,
  formatCount,
  formatDuration,
  formatTimestamp,
  oneLine,
  oneLineAtWord,
  shortId,
} from '../format';
import { codeSpan, escapeMarkdown } from '../markdown';
import type { Checkpoint, SessionEvent, SessionInfo, SessionStats } from '../protocol';

/** A codicon id and an optional theme color id. */
export interface IconSpec {
  id: string;
  color?: string;
}

interface KindLook {
  title: string;
  icon: string;
}

const KINDS: Record<string, KindLook> = {
  prompt: { title: 'Prompt', icon: 'comment' },
  response: { title: 'Response', icon: 'hubot' },
  thinking: { title: 'Thinking', icon: 'lightbulb' },
  tool_call: { title: 'Tool', icon: 'tools' },
  tool_result: { title: 'Result', icon: 'output' },
  iteration_started: { title: 'Iteration started', icon: 'debug-start' },
  iteration_completed: { title: 'Iteration completed', icon: 'pass' },
  event_published: { title: 'Event', icon: 'broadcast' },
  loop_started: { title: 'Loop started', icon: 'debug-start' },
  loop_completed: { title: 'Loop completed', icon: 'pass-filled' },
  loop_terminated: { title: 'Loop terminated', icon: 'debug-stop' },
  loop_resumed: { title: 'Loop resumed', icon: 'debug-continue' },
  loop_discarded: { title: 'Loop discarded', icon: 'trash' },
  merge_queued: { title: 'Merge queued', icon: 'git-pull-request-draft' },
  merge_started: { title: 'Merge started', icon: 'git-merge' },
  merge_completed: { title: 'Merge completed', icon: 'git-merge' },
  merge_failed: { title: 'Merge failed', icon: 'error' },
  usage: { title: 'Usage', icon: 'dashboard' },
  checkpoint: { title: 'Checkpoint', icon: 'git-commit' },
  rewind: { title: 'Rewind', icon: 'history' },
  note: { title: 'Note', icon: 'note' },
  raw: { title: 'Raw', icon: 'json' },
};

/** "Prompt", "Tool", …; an unknown kind is shown as it is (kinds are open strings). */
export function kindTitle(kind: string): string {
  return KINDS[kind]?.title ?? kind;
}

export function kindIcon(event: Pick<SessionEvent, 'kind' | 'data'>): IconSpec {
  const look = KINDS[event.kind];
  const data = event.data ?? {};
  if (event.kind === 'tool_result' && data.isError === true) {
    return { id: 'error', color: 'errorForeground' };
  }
  if (event.kind === 'iteration_completed' && data.success === false) {
    return { id: 'error', color: 'errorForeground' };
  }
  return { id: look?.icon ?? 'circle-small' };
}

const TEXT_KEYS = ['text', 'summary', 'label', 'name', 'prompt', 'reason', 'message', 'topic'];

/** The event's one-line summary: the server's, else the first text-like field of its data. */
export function eventSummary(event: Pick<SessionEvent, 'kind' | 'data' | 'summary'>, width = 100): string {
  if (event.summary !== undefined && event.summary.trim().length > 0) {
    return oneLine(event.summary, width);
  }
  const data = event.data ?? {};
  for (const key of TEXT_KEYS) {
    const v = data[key];
    if (typeof v === 'string' && v.trim().length > 0) {
      return oneLine(v, width);
    }
  }
  return '';
}

/**
 * A rewind's summary as a sentence of its own: the server says "rewind to “X” (files)",
 * "undo of rewind to “X” (files)", "redo of …" or "undo (files)", which under "Rewind: "
 * said the word twice. Any other summary (an importer's words) is left for the "Rewind: "
 * title.
 */
export function rewindSentence(summary: string): string | undefined {
  return /^(rewind|undo|redo)\b/.test(summary) ? `${summary.charAt(0).toUpperCase()}${summary.slice(1)}` : undefined;
}

/**
 * "Prompt: make the tests pass"; a checkpoint by its own label alone, its row's icon
 * (`git-commit`) saying what it is ("Checkpoint: " took a fifth of a row's width); a tool's
 * result with nothing to say, "Result (no output)" (a bare "Result" row looked like a fault).
 */
export function eventLabel(event: SessionEvent, checkpoint?: Checkpoint): string {
  const title = kindTitle(event.kind);
  if (event.kind === 'checkpoint' && checkpoint) {
    return checkpointTitle(checkpoint);
  }
  const summary = eventSummary(event);
  const sentence = event.kind === 'rewind' ? rewindSentence(summary) : undefined;
  if (sentence === undefined && summary === '' && event.kind === 'tool_result') {
    return `${title} (no output)`;
  }
  return sentence ?? (summary ? `${title}: ${summary}` : title);
}

/**
 * How much of a label a tree row shows: VS Code puts the row's description (its time
 * first, then "● head", the branch) after the label and cuts the end of the line, so a
 * prompt of 200 characters hid the time in any sidebar, and one of 60 still did in the
 * default sidebar (about 440 px: a step row, three levels in, has room for about 55
 * characters, the time's 8 among them). The whole label is in the row's tooltip.
 */
export const ROW_LABEL_WIDTH = 44;

/** The width in use: `turnback.rowLabelWidth` (VS Code tells a tree no width of its own). */
let rowWidth = ROW_LABEL_WIDTH;

/** Sets the width rows are cut at (extension.ts, from the setting; the tree is redrawn). */
export function setRowLabelWidth(width: number): void {
  rowWidth = width;
}

/**
 * `label` cut for a tree row (its tooltip says it whole), after a whole word: a tool's
 * output cut inside one ("FAILED tests/test_farewel…") read as a typo of the tool's.
 */
export function rowLabel(label: string): string {
  return oneLineAtWord(label, rowWidth);
}

/** A checkpoint's name: its label, else "checkpoint 1a2b3c4d". */
export function checkpointTitle(cp: Pick<Checkpoint, 'id' | 'label'>): string {
  const label = cp.label.trim();
  return label.length > 0 ? oneLine(label, 80) : `checkpoint ${shortId(cp.id)}`;
}

export function sessionTitle(s: Pick<SessionInfo, 'id' | 'title'>): string {
  const title = s.title.trim();
  return title.length > 0 ? oneLine(title, 80) : `session ${shortId(s.id)}`;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** The stats lines of a session tooltip (Markdown), in SPEC's vocabulary. */
export function statsLines(stats: Partial<SessionStats> | null | undefined): string[] {
  if (!stats) {
    return [];
  }
  const lines: string[] = [];
  const failed = (n: number): string => (n > 0 ? ` (${formatCount(n)} failed)` : '');
  lines.push(
    `${countOf(num(stats.prompts), 'prompt')} · ${countOf(num(stats.responses), 'response')}`,
  );
  lines.push(
    `${countOf(num(stats.toolCalls), 'tool call')}${failed(num(stats.toolCallsFailed))} · ` +
      countOf(num(stats.toolResults), 'tool result'),
  );
  if (num(stats.iterations) > 0) {
    lines.push(`${countOf(num(stats.iterations), 'iteration')}${failed(num(stats.iterationsFailed))}`);
  }
  if (num(stats.eventsPublished) > 0) {
    lines.push(countOf(num(stats.eventsPublished), 'event published', 'events published'));
  }
  lines.push(`${countOf(num(stats.checkpoints), 'checkpoint')} · ${countOf(num(stats.rewinds), 'rewind')}`);
  const t = stats.tokens;
  if (t && num(t.input) + num(t.output) + num(t.cacheRead) + num(t.cacheCreation) > 0) {
    lines.push(
      `tokens: ${formatCount(num(t.input))} in · ${formatCount(num(t.output))} out · ` +
        `${formatCount(num(t.cacheRead))} cache read · ${formatCount(num(t.cacheCreation))} cache write`,
    );
  }
  if (typeof stats.durationMs === 'number') {
    lines.push(`duration: ${formatDuration(stats.durationMs)}`);
  }
  const completion = str(stats.completion);
  if (completion) {
    lines.push(`completed: ${escapeMarkdown(completion)}`);
  }
  const termination = str(stats.termination);
  if (termination) {
    lines.push(`terminated: ${escapeMarkdown(termination)}`);
  }
  const merge = stats.merge as unknown;
  if (typeof merge === 'string' && merge.length > 0) {
    lines.push(`merge: ${escapeMarkdown(merge)}`);
  } else if (merge !== null && typeof merge === 'object') {
    lines.push(`merge: ${escapeMarkdown(JSON.stringify(merge))}`);
  }
  return lines;
}

/** The Markdown tooltip of a session item. */
export function sessionTooltip(s: SessionInfo): string {
  const head = [`**${escapeMarkdown(sessionTitle(s))}**`, ''];
  const meta = [
    `id: ${codeSpan(s.id)}`,
    `agent: ${escapeMarkdown(s.agent || 'unknown')}${s.model ? ` (${escapeMarkdown(s.model)})` : ''}`,
    `started: ${formatTimestamp(s.startedAt)}`,
  ];
  if (s.endedAt) {
    meta.push(`ended: ${formatTimestamp(s.endedAt)}`);
  }
  if (typeof s.events === 'number') {
    meta.push(countOf(s.events, 'event'));
  }
  if (s.counted === false) {
    meta.push('events and stats: still being counted');
  }
  return [...head, ...meta, '', ...statsLines(s.stats)].join('  \n');
}

/** The Markdown tooltip of a checkpoint. */
export function checkpointTooltip(cp: Checkpoint): string {
  const lines = [
    `**${escapeMarkdown(checkpointTitle(cp))}**`,
    '',
    `id: ${codeSpan(cp.id)}`,
    `taken: ${formatTimestamp(cp.ts)}${cp.auto ? ' (automatic)' : ''}`,
  ];
  if (typeof cp.files === 'number') {
    lines.push(`${countOf(cp.files, 'file')}${typeof cp.bytes === 'number' ? `, ${formatBytes(cp.bytes)}` : ''}`);
  }
  if (cp.partial) {
    lines.push('partial: holds only the files the agent touched');
  }
  if (cp.skipped && cp.skipped.length > 0) {
    // a path is a file or a folder: too large, unreadable, not a file, or nested too deep
    lines.push(`${countOf(cp.skipped.length, 'path')} left out (too large, unreadable or nested too deep)`);
  }
  return lines.join('  \n');
}
