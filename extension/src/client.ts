/**
 * The connection to the Turnback server: finds the interpreter, starts
 * `python -m turnback.server` over stdio with vscode-languageclient, sends the
 * settings, and offers typed requests. Store logic lives in the server; this
 * module only carries requests and notifications.
 */

import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';
import {
  type ConfigurationParams,
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';

import { errorText } from './errors';
import { type BundleManifest, planLaunch, serverArgs, serverEnvironment, targetName, versionText } from './launch';
import {
  type DidChangeParams,
  Notifications,
  type ParamsOf,
  type RequestMethod,
  type ResultOf,
} from './protocol';
import { findInterpreter } from './python';
import { sendTyped } from './rpc';
import { SECTION, serverSettings } from './settings';

export type ServerState =
  | { kind: 'stopped' }
  | { kind: 'starting' }
  | { kind: 'running'; python: string }
  | { kind: 'failed'; reason: string };

export class TurnbackClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  private state: ServerState = { kind: 'stopped' };
  private readonly disposables: { dispose(): unknown }[] = [];
  private readonly storeChanged = new vscode.EventEmitter<DidChangeParams>();
  private readonly stateChanged = new vscode.EventEmitter<ServerState>();

  /** The store of a folder changed (`turnback/didChange`), whichever process changed it. */
  readonly onDidChangeStore = this.storeChanged.event;
  readonly onDidChangeState = this.stateChanged.event;

  constructor(
    readonly extensionRoot: string,
    readonly output: vscode.LogOutputChannel,
  ) {
    this.disposables.push(this.storeChanged, this.stateChanged);
  }

  get currentState(): ServerState {
    return this.state;
  }

  private setState(state: ServerState): void {
    this.state = state;
    this.stateChanged.fire(state);
  }

  /** Starts the server unless it runs or is starting; resolves when it answers (or has failed). */
  start(): Promise<void> {
    if (this.client !== undefined && this.state.kind === 'running') {
      return Promise.resolve();
    }
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async doStart(): Promise<void> {
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (folders.length === 0) {
      this.setState({ kind: 'stopped' });
      return;
    }
    this.setState({ kind: 'starting' });
    const log = (line: string): void => {
      this.output.info(line);
    };
    const interpreter = await findInterpreter(this.extensionRoot, folders[0]?.uri, log);
    if ('error' in interpreter) {
      this.fail(interpreter.error);
      return;
    }
    const plan = planLaunch(
      {
        extensionRoot: this.extensionRoot,
        exists: existsSync,
        join: (...parts) => path.join(...parts),
        manifest: readManifest(this.extensionRoot),
        platform: targetName(process.platform, process.arch),
      },
      interpreter.command,
      interpreter.version,
    );
    if (!plan.ok) {
      this.fail(plan.reason);
      return;
    }
    log(
      `Starting the server with ${interpreter.command} (Python ${versionText(interpreter.version)}, ` +
        `${interpreter.source}), ${plan.mode} layout, PYTHONPATH=${plan.pythonPath.join(path.delimiter)}`,
    );
    const serverOptions: ServerOptions = {
      command: interpreter.command,
      args: serverArgs(),
      transport: TransportKind.stdio,
      options: {
        env: serverEnvironment(process.env, plan.pythonPath, path.delimiter),
        cwd: folders[0]?.uri.scheme === 'file' ? folders[0].uri.fsPath : undefined,
      },
    };
    const clientOptions: LanguageClientOptions = {
      // The server offers no language features: no documents are synced.
      documentSelector: [],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: () => this.settingsFor(undefined),
      middleware: {
        workspace: {
          // The server pulls `turnback` per folder; answer with the same
          // computed settings as the push, so trust is honoured both ways.
          configuration: (params: ConfigurationParams, token, next) => {
            const custom = params.items.map((item) =>
              item.section === SECTION
                ? this.settingsFor(item.scopeUri !== undefined ? vscode.Uri.parse(item.scopeUri) : undefined)
                : undefined,
            );
            if (custom.every((c) => c !== undefined)) {
              return custom;
            }
            return Promise.resolve(next(params, token)).then((answers) =>
              Array.isArray(answers) ? answers.map((a: unknown, i) => custom[i] ?? a) : answers,
            );
          },
        },
      },
    };
    const client = new LanguageClient('turnback', 'Turnback', serverOptions, clientOptions);
    this.client = client;
    client.onNotification(Notifications.didChange, (params: DidChangeParams) => {
      this.storeChanged.fire(params);
    });
    client.onDidChangeState((e) => {
      if (this.client !== client) {
        return;
      }
      if (e.newState === State.Running) {
        this.setState({ kind: 'running', python: interpreter.command });
      } else if (e.newState === State.Stopped && this.state.kind === 'running') {
        this.setState({
          kind: 'failed',
          reason: 'The Turnback server stopped. Run "Turnback: Restart Server"; its log is in the Turnback output channel.',
        });
      }
    });
    try {
      await client.start();
      this.setState({ kind: 'running', python: interpreter.command });
    } catch (err) {
      this.client = undefined;
      await client.dispose().catch(() => undefined);
      this.fail(`The Turnback server did not start: ${errorText(err)}`);
    }
  }

  private fail(reason: string): void {
    this.output.error(reason);
    this.setState({ kind: 'failed', reason });
  }

  private settingsFor(scope: vscode.Uri | undefined): Record<string, unknown> {
    const cfg = vscode.workspace.getConfiguration(SECTION, scope);
    return { ...serverSettings(cfg, vscode.workspace.isTrusted) };
  }

  /** Pushes the current settings (workspace/didChangeConfiguration with the `turnback` section). */
  async sendSettings(): Promise<void> {
    if (this.client?.isRunning() === true) {
      await this.client.sendNotification('workspace/didChangeConfiguration', {
        settings: { [SECTION]: this.settingsFor(undefined) },
      });
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) {
      try {
        await client.stop(5000);
      } catch (err) {
        this.output.warn(`Stopping the server: ${errorText(err)}`);
      }
      await client.dispose().catch(() => undefined);
    }
    this.setState({ kind: 'stopped' });
  }

  async restart(): Promise<void> {
    if (this.starting !== undefined) {
      await this.starting;
    }
    await this.stop();
    await this.start();
  }

  /** A typed request; waits for a starting server, throws with the reason when there is none. */
  async request<M extends RequestMethod>(
    method: M,
    params: ParamsOf<M>,
    token?: vscode.CancellationToken,
  ): Promise<ResultOf<M>> {
    // A server that failed is not retried behind the user's back: the tree
    // would start one interpreter per refresh. Restart Server retries.
    if (this.state.kind === 'stopped') {
      await this.start();
    } else if (this.starting !== undefined) {
      await this.starting;
    }
    const client = this.client;
    if (client === undefined || this.state.kind !== 'running') {
      const reason = this.state.kind === 'failed' ? this.state.reason : 'The Turnback server is not running.';
      throw new Error(reason);
    }
    return sendTyped(client, method, params, token);
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

function readManifest(root: string): BundleManifest | undefined {
  try {
    const raw = JSON.parse(readFileSync(path.join(root, 'bundled', 'manifest.json'), 'utf8')) as unknown;
    if (typeof raw === 'object' && raw !== null) {
      const m = raw as Partial<BundleManifest>;
      if (Array.isArray(m.pythonVersions) && typeof m.platform === 'string') {
        return { pythonVersions: m.pythonVersions, platform: m.platform };
      }
    }
  } catch {
    // No manifest: a development checkout, or a build without bundled dependencies.
  }
  return undefined;
}
