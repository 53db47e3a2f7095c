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

/** "Rewind failed: <server message>" plus a hint for the codes that need one. */
export function describeError(action: string, err: unknown): string {
  const text = errorText(err);
  const code = errorCode(err);
  let hint = '';
  if (code === ErrorCodes.storeDamaged && !text.includes('fsck')) {
    hint = ' Run `turnback fsck` in the workspace to see what is damaged.';
  } else if (code === ErrorCodes.unsafe && !/not changed|nothing was/i.test(text)) {
    hint = ' Nothing was changed.';
  }
  return `${action} failed: ${text}${hint}`;
}
