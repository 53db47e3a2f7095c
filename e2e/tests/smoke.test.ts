// The editor itself loads in headless Chromium and shows a workspace's files:
// the ground every other end-to-end test stands on.

import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { explorerRow, launchBrowser, openWorkbench, Shots } from "../lib/browser.ts";
import { type CodeServer, REPO_ROOT, startCodeServer } from "../lib/codeServer.ts";
import { onExit } from "../lib/processes.ts";

const runDir = mkdtempSync(join(tmpdir(), "turnback-e2e-smoke-"));
onExit(() => rmSync(runDir, { recursive: true, force: true }));
const workspace = join(runDir, "workspace");
const shots = new Shots(join(process.env["ARTIFACTS_DIR"] ?? join(REPO_ROOT, "artifacts"), "smoke"));
let server: CodeServer | undefined;
let browser: Browser | undefined;
let page: Page;

before(async () => {
  mkdirSync(join(workspace, "src"), { recursive: true });
  writeFileSync(join(workspace, "README.md"), "# smoke\n");
  writeFileSync(join(workspace, "src", "app.py"), "print('hello')\n");
  server = await startCodeServer({ runDir, folder: workspace });
  browser = await launchBrowser();
  page = await openWorkbench(browser, server.folderUrl);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  rmSync(runDir, { recursive: true, force: true });
});

test("the editor loads and the explorer lists the workspace's files", async () => {
  await explorerRow(page, "README.md").waitFor();
  await explorerRow(page, "src").waitFor();
  const names = await page.locator(".explorer-folders-view .monaco-list-row .label-name").allInnerTexts();
  await shots.take(page, "explorer");
  assert.ok(names.includes("README.md"), `explorer rows: ${names.join(", ")}`);
  assert.ok(names.includes("src"), `explorer rows: ${names.join(", ")}`);
});
