/**
 * What every command needs: the services, trust checks, progress, errors, and
 * reading a command's argument (a tree node from a menu, or a plain object
 * from a script or test: `{folder?, checkpoint, path?, mode?}`).
 */

import * as vscode from 'vscode';

import type { LineAttribution } from '../blame/annotator';

import type { StoreCache } from '../cache';
import type { TurnbackClient } from '../client';
import { describeError, toastParts } from '../errors';
import type { RewindMode } from '../protocol';
import { NOTIFY_AFTER_MS, whenSlow } from '../slow';
import type { SessionTreeProvider } from '../tree/provider';
import type { CheckpointRef, TreeNode } from '../tree/model';
import type { FileHistoryProvider } from '../history/provider';

export interface Services {
  client: TurnbackClient;
  cache: StoreCache;
  tree: SessionTreeProvider;
  view: vscode.TreeView<TreeNode>;
  /** The File History view's provider (follows the active editor). */
  history?: FileHistoryProvider;
  /** Line attribution in the editor (blame/annotator.ts). */
  attribution?: LineAttribution;
}

/** False (and says why) in an untrusted workspace, where Turnback only browses. */
export function requireTrust(action: string): boolean {
  if (vscode.workspace.isTrusted) {
    return true;
  }
  void vscode.window.showWarningMessage(
    `${action} is not available in an untrusted workspace: Turnback only browses history there. ` +
      'Trust the workspace to change files.',
  );
  return false;
}

/**
 * The error in a notification: a long one's key part, and "Show Details" for the whole
 * message (a toast cut it off mid-sentence, with no way to read the rest).
 */
export function showError(action: string, err: unknown): void {
  const { summary, detail } = toastParts(describeError(action, err));
  if (detail === undefined) {
    void vscode.window.showErrorMessage(summary);
    return;
  }
  void vscode.window.showErrorMessage(summary, SHOW_DETAILS).then((picked) => {
    if (picked === SHOW_DETAILS) {
      void vscode.window.showErrorMessage(`${action} failed`, { modal: true, detail });
    }
  });
}

const SHOW_DETAILS = 'Show Details';

/**
 * Runs `task` with its progress in the status bar, and in a notification once it has run
 * `NOTIFY_AFTER_MS` (slow.ts: a quick one's notification outlived it by up to 800 ms, beside
 * the answer or the error that followed); errors propagate.
 */
export function withProgress<T>(title: string, task: (token: vscode.CancellationToken) => Promise<T>): Promise<T> {
  const running = Promise.resolve(
    vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: `Turnback: ${title}` }, (_progress, token) =>
      task(token),
    ),
  );
  whenSlow(running, NOTIFY_AFTER_MS, () => {
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Turnback: ${title}`, cancellable: false },
      () => running.catch(() => undefined),
    );
  });
  return running;
}

/** A checkpoint a command acts on. */
export interface CheckpointTarget {
  folder?: string;
  checkpoint: CheckpointRef;
  /** How to name the target in questions and toasts as is (default: the title in quotes). */
  described?: string;
  /** `described` in full when it is cut (a turn's prompt): the notification's Show Details. */
  whole?: string;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/**
 * The checkpoint named by a command argument: a tree node that stands for one,
 * a changed-file node (its checkpoint), or `{folder?, checkpoint: "id"}`.
 */
export function checkpointArg(arg: unknown): CheckpointTarget | undefined {
  if (!isObject(arg)) {
    return undefined;
  }
  const folder = typeof arg.folder === 'string' ? arg.folder : undefined;
  const cp = arg.checkpoint;
  if (typeof cp === 'string' && cp.length > 0) {
    return { folder, checkpoint: { id: cp, title: cp } };
  }
  if (isObject(cp) && typeof cp.id === 'string' && typeof cp.title === 'string') {
    return { folder, checkpoint: cp as unknown as CheckpointRef };
  }
  return undefined;
}

export function pathArg(arg: unknown): string | undefined {
  return isObject(arg) && typeof arg.path === 'string' && arg.path.length > 0 ? arg.path : undefined;
}

export function modeArg(arg: unknown): RewindMode | undefined {
  if (isObject(arg) && (arg.mode === 'files' || arg.mode === 'conversation' || arg.mode === 'both')) {
    return arg.mode;
  }
  return undefined;
}

export function stringField(arg: unknown, name: string): string | undefined {
  if (!isObject(arg)) {
    return undefined;
  }
  const v = arg[name];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** Whether the argument asks to skip confirmations (scripts, the notification's Undo button). */
export function confirmedArg(arg: unknown): boolean {
  return isObject(arg) && arg.confirmed === true;
}

/** Whether a command argument is a node of the Turnback tree (rather than a script's object). */
export function isTreeNode(arg: unknown): arg is TreeNode {
  return isObject(arg) && typeof arg.key === 'string' && typeof arg.type === 'string';
}
