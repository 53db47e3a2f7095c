/**
 * The hover's actions on a line's turn — Reveal Turn, Compare This Turn, Rewind to Before
 * This Turn — through the same code the Sessions view's turn actions use.
 */

import * as vscode from 'vscode';

import { compareWithPrevious } from '../commands/compare';
import type { Services } from '../commands/common';
import { rewindTo } from '../commands/rewind';
import { type TurnAction, turnSide } from './text';

function actionArg(arg: unknown): TurnAction | undefined {
  if (typeof arg !== 'object' || arg === null) {
    return undefined;
  }
  const a = arg as Record<string, unknown>;
  const str = (k: string): boolean => typeof a[k] === 'string';
  const idOrNull = (k: string): boolean => a[k] === null || typeof a[k] === 'string';
  return str('folder') && str('sessionId') && str('turnId') && str('prompt') && idOrNull('before') && idOrNull('after')
    ? (a as unknown as TurnAction)
    : undefined;
}

export async function revealLineTurn(services: Services, arg: unknown): Promise<void> {
  const act = actionArg(arg);
  if (act === undefined) {
    return;
  }
  if (services.tree.showingEvents) {
    services.tree.setEventsMode(false);
  }
  await vscode.commands.executeCommand('turnback.showView');
  await services.tree.revealTurn(services.view, act.folder, act.sessionId, act.turnId);
}

export async function compareLineTurn(services: Services, arg: unknown): Promise<void> {
  const act = actionArg(arg);
  if (act === undefined || act.before === null || act.after === null) {
    return;
  }
  await compareWithPrevious(services, {
    folder: act.folder,
    checkpoint: { id: act.after, title: turnSide('after', act.prompt), previous: { id: act.before, title: turnSide('before', act.prompt) } },
  });
}

export async function rewindBeforeLineTurn(services: Services, arg: unknown): Promise<void> {
  const act = actionArg(arg);
  if (act === undefined || act.before === null) {
    return;
  }
  const described = turnSide('before', act.prompt);
  await rewindTo(services, { folder: act.folder, checkpoint: { id: act.before, title: described }, described }, undefined);
}
