/**
 * Push History / Pull History: the server's turnback/pushHistory and turnback/pullHistory
 * (docs/SHARING.md). A push is shown as a dry run first — what would be sent, how many
 * bytes, what is redacted — and sent after a yes.
 */

import * as vscode from 'vscode';

import { countOf, formatBytes } from '../format';
import { pickFolder } from '../folders';
import { type Services, confirmedArg, requireTrust, showError, stringField, withProgress } from './common';

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
        void vscode.window.showInformationMessage(`History is up to date at ${dry.url} (${dry.ref}).`);
        return;
      }
      const lines = [
        `${countOf(dry.sessions, 'session')} and ${countOf(dry.checkpoints, 'checkpoint')}: ` +
          `${countOf(dry.objects, 'new object')}, ${formatBytes(dry.bytes ?? 0)} to ${dry.url} (${dry.ref}).`,
      ];
      const redactions = dry.redactions;
      if (redactions.length > 0) {
        lines.push(`Redacted first: ${countOf(redactions.length, 'secret')}:`);
        lines.push(...redactions.slice(0, 10).map((r) => `  ${r.kind} in ${r.where}, line ${String(r.line)}`));
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
      r.upToDate ? `History is up to date at ${r.url}.` : `Pushed ${r.bytes === null ? 'history' : formatBytes(r.bytes)} to ${r.url} (${r.ref}).`,
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
        `${text} Refused ${refused.map((m) => `${m.machine}: ${m.refused ?? ''}`).join('; ')}`,
      );
    } else {
      void vscode.window.showInformationMessage(text);
    }
  } catch (err) {
    showError('Pull History', err);
  }
}
