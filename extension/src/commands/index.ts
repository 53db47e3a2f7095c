/**
 * Registers every command. The ids are the extension's public surface (menus,
 * keybindings, scripts, end-to-end tests): docs/EXTENSION.md lists them.
 */

import * as vscode from 'vscode';

import type { LoadMoreNode } from '../tree/model';
import type { Services } from './common';
import { compareWithNow, compareWithPrevious, openChange } from './compare';
import { agentHooks } from './hooks';
import { restoreFile, rewindHere, rewindPick, undoRewind } from './rewind';
import { copyId, createCheckpoint, fork, importSessions, searchSessions, showSession } from './sessions';
import { forgetPushedSession, pullHistory, pushHistory } from './sharing';
import { collectGarbage, openStoreFolder, restartServer } from './store';
import { importFound, startRecording } from './firstRun';
import { restoreVersion, revealTurn, showFileHistory } from './history';
import { compareLineTurn, revealLineTurn, rewindBeforeLineTurn } from '../blame/commands';
import { compareTurn, continueTurn, rewindTurn, setEventsView, toggleDetails } from './turns';

export const VIEW_ID = 'turnback.sessions';

export function registerCommands(services: Services): vscode.Disposable[] {
  const table: Record<string, (arg: unknown) => unknown> = {
    'turnback.createCheckpoint': (arg) => createCheckpoint(services, arg),
    'turnback.rewind': (arg) => rewindPick(services, arg),
    'turnback.rewindHere': (arg) => rewindHere(services, arg),
    // a rewind's or an undo's row: its safety checkpoint (the row's `checkpoint`)
    'turnback.rewindBefore': (arg) => rewindHere(services, arg),
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
    'turnback.installAgentHooks': (arg) => agentHooks(services, arg, 'install'),
    'turnback.removeAgentHooks': (arg) => agentHooks(services, arg, 'uninstall'),
    'turnback.pushHistory': (arg) => pushHistory(services, arg),
    'turnback.pullHistory': (arg) => pullHistory(services, arg),
    'turnback.forgetPushedSession': (arg) => forgetPushedSession(services, arg),
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
        services.cache.loadMore(node.folder, node.sessionId, node.what);
      }
    },
    'turnback.rewindTurn': (arg) => rewindTurn(services, arg),
    'turnback.compareTurn': (arg) => compareTurn(services, arg),
    'turnback.continueTurn': (arg) => continueTurn(services, arg),
    'turnback.toggleDetails': () => {
      toggleDetails(services);
    },
    'turnback.showEvents': () => {
      setEventsView(services, true);
    },
    'turnback.showTurns': () => {
      setEventsView(services, false);
    },
    'turnback.showFileHistory': (arg) => showFileHistory(services, arg),
    'turnback.restoreVersion': (arg) => restoreVersion(services, arg),
    'turnback.revealTurn': (arg) => revealTurn(services, arg),
    'turnback.toggleLineAttribution': () => {
      services.attribution?.toggleGutter();
    },
    'turnback.revealLineTurn': (arg) => revealLineTurn(services, arg),
    'turnback.compareLineTurn': (arg) => compareLineTurn(services, arg),
    'turnback.rewindBeforeLineTurn': (arg) => rewindBeforeLineTurn(services, arg),
    'turnback.fileHistoryLoadMore': () => {
      services.history?.loadMore();
    },
    'turnback.startRecording': (arg) => startRecording(services, arg),
    'turnback.importFound': (arg) => importFound(services, arg),
    'turnback.openDocs': () =>
      vscode.commands.executeCommand(
        'markdown.showPreview',
        vscode.Uri.joinPath(vscode.Uri.file(services.client.extensionRoot), 'docs', 'EXTENSION.md'),
      ),
  };
  return Object.entries(table).map(([id, fn]) => vscode.commands.registerCommand(id, fn));
}
