/**
 * Rewind to Here, Rewind to Checkpoint…, Restore This File and Undo Rewind.
 *
 * Every one: trust check, unsaved editors settled, a dry run whose lists go into
 * a modal confirmation, the real run with progress, editors shown from disk, and
 * a notification with an Undo Rewind button.
 */

import * as vscode from 'vscode';

import { showDisk, settleUnsaved } from '../editors';
import { errorCode, errorText } from '../errors';
import { pickFolder } from '../folders';
import { ErrorCodes, type RewindMode, type RewindParams, type RewindResult } from '../protocol';
import {
  MODE_DETAILS,
  MODE_TITLES,
  affectedPaths,
  changesNothing,
  rewindConfirmation,
  rewindToast,
  touchesFiles,
} from '../rewindText';
import { checkpointItem } from '../picks';
import { checkpointRefs } from '../tree/model';
import {
  type CheckpointTarget,
  type Services,
  checkpointArg,
  confirmedArg,
  modeArg,
  pathArg,
  requireTrust,
  showError,
  withProgress,
} from './common';

type What = 'rewind' | 'restore' | 'undo';

async function pickMode(): Promise<RewindMode | undefined> {
  const modes: RewindMode[] = ['files', 'both', 'conversation'];
  const picked = await vscode.window.showQuickPick(
    modes.map((m) => ({ label: MODE_TITLES[m], detail: MODE_DETAILS[m], mode: m })),
    { title: 'Turnback: Rewind what?', placeHolder: 'Files, conversation, or both' },
  );
  return picked?.mode;
}

/** Runs a dry run, asks, runs for real, reports with an Undo button. */
async function confirmAndRun(
  services: Services,
  folder: string,
  what: What,
  target: string,
  mode: RewindMode,
  run: (dryRun: boolean) => Promise<RewindResult>,
  skipConfirmation: boolean,
  paths?: readonly string[],
  whole?: string,
): Promise<RewindResult | undefined> {
  const label = what === 'undo' ? 'Undo Rewind' : what === 'restore' ? 'Restore' : 'Rewind';
  if (touchesFiles(mode) && !(await settleUnsaved(folder, label, paths))) {
    return undefined;
  }
  if (!skipConfirmation) {
    let dry: RewindResult;
    try {
      dry = await withProgress(`checking what ${label.toLowerCase()} would change…`, () => run(true));
    } catch (err) {
      if (what === 'undo' && errorCode(err) === ErrorCodes.conflict) {
        // "Nothing to undo" is an answer, not a failure.
        void vscode.window.showInformationMessage(errorText(err));
      } else {
        showError(label, err);
      }
      return undefined;
    }
    if (what !== 'undo' && mode === 'files' && changesNothing(dry)) {
      void vscode.window.showInformationMessage(`The files already match ${target}; nothing to do.`);
      return undefined;
    }
    const c = rewindConfirmation(dry, target, mode, what);
    const answer = await vscode.window.showWarningMessage(c.message, { modal: true, detail: c.detail }, c.action);
    if (answer !== c.action) {
      return undefined;
    }
  }
  let result: RewindResult;
  try {
    result = await withProgress(`${label}…`, () => run(false));
  } catch (err) {
    showError(label, err);
    services.cache.invalidateAll();
    return undefined;
  }
  services.cache.invalidateAll();
  await showDisk(folder, affectedPaths(result));
  void announce(services, folder, rewindToast(result, target, what, whole));
  return result;
}

const SHOW_DETAILS = 'Show Details';

/**
 * The notification after every rewind, restore or undo, with its Undo button, and Show
 * Details when the target's name in it was cut (a turn's prompt: the whole one there).
 */
async function announce(services: Services, folder: string, toast: { text: string; detail?: string }): Promise<void> {
  const undo = 'Undo Rewind';
  const buttons = toast.detail !== undefined ? [undo, SHOW_DETAILS] : [undo];
  const answer = await vscode.window.showInformationMessage(toast.text, ...buttons);
  if (answer === undo) {
    await undoRewind(services, { folder, confirmed: true });
  } else if (answer === SHOW_DETAILS && toast.detail !== undefined) {
    const again = await vscode.window.showInformationMessage('Rewound', { modal: true, detail: toast.detail }, undo);
    if (again === undo) {
      await undoRewind(services, { folder, confirmed: true });
    }
  }
}

export async function rewindTo(services: Services, target: CheckpointTarget, arg: unknown): Promise<void> {
  if (!requireTrust('Rewind')) {
    return;
  }
  const folder = await pickFolder(target.folder);
  if (folder === undefined) {
    return;
  }
  // a pulled checkpoint's conversation is the teammate's: its files are what can be rewound to
  const mode = modeArg(arg) ?? (target.checkpoint.origin !== undefined ? 'files' : await pickMode());
  if (mode === undefined) {
    return;
  }
  const title = target.described ?? `“${target.checkpoint.title}”`;
  await confirmAndRun(
    services,
    folder,
    'rewind',
    title,
    mode,
    (dryRun) => {
      const params: RewindParams = { folder, checkpoint: target.checkpoint.id, mode, dryRun };
      return services.client.request('turnback/rewind', params);
    },
    confirmedArg(arg),
    undefined,
    target.whole,
  );
}

/** turnback.rewindHere: the checkpoint of the clicked tree item. */
export async function rewindHere(services: Services, arg: unknown): Promise<void> {
  const target = checkpointArg(arg);
  if (target === undefined) {
    await rewindPick(services, arg);
    return;
  }
  await rewindTo(services, target, arg);
}

/** turnback.rewind: pick a checkpoint of the folder, newest first. */
export async function rewindPick(services: Services, arg: unknown): Promise<void> {
  if (!requireTrust('Rewind')) {
    return;
  }
  const given = checkpointArg(arg);
  if (given !== undefined) {
    await rewindTo(services, given, arg);
    return;
  }
  const folder = await pickFolder(undefined, 'Rewind which workspace folder?');
  if (folder === undefined) {
    return;
  }
  let checkpoints;
  try {
    checkpoints = await services.cache.checkpoints(folder);
  } catch (err) {
    showError('Listing checkpoints', err);
    return;
  }
  if (checkpoints.length === 0) {
    void vscode.window.showInformationMessage('This folder has no checkpoints yet: Create Checkpoint takes one.');
    return;
  }
  const refs = checkpointRefs(checkpoints);
  const now = Date.now();
  const items = [...checkpoints]
    .sort((a, b) => (a.ts < b.ts ? 1 : a.ts > b.ts ? -1 : 0))
    .map((cp) => {
      const ref = refs.get(cp.id) ?? { id: cp.id, title: cp.id };
      return checkpointItem(cp, ref, now);
    });
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Turnback: Rewind to Checkpoint',
    placeHolder: 'Checkpoint to rewind to (newest first)',
    matchOnDetail: true,
  });
  if (picked !== undefined) {
    await rewindTo(services, { folder, checkpoint: picked.ref }, arg);
  }
}

/** turnback.restoreFile: one file as the checkpoint holds it. */
export async function restoreFile(services: Services, arg: unknown): Promise<void> {
  if (!requireTrust('Restore This File')) {
    return;
  }
  const target = checkpointArg(arg);
  const path = pathArg(arg);
  if (target === undefined || path === undefined) {
    void vscode.window.showErrorMessage('Restore This File needs a changed file of a checkpoint: use it from the Turnback view.');
    return;
  }
  const folder = await pickFolder(target.folder);
  if (folder === undefined) {
    return;
  }
  await confirmAndRun(
    services,
    folder,
    'restore',
    `${path} from “${target.checkpoint.title}”`,
    'files',
    (dryRun) =>
      services.client.request('turnback/rewind', {
        folder,
        checkpoint: target.checkpoint.id,
        paths: [path],
        mode: 'files',
        dryRun,
      }),
    confirmedArg(arg),
    [path],
  );
}

/** turnback.undo: reverts the last rewind (or undo). From the notification it runs without asking again. */
export async function undoRewind(services: Services, arg: unknown): Promise<void> {
  if (!requireTrust('Undo Rewind')) {
    return;
  }
  const folder = await pickFolder(
    typeof arg === 'object' && arg !== null && typeof (arg as { folder?: unknown }).folder === 'string'
      ? (arg as { folder: string }).folder
      : undefined,
    'Undo the last rewind of which folder?',
  );
  if (folder === undefined) {
    return;
  }
  await confirmAndRun(
    services,
    folder,
    'undo',
    'the last rewind',
    'files',
    (dryRun) => services.client.request('turnback/undo', { folder, dryRun }),
    confirmedArg(arg),
  );
}
