// The moment the folder is opened: a folder with no Turnback store where Claude Code
// already worked (a session planted under a private HOME, as Claude Code writes it).
// Nothing is clicked: the extension activates once start-up has finished, starts the
// server, and the session is imported; a prompt Claude Code writes afterwards is
// followed live, with a checkpoint. The view is opened only to look.

import assert from "node:assert/strict";
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, openWorkbench, Shots } from "../lib/browser.ts";
import { type CodeServer, installExtension, REPO_ROOT, startCodeServer } from "../lib/codeServer.ts";
import { onExit } from "../lib/processes.ts";
import { cliJson, extensionSettings } from "../lib/turnback.ts";
import { TreeView } from "../lib/workbench.ts";

const vsix = process.env["TURNBACK_VSIX"];
const runDir = mkdtempSync(join(tmpdir(), "turnback-e2e-firstopen-"));
onExit(() => rmSync(runDir, { recursive: true, force: true }));
const workspace = join(runDir, "agentwork");
const home = join(runDir, "home");
const shotsDir = join(process.env["ARTIFACTS_DIR"] ?? join(REPO_ROOT, "artifacts"), "e2e");
const shots = new Shots(shotsDir);
const SID = "7d0b1f0e-3c1a-4b7e-9a55-2f3e8c1d9b20";
let transcript = "";
let server: CodeServer | undefined;
let browser: Browser | undefined;
let page: Page;

/** One line of a Claude Code transcript (the fields its importer reads). */
function line(uuid: string, parent: string | null, type: string, extra: Record<string, unknown>): string {
  const cwd = realpathSync(workspace);
  return `${JSON.stringify({ parentUuid: parent, isSidechain: false, cwd, sessionId: SID, type, uuid, timestamp: new Date().toISOString(), ...extra })}\n`;
}

function prompt(uuid: string, parent: string | null, text: string): string {
  return line(uuid, parent, "user", { message: { role: "user", content: text } });
}

function answer(uuid: string, parent: string, text: string): string {
  return line(uuid, parent, "assistant", {
    message: { role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "text", text }] },
  });
}

function turnEnd(uuid: string, parent: string): string {
  return line(uuid, parent, "system", { subtype: "turn_duration", content: "", durationMs: 900 });
}

/** Claude Code's project folder name for a workspace: every character not [A-Za-z0-9] becomes "-". */
function projectDir(ws: string): string {
  return realpathSync(ws).replace(/[^A-Za-z0-9]/g, "-");
}

before(async () => {
  if (vsix === undefined || !existsSync(vsix)) {
    throw new Error(`TURNBACK_VSIX must name the built extension (got ${String(vsix)}); run scripts/test-e2e.sh`);
  }
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, "app.py"), "print('hello')\n");
  const project = join(home, ".claude", "projects", projectDir(workspace));
  mkdirSync(project, { recursive: true });
  transcript = join(project, `${SID}.jsonl`);
  writeFileSync(
    transcript,
    prompt("u1", null, "Add a greeting to app.py") +
      answer("a1", "u1", "Done: app.py greets.") +
      turnEnd("d1", "a1"),
  );
  await installExtension(runDir, vsix);
  // Default settings: following agents is on; the agents' folders are under this HOME only.
  server = await startCodeServer({ runDir, folder: workspace, settings: extensionSettings(), env: { HOME: home } });
  browser = await launchBrowser();
  page = await openWorkbench(browser, server.folderUrl);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  if (server !== undefined) {
    cpSync(join(runDir, "user-data", "logs"), join(shotsDir, "firstopen-logs"), { recursive: true });
  }
  rmSync(runDir, { recursive: true, force: true });
});

/** The session's prompts as the store counts them; 0 until it has the session. */
async function storedPrompts(): Promise<number> {
  if (!existsSync(join(workspace, ".turnback"))) return 0;
  try {
    const got = await cliJson<{ stats: { prompts: number } }>(workspace, "session", "show", SID);
    return got.stats.prompts;
  } catch {
    return 0;
  }
}

async function until<T>(check: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(v)})`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

test("an agent's session of the folder is imported and followed without a click", async () => {
  // Nothing clicked yet: the extension activated on start-up and the server imported it.
  await until(storedPrompts, (n) => n === 1, "the Claude Code session imported without a click");
  await shots.take(page, "firstopen-no-click");

  appendFileSync(transcript, prompt("u2", "d1", "Now make it say goodbye too"));
  await until(storedPrompts, (n) => n === 2, "the new prompt followed live");
  const { checkpoints } = await cliJson<{ checkpoints: { label: string; auto: boolean }[] }>(
    workspace, "checkpoints", "--session", SID,
  );
  assert.ok(checkpoints.some((c) => c.label === "new turn" && c.auto), `checkpoints: ${JSON.stringify(checkpoints)}`);

  const view = new TreeView(page);
  await view.open();
  // the session (titled by its first prompt), then its two turns
  await view.row(/Add a greeting to app\.py/, 60_000);
  await view.expand(/Add a greeting to app\.py/);
  await view.row(/Now make it say goodbye too/, 60_000);
  await shots.take(page, "firstopen-turns");
});
