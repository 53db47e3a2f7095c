/**
 * A turn's actions: Rewind to Before This Turn (through the usual rewind: dry run,
 * confirmation listing the files, safety checkpoint, Undo), Compare This Turn (all its
 * files in the multi-file diff editor), and the view's toggles (turns or events,
 * thinking and usage shown or not). The turns themselves come from the server.
 */

import * as vscode from 'vscode';

import type { TurnNode } from '../tree/model';
import { compareWithPrevious } from './compare';
import { type Services, isTreeNode } from './common';
import { rewindTo } from './rewind';

function turnArg(arg: unknown): TurnNode | undefined {
  return isTreeNode(arg) && arg.type === 'turn' ? arg : undefined;
}

/** turnback.rewindTurn: the checkpoint the turn started from, or (asked) the nearest one. */
export async function rewindTurn(services: Services, arg: unknown): Promise<void> {
  const turn = turnArg(arg);
  if (turn === undefined) {
    void vscode.window.showErrorMessage('Rewind to Before This Turn needs a turn: use it from the Turnback view.');
    return;
  }
  if (turn.before !== undefined) {
    await rewindTo(services, { folder: turn.folder, checkpoint: { id: turn.before, title: `before “${turn.prompt}”` } }, arg);
    return;
  }
  if (turn.nearest === undefined) {
    void vscode.window.showInformationMessage(`No checkpoint was taken before “${turn.prompt}”, and the folder has none to offer.`);
    return;
  }
  const go = `Rewind to “${turn.nearest.title}”`;
  const answer = await vscode.window.showInformationMessage(
    `No checkpoint was taken before “${turn.prompt}”. The nearest checkpoint before it is “${turn.nearest.title}”.`,
    { modal: true },
    go,
  );
  if (answer === go) {
    await rewindTo(services, { folder: turn.folder, checkpoint: { id: turn.nearest.id, title: turn.nearest.title } }, arg);
  }
}

/** turnback.compareTurn: the workspace at the turn's start against its end, every file at once. */
export async function compareTurn(services: Services, arg: unknown): Promise<void> {
  const turn = turnArg(arg);
  if (turn?.checkpoint === undefined) {
    void vscode.window.showInformationMessage(
      turn === undefined
        ? 'Compare This Turn needs a turn: use it from the Turnback view.'
        : `“${turn.prompt}” has no checkpoint at its start or end: its changes are not known.`,
    );
    return;
  }
  await compareWithPrevious(services, { folder: turn.folder, checkpoint: turn.checkpoint });
}

export function toggleDetails(services: Services): void {
  services.tree.toggleFolded();
}

export function setEventsView(services: Services, on: boolean): void {
  services.tree.setEventsMode(on);
}
