// The first run: a folder with no Turnback store. The Sessions view explains
// what Turnback does and offers to start recording or to import the agent
// sessions the importers find for this folder (here an aider history).

import assert from "node:assert/strict";
import { cpSync, existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, openWorkbench, Shots } from "../lib/browser.ts";
import { type CodeServer, installExtension, REPO_ROOT, startCodeServer } from "../lib/codeServer.ts";
import { onExit } from "../lib/processes.ts";
import { extensionSettings } from "../lib/turnback.ts";
import { toastText, TreeView } from "../lib/workbench.ts";

const vsix = process.env["TURNBACK_VSIX"];
const runDir = mkdtempSync(join(tmpdir(), "turnback-e2e-welcome-"));
onExit(() => rmSync(runDir, { recursive: true, force: true }));
const workspace = join(runDir, "fresh");
const shotsDir = join(process.env["ARTIFACTS_DIR"] ?? join(REPO_ROOT, "artifacts"), "e2e");
const shots = new Shots(shotsDir);
let server: CodeServer | undefined;
let browser: Browser | undefined;
let page: Page;

before(async () => {
  if (vsix === undefined || !existsSync(vsix)) {
    throw new Error(`TURNBACK_VSIX must name the built extension (got ${String(vsix)}); run scripts/test-e2e.sh`);
  }
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, "app.py"), "print('hello')\n");
  writeFileSync(
    join(workspace, ".aider.chat.history.md"),
    "# aider chat started at 2025-01-01 10:00:00\n\n#### add a greeting\n\nDone.\n",
  );
  await installExtension(runDir, vsix);
  // Following agents is on by default and would import the aider history at once (then
  // the folder has a store and no welcome): off here, to see the first run as such.
  const settings = { ...extensionSettings(), "turnback.followAgents": false };
  server = await startCodeServer({ runDir, folder: workspace, settings });
  browser = await launchBrowser();
  page = await openWorkbench(browser, server.folderUrl);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  if (server !== undefined) {
    // the extension host's logs (the Turnback output channel among them) beside the shots
    cpSync(join(runDir, "user-data", "logs"), join(shotsDir, "welcome-logs"), { recursive: true });
  }
  rmSync(runDir, { recursive: true, force: true });
});

test("a folder without a store gets a welcome that explains and offers the next step", async () => {
  const view = new TreeView(page);
  await view.open();
  await shots.take(page, "welcome-opened");
  const welcome = page.locator(".part.sidebar .welcome-view-content");
  await welcome.filter({ hasText: "Turnback keeps the history of this workspace" }).first().waitFor({ timeout: 60_000 });
  await page.locator(".part.sidebar .monaco-button", { hasText: "Import Agent Sessions Found Here" }).first().waitFor({ timeout: 30_000 });
  await page.locator(".part.sidebar", { hasText: "Found here: 1 aider session." }).first().waitFor({ timeout: 30_000 });
  await shots.take(page, "welcome");
  assert.ok(!existsSync(join(workspace, ".turnback")), "looking must not create a store");
  await page.locator(".part.sidebar .monaco-button", { hasText: "Start Recording This Workspace" }).first().click();
  await toastText(page, /^Turnback records this workspace/);
  assert.ok(existsSync(join(workspace, ".turnback", "config.json")));
  await view.row("fresh", 30_000);
  await view.row(/^Recording started/, 30_000);
  await shots.take(page, "welcome-recording");
});
