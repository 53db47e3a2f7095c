/**
 * Workspace folders as the server names them (their URI strings), and the
 * picker used when a command does not say which folder it means.
 */

import * as vscode from 'vscode';

export function folderId(folder: vscode.WorkspaceFolder): string {
  return folder.uri.toString();
}

/** The workspace folder a server-sent folder URI means (compared as URIs, then as paths). */
export function matchFolder(uri: string): vscode.WorkspaceFolder | undefined {
  const folders = vscode.workspace.workspaceFolders ?? [];
  let parsed: vscode.Uri;
  try {
    parsed = vscode.Uri.parse(uri);
  } catch {
    return undefined;
  }
  const text = parsed.toString();
  return (
    folders.find((f) => f.uri.toString() === text) ??
    folders.find((f) => f.uri.scheme === parsed.scheme && f.uri.fsPath === parsed.fsPath)
  );
}

export function folderName(uri: string): string {
  return matchFolder(uri)?.name ?? vscode.Uri.parse(uri).path.split('/').pop() ?? uri;
}

/**
 * The folder a command applies to: the given one, the only one, the active
 * editor's, else the user's pick. Undefined when there is none or the pick is dismissed.
 */
export async function pickFolder(given?: string, placeHolder = 'Workspace folder'): Promise<string | undefined> {
  if (given !== undefined) {
    return given;
  }
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length === 0) {
    void vscode.window.showErrorMessage('Turnback works on a folder: open a folder first.');
    return undefined;
  }
  if (folders.length === 1 && folders[0] !== undefined) {
    return folderId(folders[0]);
  }
  const picked = await vscode.window.showWorkspaceFolderPick({ placeHolder });
  return picked ? folderId(picked) : undefined;
}

/** The folder the user is looking at: the active editor's, else the first. */
export function activeFolder(): vscode.WorkspaceFolder | undefined {
  const uri = vscode.window.activeTextEditor?.document.uri;
  const fromEditor = uri ? vscode.workspace.getWorkspaceFolder(uri) : undefined;
  return fromEditor ?? vscode.workspace.workspaceFolders?.[0];
}

/** The on-disk URI of a workspace-relative path. */
export function fileUri(folder: string, relPath: string): vscode.Uri {
  return vscode.Uri.joinPath(vscode.Uri.parse(folder), ...relPath.split('/'));
}
