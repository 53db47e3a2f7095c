/**
 * Turning failures into messages a person can act on. The server's messages
 * already name what is wrong; this adds what to do for the codes where the
 * remedy lies outside the message (a damaged store, a stopped server).
 */

import { visibleMessage } from './format';
import { ErrorCodes } from './protocol';

/** The parts of a JSON-RPC ResponseError (or any Error) this module reads. */
interface ErrorLike {
  code?: unknown;
  message?: unknown;
}

export function errorCode(err: unknown): number | undefined {
  if (typeof err === 'object' && err !== null) {
    const code = (err as ErrorLike).code;
    return typeof code === 'number' ? code : undefined;
  }
  return undefined;
}

export function errorText(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const msg = (err as ErrorLike).message;
    if (typeof msg === 'string' && msg.length > 0) {
      return visibleMessage(msg);
    }
  }
  if (typeof err === 'string' && err.length > 0) {
    return visibleMessage(err);
  }
  return 'unknown error (see the Turnback output channel)';
}

/**
 * The server's message with the action's own verb taken out of its start: the store says
 * "cannot rewind: the stored content … is missing", which under "Rewind failed:" said the
 * word twice. "cannot <verb>: " goes; "cannot <verb> 'x': …" is a sentence of its own
 * (`Cannot restore 'x': …`), shown as it is, capitalised, with no "failed" before it.
 */
function withoutVerb(action: string, text: string): { text: string; own: boolean } {
  const verb = (/^[A-Za-z]+/.exec(action)?.[0] ?? '').toLowerCase();
  if (verb === '') {
    return { text, own: false };
  }
  const lead = `cannot ${verb}`;
  if (text.slice(0, lead.length).toLowerCase() !== lead) {
    return { text, own: false };
  }
  const rest = text.slice(lead.length);
  if (rest.startsWith(': ') && rest.length > 2) {
    return { text: rest.slice(2), own: false };
  }
  if (rest.startsWith(' ')) {
    return { text: `Cannot ${verb}${rest}`, own: true };
  }
  return { text, own: false };
}

/** "Rewind failed: <server message>" plus a hint for the codes that need one. */
export function describeError(action: string, err: unknown): string {
  const { text, own } = withoutVerb(action, errorText(err));
  const code = errorCode(err);
  let hint = '';
  if (code === ErrorCodes.storeDamaged && !text.includes('fsck')) {
    hint = ' Run `turnback fsck` in the workspace to see what is damaged.';
  } else if (code === ErrorCodes.unsafe && !/not changed|nothing was/i.test(text)) {
    hint = ' Nothing was changed.';
  }
  return own ? `${text}${hint}` : `${action} failed: ${text}${hint}`;
}

/**
 * How much of an error a notification's toast shows at once: a toast is about 450 px wide,
 * and a first sentence of 130 characters ("Rewind failed: the stored content of 'x'
 * (object 1a2b…) is missing; the workspace was not changed.") was cut in it.
 */
export const TOAST_WIDTH = 90;

/** Says that nothing was changed: kept in the toast, it is what a person asks first. */
const UNCHANGED = /\b(?:was not changed|were not changed|nothing was changed|nothing changed)\b/i;
const NOTHING_CHANGED = 'Nothing was changed.';
/** An aside ending in an id (" (object 1a2b3c4d5e6f)"): no one can place it; the details keep it. */
const ID_ASIDE = / \([^()'“”\n]{0,40}\b[0-9a-f]{8,64}\)/g;

/**
 * Where the message's first clause ends: at the first ". ", "; " or line break outside a
 * quoted name (a path such as 'notes. old.txt' is no end).
 */
function clauseEnd(message: string): number {
  let quote: string | undefined;
  for (let i = 0; i < message.length; i += 1) {
    const c = message[i] ?? '';
    const before = i > 0 ? (message[i - 1] ?? '') : ' ';
    const after = message[i + 1] ?? ' ';
    if (quote !== undefined) {
      if (c === quote && (quote === '”' || /[\s,.;:)]/.test(after))) {
        quote = undefined;
      }
    } else if (c === '“') {
      quote = '”';
    } else if (c === "'" && /[\s(]/.test(before)) {
      quote = "'";
    } else if (c === '\n' || ((c === '.' || c === ';') && /\s/.test(after))) {
      return i;
    }
  }
  return message.length;
}

/** `text` cut at a word to at most `width` characters, marked with "…" when cut. */
function cutAtWord(text: string, width: number): string {
  if (text.length <= width) {
    return text;
  }
  const cut = text.slice(0, width - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > width / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/**
 * An error message as a notification shows it, short by construction: its first clause
 * (to the first ". " or "; "), asides that are only an id left out, cut at a word to
 * `TOAST_WIDTH`, then "Nothing was changed." when the message says so; the whole message
 * is the `detail`, for a "Show Details" action. A message that fits is shown whole.
 */
export function toastParts(message: string, width = TOAST_WIDTH): { summary: string; detail?: string } {
  if (message.length <= width) {
    return { summary: message };
  }
  const end = clauseEnd(message);
  const clause = message.slice(0, end).replace(ID_ASIDE, '').trim();
  let summary = cutAtWord(clause, width);
  const unchanged = UNCHANGED.test(message) && !UNCHANGED.test(summary);
  if (unchanged) {
    summary = cutAtWord(clause, width - NOTHING_CHANGED.length - 1);
  }
  if (!/[….!?]$/.test(summary)) {
    summary = `${summary}.`;
  }
  if (unchanged) {
    summary = `${summary} ${NOTHING_CHANGED}`;
  }
  return { summary, detail: message };
}
