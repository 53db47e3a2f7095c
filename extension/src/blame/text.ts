/**
 * Line attribution as the editor shows it: the quiet end-of-line annotation of the
 * current line, the hover's text and actions, the gutter colour of each agent, the share
 * of a file written by agents. Pure (no VS Code): the origins come from `turnback/blame`.
 */

import { formatAge, oneLine, visible } from '../format';
import { codeSpan, escapeMarkdown } from '../markdown';
import type { BlameRange, BlameResult, LineOrigin } from '../protocol';

/** Agent ids as people know them; others are shown as they are. */
const AGENT_NAMES: Record<string, string> = {
  'claude-code': 'Claude Code',
  codex: 'Codex',
  aider: 'aider',
  gemini: 'Gemini CLI',
  'qwen-code': 'Qwen Code',
  cline: 'Cline',
  'roo-code': 'Roo Code',
  'kilo-code': 'Kilo Code',
  opencode: 'OpenCode',
  crush: 'Crush',
  'copilot-cli': 'Copilot CLI',
  'copilot-chat': 'Copilot Chat',
  continue: 'Continue',
};

export function agentName(agent: string | null | undefined): string {
  if (agent === null || agent === undefined || agent === '') {
    return 'an agent';
  }
  return AGENT_NAMES[agent] ?? agent;
}

/** The origin of 1-based `line`, when the answer covers it. */
export function originAt(result: BlameResult, line: number): LineOrigin | undefined {
  const r = rangeAt(result, line);
  return r === undefined ? undefined : result.origins[r.origin];
}

/** The range holding 1-based `line`, by bisection (ranges are sorted and do not overlap). */
export function rangeAt(result: BlameResult, line: number): BlameRange | undefined {
  let lo = 0;
  let hi = result.ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const r = result.ranges[mid];
    if (r === undefined) {
      return undefined;
    }
    if (line < r.start) {
      hi = mid - 1;
    } else if (line > r.end) {
      lo = mid + 1;
    } else {
      return r;
    }
  }
  return undefined;
}

function quoted(prompt: string, width = 50): string {
  return `“${oneLine(prompt, width)}”`;
}

/** When the line's step ended: the turn's end, else the checkpoint's time. */
export function originTime(o: LineOrigin): string | undefined {
  return o.turn?.endTs ?? o.until ?? o.since ?? undefined;
}

/** `Claude Code · “fix the login test” · 2 h ago`, and the like for every kind. */
export function annotation(o: LineOrigin, now: number = Date.now()): string {
  const when = originTime(o);
  const age = when === undefined ? '' : ` · ${formatAge(when, now)}`;
  switch (o.kind) {
    case 'turn':
      return `${agentName(o.agent)} · ${quoted(o.turn?.prompt ?? '')}${age}`;
    case 'shared':
      return `${(o.shared ?? []).map((s) => agentName(s.agent)).join(' + ')} · turns open at once${age}`;
    case 'person':
      return `Changed between turns${age}`;
    case 'initial':
      return 'Before the first checkpoint';
    case 'uncommitted':
      return 'Not yet in a checkpoint';
  }
}

/** What the hover's actions need of the line's turn. */
export interface TurnAction {
  folder: string;
  sessionId: string;
  turnId: string;
  prompt: string;
  before: string | null;
  after: string | null;
}

export function turnAction(folder: string, o: LineOrigin): TurnAction | undefined {
  if (o.kind !== 'turn' || o.sessionId === null || o.turn === null) {
    return undefined;
  }
  return { folder, sessionId: o.sessionId, turnId: o.turn.id, prompt: o.turn.prompt, before: o.turn.before, after: o.turn.after };
}

/**
 * "before “fix the parser”": a side of a line's turn, for a diff's title and a rewind's
 * question. The prompt is the hover's link argument, a transcript's text: its bidi and
 * invisible characters are shown as escapes (`visible`), as in every label (redteam25).
 */
export function turnSide(side: 'before' | 'after', prompt: string): string {
  return `${side} “${visible(prompt)}”`;
}

export const HOVER_COMMANDS = {
  reveal: 'turnback.revealLineTurn',
  compare: 'turnback.compareLineTurn',
  rewind: 'turnback.rewindBeforeLineTurn',
} as const;

/**
 * A command link with its argument. Parentheses are encoded too: `encodeURIComponent`
 * leaves them, and a link's target ends at one it does not balance (CommonMark), so a
 * prompt holding "1)" or ":(" cut the three links short or left them text (redteam25).
 */
function link(title: string, command: string, arg: unknown): string {
  const query = encodeURIComponent(JSON.stringify([arg])).replace(/[()]/g, (c) => (c === '(' ? '%28' : '%29'));
  return `[${title}](command:${command}?${query})`;
}

/** The hover: who, which prompt, model, when, and (for a turn) its three actions. */
/** Files listed in the hover before "and N more". */
const HOVER_FILES = 8;

/**
 * The hover of a line: who wrote it, and for a turn its prompt, agent, model, time, the
 * files it changed (`files`, when known) and its actions.
 */
export function hoverMarkdown(folder: string, o: LineOrigin, now: number = Date.now(), files?: readonly string[]): string {
  const lines: string[] = [];
  const when = originTime(o);
  // the time is the transcript's text: escaped, or 16 characters were an image (a beacon)
  const age = when === undefined ? '' : `${formatAge(when, now)} (${escapeMarkdown(when.slice(0, 16).replace('T', ' '))})`;
  if (o.kind === 'turn' && o.turn !== null) {
    lines.push(`**${escapeMarkdown(agentName(o.agent))}**${o.model ? ` · ${escapeMarkdown(o.model)}` : ''} · turn ${String(o.turn.index)}`);
    lines.push('', `> ${escapeMarkdown(oneLine(o.turn.prompt, 500))}`, '', age);
    if (files !== undefined && files.length > 0) {
      const shown = files.slice(0, HOVER_FILES).map(codeSpan);
      const more = files.length > HOVER_FILES ? ` and ${String(files.length - HOVER_FILES)} more` : '';
      lines.push('', `${files.length === 1 ? 'Changed' : `Changed ${String(files.length)} files:`} ${shown.join(', ')}${more}`);
    }
    const act = turnAction(folder, o);
    if (act !== undefined) {
      lines.push(
        '',
        [
          link('Reveal Turn', HOVER_COMMANDS.reveal, act),
          link('Compare This Turn', HOVER_COMMANDS.compare, act),
          link('Rewind to Before This Turn', HOVER_COMMANDS.rewind, act),
        ].join(' · '),
      );
    }
  } else if (o.kind === 'shared') {
    lines.push('**Turns of several sessions were open at once**', '');
    for (const s of o.shared ?? []) {
      lines.push(`- ${escapeMarkdown(agentName(s.agent))}: ${escapeMarkdown(quoted(s.turn.prompt, 80))}`);
    }
    lines.push('', age);
  } else if (o.kind === 'person') {
    lines.push('**Changed between turns** (a person, or another program)', '', age);
  } else if (o.kind === 'initial') {
    lines.push('**Already there** at the first checkpoint');
  } else {
    lines.push('**Not yet in a checkpoint**: who wrote it is known at the next one');
  }
  return lines.join('\n');
}

/** The share of the file's lines written in agents' turns (shared ones included), 0–100. */
export function agentShare(result: BlameResult): number {
  return result.lineCount === 0 ? 0 : Math.round((100 * result.agentLines) / result.lineCount);
}

export const GUTTER_COLOURS = 6;

/** A stable colour slot (0 … GUTTER_COLOURS - 1) per agent; undefined for a person's lines. */
export function gutterSlot(o: LineOrigin): number | undefined {
  if (o.kind !== 'turn' && o.kind !== 'shared') {
    return undefined;
  }
  const key = o.kind === 'shared' ? 'shared' : (o.agent ?? '');
  let h = 0;
  for (const ch of key) {
    h = (h * 31 + (ch.codePointAt(0) ?? 0)) >>> 0;
  }
  return h % GUTTER_COLOURS;
}
