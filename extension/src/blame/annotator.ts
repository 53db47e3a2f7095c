/**
 * Line attribution in the editor: the current line's origin as a quiet end-of-line
 * annotation (as GitLens shows the current line's commit), a hover with the turn's prompt,
 * agent, model and time and its actions, gutter colours per agent (toggled), and the
 * share of the file written by agents in the status bar. The server answers
 * (`turnback/blame`, kept per file there); this keeps one answer per document version and
 * drops them all when the store changes.
 */

import * as vscode from 'vscode';

import type { TurnbackClient } from '../client';
import { folderId } from '../folders';
import type { BlameResult } from '../protocol';
import { SECTION } from '../settings';
import { GUTTER_COLOURS, HOVER_COMMANDS, agentShare, annotation, gutterSlot, hoverMarkdown, originAt } from './text';

/** Moves closer together than this, to lines not answered yet, wait for the cursor to settle. */
const DEBOUNCE_MS = 30;
const COLOURS = ['charts.blue', 'charts.orange', 'charts.green', 'charts.purple', 'charts.yellow', 'charts.red'];

interface Asked {
  version: number;
  first: number;
  last: number;
  result: Promise<BlameResult | undefined>;
  answered: boolean;
}

/** Turns whose changed files are kept for the hover. */
const MAX_TURN_FILES = 64;

/** Lines asked for beyond the visible ones, so scrolling a little asks nothing. */
const MARGIN = 300;

function setting(key: string, fallback: boolean): boolean {
  return vscode.workspace.getConfiguration(SECTION).get<boolean>(`attribution.${key}`, fallback);
}

/** The document's folder and workspace-relative path; undefined outside a workspace folder. */
function target(doc: vscode.TextDocument): { folder: string; path: string } | undefined {
  if (doc.uri.scheme !== 'file') {
    return undefined;
  }
  const wf = vscode.workspace.getWorkspaceFolder(doc.uri);
  if (wf === undefined) {
    return undefined;
  }
  const path = vscode.workspace.asRelativePath(doc.uri, false);
  return path === '' || path.startsWith('..') ? undefined : { folder: folderId(wf), path };
}

export class LineAttribution implements vscode.Disposable {
  private readonly asked = new Map<string, Asked>();
  private readonly files = new Map<string, Promise<string[] | undefined>>();
  private readonly current = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor('editorCodeLens.foreground'), margin: '0 0 0 3em', fontStyle: 'italic' },
    rangeBehavior: vscode.DecorationRangeBehavior.ClosedOpen,
  });
  private readonly gutters = COLOURS.map((c) =>
    vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      borderWidth: '0 0 0 3px',
      borderStyle: 'solid',
      borderColor: new vscode.ThemeColor(c),
    }),
  );
  private readonly status = vscode.window.createStatusBarItem('turnback.attribution', vscode.StatusBarAlignment.Right, 100);
  private readonly disposables: { dispose(): unknown }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastMove = 0; // Date.now() of the last schedule()
  private renders = 0; // renders started: an answer that comes after a later one started is not shown
  private gutterOn: boolean;

  constructor(private readonly client: TurnbackClient) {
    this.gutterOn = setting('gutter', false);
    this.status.name = 'Turnback: line attribution';
    this.status.command = 'turnback.toggleLineAttribution';
    this.disposables.push(
      this.current,
      ...this.gutters,
      this.status,
      client.onDidChangeStore(() => {
        this.asked.clear();
        this.schedule();
      }),
      // a file opened before the server was running asked nothing: ask once it is
      client.onDidChangeState(() => {
        this.asked.clear();
        this.schedule();
      }),
      vscode.window.onDidChangeTextEditorSelection(() => {
        this.schedule();
      }),
      vscode.window.onDidChangeActiveTextEditor(() => {
        this.schedule();
      }),
      vscode.window.onDidChangeTextEditorVisibleRanges(() => {
        if (this.gutterOn) {
          this.schedule(); // the lines scrolled into view may lie outside the last answer
        }
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => this.asked.delete(doc.uri.toString())),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`${SECTION}.attribution`)) {
          this.gutterOn = setting('gutter', this.gutterOn);
          this.schedule();
        }
      }),
      vscode.languages.registerHoverProvider({ scheme: 'file' }, { provideHover: (doc, pos) => this.hover(doc, pos) }),
    );
    this.schedule();
  }

  toggleGutter(): void {
    this.gutterOn = !this.gutterOn;
    this.schedule();
  }

  private schedule(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const now = Date.now();
    const settled = now - this.lastMove > DEBOUNCE_MS;
    this.lastMove = now;
    if (settled || this.answered()) {
      // a single move (a click, a jump), or one within lines already answered: at once;
      // only moves coming fast (a key held down) to lines not answered yet wait
      void this.render();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.render();
    }, DEBOUNCE_MS);
  }

  /** Whether the active editor's current line is in an answer already received. */
  private answered(): boolean {
    const editor = vscode.window.activeTextEditor;
    if (editor === undefined) {
      return false;
    }
    const hit = this.asked.get(editor.document.uri.toString());
    const [first, last] = this.span(editor);
    return hit !== undefined && hit.answered && hit.version === editor.document.version && hit.first <= first && last <= hit.last;
  }

  /** The 1-based lines an answer must cover: the visible ones and the cursor's. */
  private span(editor: vscode.TextEditor): [number, number] {
    const line = editor.selection.active.line;
    const visible = editor.visibleRanges;
    return [Math.min(line, ...visible.map((r) => r.start.line)) + 1, Math.max(line, ...visible.map((r) => r.end.line)) + 1];
  }

  /**
   * The server's answer for the document as it is (its unsaved text when dirty), covering
   * 1-based lines `first`..`last` (the answer holds only the lines around them).
   */
  private blame(doc: vscode.TextDocument, first: number, last: number): Promise<BlameResult | undefined> {
    const key = doc.uri.toString();
    const hit = this.asked.get(key);
    if (hit?.version === doc.version && hit.first <= first && last <= hit.last) {
      return hit.result;
    }
    const where = target(doc);
    if (where === undefined || this.client.currentState.kind !== 'running') {
      return Promise.resolve(undefined);
    }
    const from = Math.max(1, first - MARGIN);
    const to = last + MARGIN;
    const asked: Asked = { version: doc.version, first: from, last: to, result: Promise.resolve(undefined), answered: false };
    asked.result = this.client
      .request('turnback/blame', { ...where, startLine: from, endLine: to, ...(doc.isDirty ? { text: doc.getText() } : {}) })
      .catch(() => {
        // no store (yet), a binary file, a file never checkpointed: nothing shown, and asked
        // again at the next move rather than kept
        if (this.asked.get(key) === asked) {
          this.asked.delete(key);
        }
        return undefined;
      })
      .finally(() => {
        asked.answered = true;
      });
    this.asked.set(key, asked);
    return asked.result;
  }

  private async render(): Promise<void> {
    const turn = ++this.renders;
    const editor = vscode.window.activeTextEditor;
    const lineOn = setting('currentLine', true);
    const statusOn = setting('statusBar', true);
    if (editor === undefined || (!lineOn && !statusOn && !this.gutterOn)) {
      this.clear(editor);
      return;
    }
    const line = editor.selection.active.line;
    const [first, last] = this.span(editor);
    const result = await this.blame(editor.document, first, last);
    if (turn !== this.renders || editor !== vscode.window.activeTextEditor) {
      return; // the cursor or the editor moved on meanwhile: a later render shows it
    }
    if (result === undefined) {
      this.clear(editor);
      return;
    }
    const origin = originAt(result, line + 1);
    const eol = editor.document.lineAt(Math.min(line, editor.document.lineCount - 1)).range.end;
    editor.setDecorations(
      this.current,
      lineOn && origin !== undefined ? [{ range: new vscode.Range(eol, eol), renderOptions: { after: { contentText: annotation(origin) } } }] : [],
    );
    const bySlot: vscode.Range[][] = Array.from({ length: GUTTER_COLOURS }, () => []);
    if (this.gutterOn) {
      for (const r of result.ranges) {
        const o = result.origins[r.origin];
        const slot = o === undefined ? undefined : gutterSlot(o);
        if (slot !== undefined) {
          bySlot[slot]?.push(new vscode.Range(r.start - 1, 0, r.end - 1, 0));
        }
      }
    }
    this.gutters.forEach((d, i) => {
      editor.setDecorations(d, bySlot[i] ?? []);
    });
    if (statusOn && result.lineCount > 0) {
      const share = agentShare(result);
      this.status.text = `$(hubot) ${String(share)}%`;
      this.status.tooltip = `${String(share)}% of this file by agents (click: Toggle Line Attribution)`;
      this.status.show();
    } else {
      this.status.hide();
    }
  }

  private clear(editor: vscode.TextEditor | undefined): void {
    if (editor !== undefined) {
      editor.setDecorations(this.current, []);
      for (const d of this.gutters) {
        editor.setDecorations(d, []);
      }
    }
    this.status.hide();
  }

  private async hover(doc: vscode.TextDocument, pos: vscode.Position): Promise<vscode.Hover | undefined> {
    if (!setting('hover', true)) {
      return undefined;
    }
    const where = target(doc);
    const result = where === undefined ? undefined : await this.blame(doc, pos.line + 1, pos.line + 1);
    const origin = result === undefined ? undefined : originAt(result, pos.line + 1);
    if (where === undefined || origin === undefined) {
      return undefined;
    }
    const files = origin.kind === 'turn' ? await this.turnFiles(where.folder, origin.turn?.before, origin.turn?.after) : undefined;
    const md = new vscode.MarkdownString(hoverMarkdown(where.folder, origin, Date.now(), files));
    md.isTrusted = { enabledCommands: Object.values(HOVER_COMMANDS) };
    return new vscode.Hover(md);
  }

  /** The files a turn changed (its start checkpoint against its end), asked once per turn. */
  private turnFiles(folder: string, before: string | null | undefined, after: string | null | undefined): Promise<string[] | undefined> {
    if (before === null || before === undefined || after === null || after === undefined) {
      return Promise.resolve(undefined);
    }
    const key = `${folder}\0${before}\0${after}`;
    let files = this.files.get(key);
    if (files === undefined) {
      files = this.client
        .request('turnback/changes', { folder, from: before, to: after })
        .then((r) => r.changes.map((c) => c.path))
        .catch(() => undefined); // a checkpoint gone since: the hover without its files
      this.files.set(key, files);
      if (this.files.size > MAX_TURN_FILES) {
        const oldest = this.files.keys().next().value;
        if (oldest !== undefined) {
          this.files.delete(oldest);
        }
      }
    }
    return files;
  }

  dispose(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
    }
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
