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

/** How much of an error a notification shows: past about two lines of a toast it was cut off. */
export const TOAST_WIDTH = 160;

/**
 * An error message as a notification shows it: a long one's key part first (its first
 * sentence, or its first `TOAST_WIDTH` characters cut at a word) with the whole message as
 * `detail`, for a "Show Details" action; a short one whole, with no detail.
 */
export function toastParts(message: string, width = TOAST_WIDTH): { summary: string; detail?: string } {
  if (message.length <= width) {
    return { summary: message };
  }
  const sentence = /^.*?\.(?=\s)/s.exec(message)?.[0];
  if (sentence !== undefined && sentence.length >= 20 && sentence.length <= width) {
    return { summary: sentence, detail: message };
  }
  const cut = message.slice(0, width - 1);
  const space = cut.lastIndexOf(' ');
  return { summary: `${(space > width / 2 ? cut.slice(0, space) : cut).trimEnd()}…`, detail: message };
}
