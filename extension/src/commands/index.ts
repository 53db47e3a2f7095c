/**
 * Registers every command. The ids are the extension's public surface (menus,
 * keybindings, scripts, end-to-end tests): docs/EXTENSION.md lists them.
 */

import * as vscode from 'vscode';

import type { LoadMoreNode } from '../tree/model';
import type { Services } from './common';
import { compareWithNow, compareWithPrevious, openChange } from './compare';
import { restoreFile, rewindHere, rewindPick, undoRewind } from './rewind';
import { copyId, createCheckpoint, fork, importSessions, searchSessions, showSession } from './sessions';
import { pullHistory, pushHistory } from './sharing';
import { collectGarbage, openStoreFolder, restartServer } from './store';

export const VIEW_ID = 'turnback.sessions';

export function registerCommands(services: Services): vscode.Disposable[] {
  const table: Record<string, (arg: unknown) => unknown> = {
    'turnback.createCheckpoint': (arg) => createCheckpoint(services, arg),
    'turnback.rewind': (arg) => rewindPick(services, arg),
    'turnback.rewindHere': (arg) => rewindHere(services, arg),
    'turnback.undo': (arg) => undoRewind(services, arg),
    'turnback.restoreFile': (arg) => restoreFile(services, arg),
    'turnback.compareWithNow': (arg) => compareWithNow(services, arg),
    'turnback.compareWithPrevious': (arg) => compareWithPrevious(services, arg),
    'turnback.openChange': (arg) => openChange(arg),
    'turnback.fork': (arg) => fork(services, arg),
    'turnback.showSession': (arg) => showSession(services, arg),
    'turnback.searchSessions': (arg) => searchSessions(services, arg),
    'turnback.importSessions': (arg) => importSessions(services, arg),
    'turnback.gc': (arg) => collectGarbage(services, arg),
    'turnback.pushHistory': (arg) => pushHistory(services, arg),
    'turnback.pullHistory': (arg) => pullHistory(services, arg),
    'turnback.openStoreFolder': (arg) => openStoreFolder(services, arg),
    'turnback.restartServer': () => restartServer(services),
    'turnback.copyId': (arg) => copyId(arg),
    'turnback.showOutput': () => {
      services.client.output.show();
    },
    'turnback.refresh': () => {
      services.cache.invalidateAll();
    },
    'turnback.showView': () => vscode.commands.executeCommand(`${VIEW_ID}.focus`),
    'turnback.loadMore': (arg) => {
      const node = arg as LoadMoreNode | undefined;
      if (node?.type === 'loadMore') {
        services.cache.loadMore(node.folder, node.sessionId);
      }
    },
  };
  return Object.entries(table).map(([id, fn]) => vscode.commands.registerCommand(id, fn));
}
