// Turnback in a real VS Code: the freshly built .vsix installed into
// code-server, a demo workspace made by the CLI, everything done through the
// UI a person uses (activity bar, tree, inline actions, dialogs, notifications,
// command palette), and every result checked on disk, byte for byte.
//
// The tests run in order and share one editor: later ones start from the
// state earlier ones leave, as a person's session would.

import assert from "node:assert/strict";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, openWorkbench, runCommand, Shots } from "../lib/browser.ts";
import { type CodeServer, installExtension, REPO_ROOT, startCodeServer } from "../lib/codeServer.ts";
import { onExit, run } from "../lib/processes.ts";
import {
  CLI,
  cliJson,
  type DemoSummary,
  extensionSettings,
  makeDemoWorkspace,
  PYTHON,
  readTree,
  settledTree,
  showBytes,
  treeDiff,
} from "../lib/turnback.ts";
import {
  answerDialog,
  clearNotifications,
  plain,
  clickToastButton,
  expectAttribute,
  inputBox,
  noProgressNotification,
  openFile,
  quickPick,
  notificationText,
  readDiff,
  toastText,
  TreeView,
} from "../lib/workbench.ts";

const vsix = process.env["TURNBACK_VSIX"];
const runDir = mkdtempSync(join(tmpdir(), "turnback-e2e-"));
onExit(() => rmSync(runDir, { recursive: true, force: true }));
const expectDir = join(runDir, "expected");
const artifacts = process.env["ARTIFACTS_DIR"] ?? join(REPO_ROOT, "artifacts");
const shots = new Shots(join(artifacts, "e2e"));

let demo: DemoSummary;
let workspace: string;
let server: CodeServer | undefined;
let browser: Browser | undefined;
let page: Page;
let view: TreeView;

/** A test that always leaves a screenshot of where it ended, passed or failed. */
function step(name: string, slug: string, body: () => Promise<void>): void {
  test(name, async () => {
    try {
      await body();
    } finally {
      if (browser !== undefined) await shots.take(page, slug).catch(() => undefined);
    }
  });
}

function cp(label: string): string {
  const id = demo.checkpoints[label];
  if (id === undefined) throw new Error(`the demo has no checkpoint labelled ${label}`);
  return id;
}

/** The files the demo had at a checkpoint, copied aside when it was taken. */
function expectedTree(checkpointId: string): Map<string, Buffer> {
  return readTree(join(expectDir, checkpointId));
}

/** The workspace equals the checkpoint: per the independent copy and per `turnback show`. */
async function assertWorkspaceIs(checkpointId: string): Promise<void> {
  const expected = expectedTree(checkpointId);
  const onDisk = await settledTree(workspace, expected);
  assert.deepEqual(treeDiff(expected, onDisk), [], "workspace vs the files copied at the checkpoint");
  for (const [path, bytes] of onDisk) {
    const stored = await showBytes(workspace, checkpointId, path);
    assert.ok(stored.equals(bytes), `${path}: turnback show ${checkpointId} gives different bytes`);
  }
}

before(async () => {
  if (vsix === undefined || !existsSync(vsix)) {
    throw new Error(`TURNBACK_VSIX must name the built extension (got ${String(vsix)}); run scripts/test-e2e.sh`);
  }
  // Named after the project, so the folder row differs from every session title.
  workspace = join(runDir, "greeter");
  demo = await makeDemoWorkspace(workspace, expectDir);
  await installExtension(runDir, vsix);
  server = await startCodeServer({ runDir, folder: workspace, settings: extensionSettings() });
  browser = await launchBrowser();
  page = await openWorkbench(browser, server.folderUrl);
  view = new TreeView(page);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  if (server !== undefined) {
    // Keep the logs of a run (code-server's, the extension host's, the
    // Turnback output channel) next to its screenshots.
    writeFileSync(join(artifacts, "e2e", "code-server.log"), readFileSync(server.logPath));
    cpSync(join(runDir, "user-data", "logs"), join(artifacts, "e2e", "logs"), { recursive: true });
  }
  rmSync(runDir, { recursive: true, force: true });
});

const FIRST_TURN = /^Add a farewell\(name\) next to greet\(\)/;

step("a session's children are its turns, with tools, changes and steps", "turns", async () => {
  await view.open();
  await view.row("Add a farewell command", 60_000);
  await view.expand("Add a farewell command");
  const first = await view.row(FIRST_TURN);
  // time · duration · 6 tools (1 ✗) · +N −M in 3 files
  const described = plain(await first.innerText());
  assert.match(described, /6 tools \(1 ✗\)/);
  assert.match(described, /in 3 files/);
  // cut to the row's 44 characters, so that the time after it stays in sight
  await view.row(/^Make the logo brighter and drop the scratch…$/);
  await view.row("Actually, make the farewell shorter.");
  await view.expand(FIRST_TURN);
  // cut after a whole word within 44 characters (it was cut inside one: "test_farewel…")
  await view.row(/^Bash\(pytest -q\) ✗ FAILED…$/);
  await view.row(/^Bash\(pytest -q\) ✓ 2 passed/);
  await view.row("test_farewell.py");
  await view.row(/thinking and usage steps? hidden/);
});

step("Compare This Turn shows every file the turn changed in one diff editor", "turn-compare", async () => {
  // a turn row has one inline action (Rewind to Before This Turn): two hid a selected
  // row's time; Compare This Turn is in its context menu
  await view.contextAction(FIRST_TURN, "Compare This Turn");
  const tab = page.locator(".editor-group-container.active .tab.active", { hasText: /before “Add a farewell/ });
  await tab.first().waitFor({ timeout: 30_000 });
  // Both ends fit a tab: the prompt is cut short, so "after “…”" is not pushed out of sight.
  const title = plain(await tab.first().innerText());
  assert.match(title, /before “Add a farewell.*” ↔ after “Add a farewell/);
  assert.ok(title.length <= 130, `the tab's title is ${title.length} characters: ${title}`);
  // The multi-file diff editor lists the turn's three files.
  for (const name of ["greet.py", "cli.py", "test_farewell.py"]) {
    await page.locator(".editor-group-container.active", { hasText: name }).first().waitFor();
  }
});

let beforeTurnRewind: Map<string, Buffer>;

step("Rewind to Before This Turn lists the files, puts them back, and Undo restores", "turn-rewind", async () => {
  await page.keyboard.press("Control+K");
  await page.keyboard.press("W");
  await clearNotifications(page);
  beforeTurnRewind = readTree(workspace);
  await view.inlineAction(FIRST_TURN, "Rewind to Before This Turn");
  await quickPick(page, "Files");
  const question = await answerDialog(page, "Rewind");
  assert.match(question, /Rewind to before “Add a farewell/);
  assert.match(question, /Overwrite \d+ files?:[\s\S]*greeter\/greet\.py/);
  await toastText(page, /^Rewound to before “Add a farewell/);
  await assertWorkspaceIs(cp("Before the agent"));
  await shots.take(page, "turn-rewound");
  await clickToastButton(page, /^Rewound to before “Add a farewell/, "Undo Rewind");
  await notificationText(page, /^Undid the last rewind/);
  assert.deepEqual(treeDiff(beforeTurnRewind, await settledTree(workspace, beforeTurnRewind)), []);
  await view.collapse(FIRST_TURN);
  // Collapsed, so that the File History rows below are the only ones with these labels.
  await view.collapse("Add a farewell command");
});

step("File History follows a file: versions by turn, a diff, Restore This Version and Undo", "file-history", async () => {
  await clearNotifications(page);
  await openFile(page, "greeter/greet.py");
  await runCommand(page, "Turnback: Show File History");
  const version = await view.row(FIRST_TURN, 30_000);
  assert.match(plain(await version.innerText()), /claude-code/);
  await view.row("Actually, make the farewell shorter.");
  await version.click();
  const diff = await readDiff(page, /greet\.py/, (d) => d.modified.includes("farewell"));
  assert.doesNotMatch(diff.original, /farewell/);
  await shots.take(page, "file-history-diff");
  const beforeRestore = readFileSync(join(workspace, "greeter", "greet.py"));
  await view.inlineAction(FIRST_TURN, "Restore This Version");
  const question = await answerDialog(page, "Restore");
  assert.match(question, /greeter\/greet\.py/);
  await toastText(page, /^Restored greeter\/greet\.py/);
  const restored = readFileSync(join(workspace, "greeter", "greet.py"));
  assert.ok(restored.equals(await showBytes(workspace, cp("farewell() added"), "greeter/greet.py")));
  await shots.take(page, "file-history-restored");
  await clickToastButton(page, /^Restored greeter\/greet\.py/, "Undo Rewind");
  await notificationText(page, /^Undid the last rewind/);
  assert.ok(readFileSync(join(workspace, "greeter", "greet.py")).equals(beforeRestore));
  // the versions saved before the rewinds and undos so far come after the file's own, in
  // one row, each one expand away (they were most of the list)
  await view.childOf("Saved before rewinds and undos", /^before (undo of )?rewind to /);
  await shots.take(page, "file-history-saved");
  await view.collapse("Saved before rewinds and undos");
  await page.keyboard.press("Control+K");
  await page.keyboard.press("W");
});

step("the events of a session are still one command away", "events-mode", async () => {
  await view.collapse("Add a farewell command");
  await runCommand(page, "Turnback: Show Sessions as Events");
});

step("the Turnback view shows the sessions, their events and checkpoints", "view", async () => {
  await view.open();
  await view.row("Add a farewell command", 60_000);
  await view.row("Tidy the README");
  await view.expand("Add a farewell command");
  await view.row(/^Prompt: Add a farewell\(name\) next to…$/); // cut at a word within 44 characters
  await view.row(/^Tool: Read\(greeter\/greet\.py\)/);
  await view.row("Before the agent");
  await view.row("farewell() added");
  await view.row("Tests pass");
  await view.row("Brighter logo");
  await view.row("Shorter farewell (branch)");
  await view.row("Prompt: Actually, make the farewell shorter.");
  // The branch's rewind names the checkpoint, not its id; the safety checkpoint it took
  // first is inside its row (one user action, one row; it was a row of its own above it).
  await view.row("Rewind to “farewell() added” (files)");
  await view.childOf("Rewind to “farewell() added” (files)", "before rewind to “farewell() added”");
  await view.collapse("Rewind to “farewell() added” (files)");
  // the undos of the steps above: the undo's row says what it undid (it said "Undo
  // (files)"), its safety checkpoint inside, said once, naming the rewind undone, not
  // "before undo to “before rewind to …”" nor a bare "before undo"
  const undo = await view.row(/^Undo of rewind to “[^“”]+”/);
  // going back to just before the undo is one click on the undo's own row
  await undo.hover();
  await undo.locator('.actions .action-label[aria-label="Rewind to the State Before This"]').waitFor({ timeout: 10_000 });
  await view.childOf(/^Undo of rewind to “[^“”]+”/, /^before undo of rewind to “[^“”]+”$/);
  await view.collapse(/^Undo of rewind to “[^“”]+”/);
});

step("a checkpoint's changed file opens in a diff with both sides' text", "diff-text", async () => {
  const row = await view.childOf("Tests pass", "cli.py");
  await row.click();
  const diff = await readDiff(page, /cli\.py/, (d) => d.original.trim() !== "" && d.modified.trim() !== "");
  assert.match(diff.title, /cli\.py/);
  assert.match(diff.original, /from greeter\.greet import greet$/m);
  assert.doesNotMatch(diff.original, /farewell/);
  assert.match(diff.modified, /from greeter\.greet import farewell, greet$/m);
  assert.match(diff.modified, /say = farewell if sys\.argv\[1:2\] == \["bye"\] else greet/);
  await view.collapse("Tests pass");
});

step("a binary file's diff says so on both sides, with each side's size", "diff-binary", async () => {
  const before = expectedTree(cp("Tests pass")).get("assets/logo.png");
  const after = expectedTree(cp("Brighter logo")).get("assets/logo.png");
  assert.ok(before !== undefined && after !== undefined && before.length < 1024 && after.length < 1024);
  await (await view.childOf("Brighter logo", "logo.png")).click();
  const diff = await readDiff(page, /logo\.png/, (d) => d.original.includes("binary") && d.modified.includes("binary"));
  assert.match(diff.title, /logo\.png/);
  assert.ok(diff.original.includes(`assets/logo.png is a binary file (${before.length} B)`), diff.original);
  assert.ok(diff.modified.includes(`assets/logo.png is a binary file (${after.length} B)`), diff.modified);
  // in short lines: a side of the diff does not wrap, and a long line ran out of sight
  assert.match(diff.original, /^puts it back byte for byte\.$/m);
  await view.collapse("Brighter logo");
});

let beforeRewind: Map<string, Buffer>;

step("rewind from the tree's inline action, confirmed, puts the checkpoint's files back byte for byte", "rewind", async () => {
  await page.keyboard.press("Control+K");
  await page.keyboard.press("W"); // close editors, so the rewind has no open documents to settle
  await clearNotifications(page);
  beforeRewind = readTree(workspace);
  await view.inlineAction("Tests pass", "Rewind to Here");
  await quickPick(page, "Files");
  const question = await answerDialog(page, "Rewind");
  assert.match(question, /Rewind to “Tests pass”/);
  assert.match(question, /tests\/test_farewell\.py/); // the dry run lists what it will create
  const done = await toastText(page, /^Rewound to “Tests pass”/);
  assert.match(done, /overwritten/);
  await assertWorkspaceIs(cp("Tests pass"));
});

step("Undo Rewind in the notification brings the state before the rewind back", "undo", async () => {
  assert.ok(beforeRewind !== undefined, "needs the rewind step");
  await clickToastButton(page, /^Rewound to “Tests pass”/, "Undo Rewind");
  await notificationText(page, /^Undid the last rewind/);
  assert.deepEqual(treeDiff(beforeRewind, await settledTree(workspace, beforeRewind)), []);
});

step("Create Checkpoint from the command palette records the workspace as it is", "palette-checkpoint", async () => {
  await clearNotifications(page);
  writeFileSync(join(workspace, "greeter", "palette.txt"), "made before the palette checkpoint\n");
  await runCommand(page, "Turnback: Create Checkpoint");
  await inputBox(page, "From the palette");
  await toastText(page, /^Checkpoint “From the palette” created/);
  const { checkpoints } = await cliJson<{ checkpoints: { id: string; label: string }[] }>(workspace, "checkpoints");
  const made = checkpoints.find((c) => c.label === "From the palette");
  assert.ok(made !== undefined, `checkpoints: ${checkpoints.map((c) => c.label).join(", ")}`);
  const stored = await showBytes(workspace, made.id, "greeter/palette.txt");
  assert.equal(stored.toString(), "made before the palette checkpoint\n");
  // A checkpoint taken outside any agent session goes to the folder's own session,
  // which the extension expands to show the new checkpoint selected (a click of ours
  // on its twistie would race that, and could collapse it again).
  const shown = await view.row("From the palette");
  await expectAttribute(shown, "aria-selected", "true");
  // The status bar says what it counts and how old the newest is.
  await page.locator(".statusbar-item", { hasText: /\d+ checkpoints · just now/ }).first().waitFor({ timeout: 20_000 });
});

step("an event appended with the CLI from outside shows up in the tree by itself", "cli-append", async () => {
  await view.expand("Add a farewell command");
  // short enough for a row's label (cut at 44 characters), unique to this run
  const text = `Appended from outside at ${Date.now().toString(36)}`;
  await run(CLI, ["record", "prompt", "--session", demo.sessions.main, "--text", text], { cwd: workspace });
  await view.row(`Prompt: ${text}`, 20_000);
});

step("rewinding to a checkpoint whose stored content is gone fails readably and changes nothing", "rewind-error", async () => {
  await clearNotifications(page);
  // Large enough (over the store's 512 KB pack threshold) to be kept as a
  // loose object file of its own, which is then deleted.
  const doomed = join(workspace, "doomed.txt");
  const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i} only this checkpoint has, run ${runDir}`);
  writeFileSync(doomed, `${lines.join("\n")}\n`);
  const made = await cliJson<{ id: string }>(workspace, "checkpoint", "-m", "Doomed", "--session", demo.sessions.main);
  const blob = (
    await run(PYTHON, [
      "-c",
      "import sys; from turnback.objects.objectstore import hash_bytes; print(hash_bytes(b'blob', open(sys.argv[1], 'rb').read()))",
      doomed,
    ])
  ).trim();
  const object = join(workspace, ".turnback", "objects", blob.slice(0, 2), blob.slice(2));
  assert.ok(existsSync(object), `doomed.txt's content is not a loose object at ${object}`);
  unlinkSync(object);
  writeFileSync(doomed, "changed after the checkpoint\n");
  writeFileSync(join(workspace, "README.md"), "# greeter\n\nchanged after the checkpoint\n");
  const untouched = readTree(workspace);

  await view.inlineAction("Doomed", "Rewind to Here");
  await quickPick(page, "Files");
  await answerDialog(page, "Rewind");
  const error = await toastText(page, /^Rewind failed/);
  assert.match(error, /doomed\.txt/);
  assert.match(error, /missing/);
  assert.match(error, /Nothing was changed/);
  assert.doesNotMatch(error, /cannot rewind/i, "the error says the action's word twice");
  // no progress notification stays beside the error (a quick rewind shows none at all)
  await noProgressNotification(page);
  assert.doesNotMatch(error, /param '/, "the error blames a parameter the user never gave");
  assert.deepEqual(treeDiff(untouched, readTree(workspace)), [], "the workspace after the failed rewind");
  assert.ok(made.id.length > 0);
});
