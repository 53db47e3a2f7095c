/**
 * Sending a typed request over a JSON-RPC connection (the language client's,
 * or vscode-jsonrpc's in tests). Pure: no VS Code.
 *
 * vscode-jsonrpc counts its arguments: `sendRequest(method, params, undefined)`
 * sends `[params, null]` as positional parameters, which the server refuses
 * (it wants named ones). So the token is passed only when there is one.
 */

import type { ParamsOf, RequestMethod, ResultOf } from './protocol';

/** What both LanguageClient and a vscode-jsonrpc MessageConnection offer. */
export interface RequestSender<Token> {
  sendRequest<R>(method: string, param: unknown, token?: Token): Promise<R>;
}

export function sendTyped<M extends RequestMethod, Token>(
  conn: RequestSender<Token>,
  method: M,
  params: ParamsOf<M>,
  token?: Token,
): Promise<ResultOf<M>> {
  return token === undefined
    ? conn.sendRequest<ResultOf<M>>(method, params)
    : conn.sendRequest<ResultOf<M>>(method, params, token);
}
