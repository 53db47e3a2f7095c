// code-server (VS Code in the browser) for one run: its own user-data and
// extensions folders, settings that keep chat/agent features and first-run
// pages out of the way, bound to a free port on 127.0.0.1 without auth.

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, type Group, run, spawnGroup, stopGroup } from "./processes.ts";

export const E2E_DIR = fileURLToPath(new URL("..", import.meta.url));
export const REPO_ROOT = join(E2E_DIR, "..");
const ENTRY = join(E2E_DIR, "node_modules", "code-server", "out", "node", "entry.js");

/** User settings: a quiet editor whose only agent-related UI is Turnback's. */
export const USER_SETTINGS: Record<string, unknown> = {
  "chat.disableAIFeatures": true,
  "chat.agent.enabled": false,
  "chat.commandCenter.enabled": false,
  "github.copilot.enable": { "*": false },
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "workbench.enableExperiments": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "extensions.ignoreRecommendations": true,
  "security.workspace.trust.enabled": false,
  "git.openRepositoryInParentFolders": "never",
  "editor.minimap.enabled": false,
  // Rows are found by their text; sticky copies of parent rows would only add doubles.
  "workbench.tree.enableStickyScroll": false,
  // Both sides of a diff, always: the suite reads each side's text.
  "diffEditor.renderSideBySide": true,
  "diffEditor.useInlineViewWhenSpaceIsLimited": false,
};

export interface CodeServerOptions {
  /** Folder for this run's user data, extensions, config and logs. */
  runDir: string;
  /** Workspace folder to open. */
  folder: string;
  /** Extra user settings merged over USER_SETTINGS. */
  settings?: Record<string, unknown>;
  /** Port to bind; a free one when left out. */
  port?: number;
  env?: NodeJS.ProcessEnv;
}

export interface CodeServer {
  url: string;
  /** URL that opens the workspace folder. */
  folderUrl: string;
  port: number;
  logPath: string;
  stop(): Promise<void>;
}

function dirs(runDir: string): { userData: string; extensions: string; config: string } {
  return {
    userData: join(runDir, "user-data"),
    extensions: join(runDir, "extensions"),
    config: join(runDir, "config.yaml"),
  };
}

/** Environment that keeps code-server's own files inside runDir, not in $HOME. */
function isolatedEnv(runDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    XDG_CONFIG_HOME: join(runDir, "xdg", "config"),
    XDG_DATA_HOME: join(runDir, "xdg", "data"),
    XDG_CACHE_HOME: join(runDir, "xdg", "cache"),
    ...extra,
  };
}

function commonArgs(runDir: string): string[] {
  const d = dirs(runDir);
  mkdirSync(join(d.userData, "User"), { recursive: true });
  mkdirSync(d.extensions, { recursive: true });
  // A config file of our own, so code-server does not write one into $HOME.
  writeFileSync(d.config, "auth: none\n");
  return ["--config", d.config, "--user-data-dir", d.userData, "--extensions-dir", d.extensions];
}

/** Installs a .vsix into the run's extensions folder. */
export async function installExtension(runDir: string, vsixPath: string): Promise<void> {
  await run(process.execPath, [ENTRY, ...commonArgs(runDir), "--force", "--install-extension", vsixPath], {
    env: isolatedEnv(runDir),
  });
}

async function waitHealthy(url: string, group: Group, timeoutMs: number, logPath: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void group.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`code-server exited during start-up; see ${logPath}`);
    try {
      const response = await fetch(new URL("healthz", url));
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`code-server not answering on ${url} after ${timeoutMs} ms; see ${logPath}`);
}

export async function startCodeServer(options: CodeServerOptions): Promise<CodeServer> {
  const { runDir, folder } = options;
  const args = commonArgs(runDir);
  // Also as the machine's settings: in code-server the workbench is a remote
  // window, where machine-scoped settings (turnback.python) are read only there.
  const settings = JSON.stringify({ ...USER_SETTINGS, ...options.settings }, null, 2);
  for (const scope of ["User", "Machine"]) {
    mkdirSync(join(dirs(runDir).userData, scope), { recursive: true });
    writeFileSync(join(dirs(runDir).userData, scope, "settings.json"), settings);
  }
  const port = options.port ?? (await freePort());
  const logPath = join(runDir, "code-server.log");
  const group = spawnGroup(
    process.execPath,
    [
      ENTRY,
      ...args,
      "--auth", "none",
      "--bind-addr", `127.0.0.1:${port}`,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      "--ignore-last-opened",
      folder,
    ],
    { logPath, env: isolatedEnv(runDir, options.env) },
  );
  const url = `http://127.0.0.1:${port}/`;
  try {
    await waitHealthy(url, group, 60_000, logPath);
  } catch (error) {
    await stopGroup(group);
    throw error;
  }
  return {
    url,
    folderUrl: `${url}?folder=${encodeURIComponent(folder)}`,
    port,
    logPath,
    stop: () => stopGroup(group),
  };
}
