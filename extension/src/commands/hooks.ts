/**
 * turnback.installAgentHooks / turnback.removeAgentHooks: the agents' own hooks for a folder.
 * The server writes the agent's configuration (turnback/hooks); this only asks and reports.
 */

import * as vscode from 'vscode';

import { pickFolder } from '../folders';
import { hookItem } from '../picks';
import { type Services, requireTrust, showError, stringField } from './common';

export async function agentHooks(services: Services, arg: unknown, action: 'install' | 'uninstall'): Promise<void> {
  const title = action === 'install' ? 'Install Agent Hooks' : 'Remove Agent Hooks';
  if (!requireTrust(title)) {
    return;
  }
  const folder = await pickFolder(stringField(arg, 'folder'), `${title} in which folder?`);
  if (folder === undefined) {
    return;
  }
  try {
    const status = await services.client.request('turnback/hooks', { folder });
    const items = status.hooks.map((h) => hookItem(h, action === 'install'));
    const chosen = stringField(arg, 'agent') ?? (await pick(items, title));
    if (chosen === undefined) {
      return;
    }
    const done = [];
    for (const agent of chosen === '' ? items.filter((i) => i.picked).map((i) => i.agent) : [chosen]) {
      const r = await services.client.request('turnback/hooks', { folder, action, agent });
      done.push(`${agent}: ${r.changed[agent] === true ? (action === 'install' ? 'installed' : 'removed') : 'unchanged'}`);
    }
    void vscode.window.showInformationMessage(`Turnback: ${done.join('; ') || 'nothing to do'}.`);
  } catch (err) {
    showError(title, err);
  }
}

/** One agent, or '' for every picked one; undefined when dismissed. */
async function pick(items: { label: string; agent: string }[], title: string): Promise<string | undefined> {
  const choice = await vscode.window.showQuickPick(
    [{ label: 'All agents', agent: '' }, ...items.map((i) => ({ label: i.label, agent: i.agent }))],
    { title: `Turnback: ${title}` },
  );
  return choice?.agent;
}
