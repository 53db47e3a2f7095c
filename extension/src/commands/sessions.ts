/**
 * Session commands: Create Checkpoint, Fork Here, Show Session…, Search
 * Sessions…, Import Sessions…, Copy Id.
 */

import * as vscode from 'vscode';

import { countOf, inline } from '../format';
import { pickFolder } from '../folders';
import { AGENT_SOURCES, IMPORT_SOURCES, type ImportSource, type SessionInfo } from '../protocol';
import { sessionItem } from '../picks';
import { checkpointTitle } from '../tree/labels';
import { type Services, isTreeNode, requireTrust, showError, stringField, withProgress } from './common';

/** turnback.createCheckpoint: from the palette, the view's title bar, or a session's context menu. */
export async function createCheckpoint(services: Services, arg: unknown): Promise<void> {
  if (!requireTrust('Create Checkpoint')) {
    return;
  }
  const folder = await pickFolder(stringField(arg, 'folder'), 'Checkpoint which workspace folder?');
  if (folder === undefined) {
    return;
  }
  const sessionId = stringField(arg, 'sessionId');
  // A tree node's label is its own name, not a checkpoint label.
  let label = isTreeNode(arg) ? undefined : stringField(arg, 'label');
  if (label === undefined) {
    label = await vscode.window.showInputBox({
      title: 'Turnback: Create Checkpoint',
      prompt: 'A label for the checkpoint (optional). Enter takes it; Escape cancels.',
      placeHolder: 'e.g. before refactoring',
    });
    if (label === undefined) {
      return;
    }
  }
  try {
    const r = await withProgress('taking a checkpoint…', () =>
      services.client.request('turnback/createCheckpoint', {
        folder,
        sessionId,
        label: label.trim().length > 0 ? label.trim() : undefined,
      }),
    );
    services.cache.invalidateAll();
    const files = typeof r.checkpoint.files === 'number' ? ` (${countOf(r.checkpoint.files, 'file')})` : '';
    void vscode.window.showInformationMessage(`Checkpoint “${checkpointTitle(r.checkpoint)}” created${files}.`);
    const { sessionId: sid, eventId } = r.checkpoint;
    if (services.view.visible && sid !== null && eventId !== null) {
      // Show where it went (a palette checkpoint goes to the "workspace" session).
      await services.tree.revealEvent(services.view, folder, sid, eventId);
    }
  } catch (err) {
    showError('Create Checkpoint', err);
  }
}

/** turnback.fork: the session's head moves to this event; nothing is deleted. */
export async function fork(services: Services, arg: unknown): Promise<void> {
  if (!requireTrust('Fork Here')) {
    return;
  }
  const eventId = stringField(arg, 'eventId');
  const folder = await pickFolder(stringField(arg, 'folder'));
  if (eventId === undefined || folder === undefined) {
    return;
  }
  try {
    const r = await services.client.request('turnback/fork', {
      folder,
      eventId,
      sessionId: stringField(arg, 'sessionId'),
    });
    services.cache.invalidateAll();
    const label = stringField(arg, 'label') ?? eventId;
    void vscode.window.showInformationMessage(
      `The session's head is now “${inline(label)}”: the next event starts a new branch (session ${inline(r.sessionId)}).`,
    );
  } catch (err) {
    showError('Fork Here', err);
  }
}

async function pickAndReveal(services: Services, folder: string, sessions: SessionInfo[], title: string): Promise<void> {
  const now = Date.now();
  const picked = await vscode.window.showQuickPick(
    sessions.map((s) => sessionItem(s, now)),
    { title, placeHolder: 'Session to show in the Turnback view', matchOnDescription: true, matchOnDetail: true },
  );
  if (picked !== undefined) {
    await services.tree.revealSession(services.view, folder, picked.session);
  }
}

/** How many sessions a picker lists at most (the server pages them). */
const PICK_LIMIT = 1000;

/** turnback.showSession: pick a session (or pass `{folder?, sessionId}`) and reveal it in the view. */
export async function showSession(services: Services, arg: unknown): Promise<void> {
  const folder = await pickFolder(stringField(arg, 'folder'));
  if (folder === undefined) {
    return;
  }
  try {
    const r = await services.client.request('turnback/sessions', { folder, offset: 0, limit: PICK_LIMIT });
    const wanted = stringField(arg, 'sessionId');
    if (wanted !== undefined) {
      const found =
        r.sessions.find((s) => s.id === wanted) ??
        (await services.client.request('turnback/session', { folder, sessionId: wanted, limit: 1 })).session;
      await services.tree.revealSession(services.view, folder, found);
      return;
    }
    if (r.sessions.length === 0) {
      void vscode.window.showInformationMessage('No sessions recorded in this folder yet.');
      return;
    }
    await pickAndReveal(services, folder, r.sessions, 'Turnback: Show Session');
  } catch (err) {
    showError('Show Session', err);
  }
}

/** turnback.searchSessions: the server matches title, agent, id and prompt text. */
export async function searchSessions(services: Services, arg: unknown): Promise<void> {
  const folder = await pickFolder(stringField(arg, 'folder'));
  if (folder === undefined) {
    return;
  }
  const query =
    stringField(arg, 'query') ??
    (await vscode.window.showInputBox({
      title: 'Turnback: Search Sessions',
      prompt: 'Words to find in session titles, agents, ids and prompts',
    }));
  if (query === undefined || query.trim().length === 0) {
    return;
  }
  try {
    const r = await withProgress(`searching sessions for “${query}”…`, () =>
      services.client.request('turnback/sessions', { folder, query: query.trim(), offset: 0, limit: PICK_LIMIT }),
    );
    if (r.sessions.length === 0) {
      void vscode.window.showInformationMessage(`No session matches “${query}”.`);
      return;
    }
    await pickAndReveal(
      services,
      folder,
      r.sessions,
      `Turnback: ${countOf(r.total, 'session')} matching “${query}”`,
    );
  } catch (err) {
    showError('Search Sessions', err);
  }
}

const SOURCE_DETAILS: Record<ImportSource, string> = {
  'claude-code': 'Claude Code transcripts (~/.claude/projects/…); with no path, this workspace’s sessions',
  codex: 'Codex CLI rollouts (~/.codex/sessions/…); with no path, this workspace’s sessions',
  aider: 'aider chat history (.aider.chat.history.md)',
  'gemini-cli': 'Gemini CLI chats (~/.gemini/tmp/…/chats); with no path, this workspace’s chats',
  'qwen-code': 'Qwen Code chats (~/.qwen/tmp/…/chats); with no path, this workspace’s chats',
  cline: 'Cline task folders (VS Code global storage); with no path, this workspace’s tasks',
  'roo-code': 'Roo Code task folders; with no path, this workspace’s tasks',
  'kilo-code': 'Kilo Code task folders; with no path, this workspace’s tasks',
  crush: 'Crush sessions and file versions (.crush/crush.db)',
  'opencode-go': 'OpenCode (Go) sessions and file versions (.opencode/opencode.db)',
  'copilot-cli': 'GitHub Copilot CLI sessions (~/.copilot/history-session-state)',
  opencode: 'OpenCode sessions (~/.local/share/opencode/storage)',
  'copilot-chat': 'Copilot Chat sessions (VS Code workspace storage)',
  continue: 'Continue sessions (~/.continue/sessions)',
  ralph: 'loop history JSONL',
  'checkpoint-json': 'checkpoint JSON files with file diffs',
  'event-records': 'event-record session JSONL with parent ids',
  'meta-jsonl': 'JSONL with a meta header line',
  'snapshot-json': 'whole-conversation snapshot JSON',
  turnback: 'a Turnback export',
};

/** Sources with a place of their own, so that no path is asked for. */
const KNOWN_LOCATION: readonly ImportSource[] = AGENT_SOURCES;

/** turnback.importSessions: pick a source, then its default location or a file or folder. */
export async function importSessions(services: Services, arg: unknown): Promise<void> {
  if (!requireTrust('Import Sessions')) {
    return;
  }
  const folder = await pickFolder(stringField(arg, 'folder'), 'Import into which workspace folder?');
  if (folder === undefined) {
    return;
  }
  let source = stringField(arg, 'source') as ImportSource | undefined;
  if (source === undefined) {
    const picked = await vscode.window.showQuickPick(
      IMPORT_SOURCES.map((s) => ({ label: s, detail: SOURCE_DETAILS[s], source: s })),
      { title: 'Turnback: Import Sessions', placeHolder: 'What wrote the sessions?' },
    );
    source = picked?.source;
  }
  if (source === undefined) {
    return;
  }
  let path = stringField(arg, 'path');
  if (path === undefined) {
    let choose = true;
    if (KNOWN_LOCATION.includes(source)) {
      const where = await vscode.window.showQuickPick(
        [
          { label: 'This workspace’s sessions', detail: 'from the tool’s default location', choose: false },
          { label: 'Choose a file or folder…', choose: true },
        ],
        { title: `Turnback: Import ${source} sessions` },
      );
      if (where === undefined) {
        return;
      }
      choose = where.choose;
    }
    if (choose) {
      const uris = await vscode.window.showOpenDialog({
        title: `Import ${source} sessions`,
        canSelectFiles: true,
        canSelectFolders: true,
        canSelectMany: false,
        openLabel: 'Import',
      });
      const uri = uris?.[0];
      if (uri === undefined) {
        return;
      }
      path = uri.fsPath;
    }
  }
  try {
    const r = await withProgress(`importing ${source} sessions…`, () =>
      services.client.request('turnback/import', { folder, source, path }),
    );
    services.cache.invalidateAll();
    void vscode.window.showInformationMessage(
      `Imported ${countOf(r.sessions.length, 'session')} (${countOf(r.events, 'new event')}) from ${source}.`,
    );
  } catch (err) {
    showError('Import Sessions', err);
  }
}

/** turnback.copyId: the id of a session, event or checkpoint, for the CLI. */
export async function copyId(arg: unknown): Promise<void> {
  const id =
    (typeof arg === 'object' && arg !== null && 'checkpoint' in arg ? stringField(arg.checkpoint, 'id') : undefined) ??
    stringField(arg, 'eventId') ??
    stringField(arg, 'sessionId');
  if (id !== undefined) {
    await vscode.env.clipboard.writeText(id);
    void vscode.window.setStatusBarMessage(`Copied ${id}`, 3000);
  }
}
