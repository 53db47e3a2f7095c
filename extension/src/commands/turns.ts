/**
 * A turn's actions: Rewind to Before This Turn (through the usual rewind: dry run,
 * confirmation listing the files, safety checkpoint, Undo), Compare This Turn (all its
 * files in the multi-file diff editor), and the view's toggles (turns or events,
 * thinking and usage shown or not). The turns themselves come from the server.
 */

import * as vscode from 'vscode';

import { showDisk, settleUnsaved } from '../editors';
import { countOf, inline, oneLine } from '../format';
import { folderPath } from '../uris';
import { affectedPaths } from '../rewindText';
import type { TurnNode } from '../tree/model';
import { turnTitle } from '../tree/turns';
import { compareWithPrevious } from './compare';
import { type Services, isTreeNode, requireTrust, showError, withProgress } from './common';
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
    const described = `before “${turnTitle(turn.prompt)}”`;
    const whole = `before “${oneLine(turn.prompt, 200)}”`;
    await rewindTo(services, { folder: turn.folder, checkpoint: { id: turn.before, title: described }, described, whole }, arg);
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

/**
 * turnback.continueTurn: rewinds the files to the turn's start (undoable), writes a new
 * session file for the agent holding the conversation before the turn (asked first: the
 * one write outside the workspace), and opens a terminal running its resume command.
 */
export async function continueTurn(services: Services, arg: unknown): Promise<void> {
  const turn = turnArg(arg);
  if (turn === undefined || !requireTrust('Continue Agent')) {
    return;
  }
  if (!(await settleUnsaved(turn.folder, 'Continue Agent'))) {
    return;
  }
  const params = { folder: turn.folder, sessionId: turn.sessionId, turnId: turn.turnId };
  let dry;
  try {
    dry = await withProgress('checking what continuing would do…', () =>
      services.client.request('turnback/continue', { ...params, dryRun: true }),
    );
  } catch (err) {
    showError('Continue Agent', err);
    return;
  }
  const files = dry.rewind === null ? 0 : dry.rewind.written.length + (dry.rewind.created?.length ?? 0) + dry.rewind.removed.length;
  const detail = [
    dry.rewind === null
      ? 'No checkpoint was taken before this turn: the files stay as they are.'
      : `The files go back to the turn's start: ${countOf(files, 'file')} change (Undo Rewind brings them back).`,
    `A new ${inline(dry.agent)} session file is written (the original is not changed):`,
    dry.sessionFile,
    `holding the ${countOf(dry.lines, 'line')} before this turn. Then a terminal runs: ${dry.command.join(' ')}`,
  ].join('\n');
  const go = 'Continue';
  const answer = await vscode.window.showWarningMessage(
    `Continue ${inline(dry.agent)} from before “${turn.prompt}”?`,
    { modal: true, detail },
    go,
  );
  if (answer !== go) {
    return;
  }
  let done;
  try {
    done = await withProgress('continuing from before the turn…', () => services.client.request('turnback/continue', params));
  } catch (err) {
    showError('Continue Agent', err);
    services.cache.invalidateAll();
    return;
  }
  services.cache.invalidateAll();
  if (done.rewind !== null) {
    await showDisk(turn.folder, affectedPaths(done.rewind));
  }
  const terminal = vscode.window.createTerminal({ name: `${done.agent} (continued)`, cwd: folderPath(turn.folder) });
  terminal.show();
  terminal.sendText(done.command.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' '));
}
