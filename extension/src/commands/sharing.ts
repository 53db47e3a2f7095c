/**
 * Push History / Pull History / Forget Pushed Session: the server's turnback/pushHistory and
 * turnback/pullHistory (docs/SHARING.md). A push is shown as a dry run first — what would be
 * sent, how many bytes, what is redacted — and sent after a yes; forgetting a session is
 * pushHistory with `forget`, after a confirmation that says what git's history means for it.
 */

import * as vscode from 'vscode';

import { countOf, formatBytes, inline } from '../format';
import { pickFolder } from '../folders';
import { forgetConfirmation, forgetSummary } from '../forgetText';
import type { SessionInfo } from '../protocol';
import { sessionTitle } from '../tree/labels';
import { type Services, confirmedArg, requireTrust, showError, stringField, withProgress } from './common';
import { sessionItem } from '../picks';

export async function pushHistory(services: Services, arg: unknown): Promise<void> {
  if (!requireTrust('Push History')) {
    return;
  }
  const folder = await pickFolder(stringField(arg, 'folder'), 'Push the history of which folder?');
  if (folder === undefined) {
    return;
  }
  const remote = stringField(arg, 'remote');
  try {
    if (!confirmedArg(arg)) {
      const dry = await withProgress('preparing the push…', () =>
        services.client.request('turnback/pushHistory', { folder, remote, dryRun: true }),
      );
      if (dry.upToDate) {
        void vscode.window.showInformationMessage(`History is up to date at ${inline(dry.url)} (${inline(dry.ref)}).`);
        return;
      }
      const lines = [
        `${countOf(dry.sessions, 'session')} and ${countOf(dry.checkpoints, 'checkpoint')}: ` +
          `${countOf(dry.objects, 'new object')}, ${formatBytes(dry.bytes ?? 0)} to ${inline(dry.url)} (${inline(dry.ref)}).`,
      ];
      const redactions = dry.redactions;
      if (redactions.length > 0) {
        lines.push(`Redacted first: ${countOf(redactions.length, 'secret')}:`);
        lines.push(...redactions.slice(0, 10).map((r) => `  ${inline(r.kind)} in ${inline(r.where)}, line ${String(r.line)}`));
      }
      const answer = await vscode.window.showWarningMessage(
        'Push Turnback history?',
        { modal: true, detail: lines.join('\n') },
        'Push History',
      );
      if (answer !== 'Push History') {
        return;
      }
    }
    const r = await withProgress('pushing history…', () =>
      services.client.request('turnback/pushHistory', { folder, remote }),
    );
    void vscode.window.showInformationMessage(
      r.upToDate ? `History is up to date at ${inline(r.url)}.` : `Pushed ${r.bytes === null ? 'history' : formatBytes(r.bytes)} to ${inline(r.url)} (${inline(r.ref)}).`,
    );
  } catch (err) {
    showError('Push History', err);
  }
}

export async function pullHistory(services: Services, arg: unknown): Promise<void> {
  if (!requireTrust('Pull History')) {
    return;
  }
  const folder = await pickFolder(stringField(arg, 'folder'), 'Pull history into which folder’s store?');
  if (folder === undefined) {
    return;
  }
  try {
    const r = await withProgress('pulling history…', () =>
      services.client.request('turnback/pullHistory', { folder, remote: stringField(arg, 'remote') }),
    );
    services.cache.invalidateAll();
    const refused = r.machines.filter((m) => m.refused !== null);
    const taken = r.machines.filter((m) => m.refused === null);
    const checkpoints = taken.reduce((n, m) => n + m.checkpoints, 0);
    const events = taken.reduce((n, m) => n + m.events, 0);
    const text = `Pulled from ${countOf(taken.length, 'machine')}: ${countOf(checkpoints, 'new checkpoint')}, ${countOf(events, 'new event')}.`;
    if (refused.length > 0) {
      void vscode.window.showWarningMessage(
        `${text} Refused ${refused.map((m) => `${inline(m.machine)}: ${inline(m.refused ?? '')}`).join('; ')}`,
      );
    } else {
      void vscode.window.showInformationMessage(text);
    }
  } catch (err) {
    showError('Pull History', err);
  }
}

/** How many sessions the picker lists at most (the server pages them). */
const PICK_LIMIT = 1000;

/** The session to forget: the tree node's or `{sessionId}`, else picked among this machine's own. */
async function pickOwnSession(services: Services, folder: string, wanted: string | undefined): Promise<SessionInfo | undefined> {
  const r = await services.client.request('turnback/sessions', { folder, offset: 0, limit: PICK_LIMIT });
  const own = r.sessions.filter((s) => s.origin === undefined);
  if (wanted !== undefined) {
    const found = own.find((s) => s.id === wanted);
    if (found === undefined) {
      const pulled = r.sessions.some((s) => s.id === wanted);
      throw new Error(
        pulled
          ? `Session ${wanted} was pulled from another machine: only that machine can forget it (docs/SHARING.md).`
          : `No session ${wanted} in this folder's store.`,
      );
    }
    return found;
  }
  if (own.length === 0) {
    void vscode.window.showInformationMessage("This folder's store has no session of this machine to forget.");
    return undefined;
  }
  const now = Date.now();
  const picked = await vscode.window.showQuickPick(
    own.map((s) => sessionItem(s, now)),
    {
      title: 'Turnback: Forget Pushed Session',
      placeHolder: 'Session never to push again (the remote’s copy is replaced)',
      matchOnDescription: true,
      matchOnDetail: true,
    },
  );
  return picked?.session;
}

/** turnback.forgetPushedSession: from the palette or a session's context menu in the Sessions view. */
export async function forgetPushedSession(services: Services, arg: unknown): Promise<void> {
  if (!requireTrust('Forget Pushed Session')) {
    return;
  }
  const folder = await pickFolder(stringField(arg, 'folder'), 'Forget a session of which folder?');
  if (folder === undefined) {
    return;
  }
  const remote = stringField(arg, 'remote');
  try {
    const session = await pickOwnSession(services, folder, stringField(arg, 'sessionId'));
    if (session === undefined) {
      return;
    }
    const title = sessionTitle(session);
    if (!confirmedArg(arg)) {
      const c = forgetConfirmation(title, session.id);
      const answer = await vscode.window.showWarningMessage(c.message, { modal: true, detail: c.detail }, c.action);
      if (answer !== c.action) {
        return;
      }
    }
    const r = await withProgress('forgetting the session on the remote…', () =>
      services.client.request('turnback/pushHistory', { folder, remote, forget: [session.id] }),
    );
    void vscode.window.showInformationMessage(forgetSummary(title, r));
  } catch (err) {
    showError('Forget Pushed Session', err);
  }
}
