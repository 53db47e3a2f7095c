// Line attribution in a real VS Code: the current line's origin at its end, and how long
// it takes to appear after the cursor moves — in the demo's small file and in a file of
// 5,000 lines with many versions, made before the editor starts (as bench/probes/sessions/blame.py makes
// it, fewer turns). The latency is measured in the page, from the key's own event to the
// first frame after the annotation of the cursor's new line is in the DOM; it is printed
// (and written to artifacts/e2e/attribution-latency.json), never asserted: figures
// belong to bench/RESULTS.md.

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, openWorkbench, Shots } from "../lib/browser.ts";
import { type CodeServer, installExtension, REPO_ROOT, startCodeServer } from "../lib/codeServer.ts";
import { onExit, run } from "../lib/processes.ts";
import { extensionSettings, makeDemoWorkspace, PYTHON } from "../lib/turnback.ts";
import { goToLine, openFile, TreeView } from "../lib/workbench.ts";

const vsix = process.env["TURNBACK_VSIX"];
const runDir = mkdtempSync(join(tmpdir(), "turnback-e2e-blame-"));
onExit(() => rmSync(runDir, { recursive: true, force: true }));
const artifacts = process.env["ARTIFACTS_DIR"] ?? join(REPO_ROOT, "artifacts");
const shots = new Shots(join(artifacts, "e2e", "attribution"));
const BIG_TURNS = Number(process.env["E2E_BLAME_TURNS"] ?? "500");

let workspace: string;
let server: CodeServer | undefined;
let browser: Browser | undefined;
let page: Page;
const figures: Record<string, unknown> = {};

// An agent's turns on big.py, a checkpoint at the start and the end of each, a person's
// edit between them: bench/probes/sessions/blame.py's history, through the store's Python API.
const BIG_HISTORY = `
import random, sys
from pathlib import Path
from turnback import Store
from turnback.events import Kind
ws, turns = Path(sys.argv[1]), int(sys.argv[2])
rng = random.Random(22)
f = ws / "big.py"
lines = [f"line {i} = compute({i}, {rng.random():.12f})\\n" for i in range(5000)]
def edit(tag):
    lines[rng.randrange(len(lines))] = f"{tag} {rng.random():.12f}\\n"
    f.write_text("".join(lines))
f.write_text("".join(lines))
with Store.open(ws) as s:
    s.checkpoint(label="big.py as it was")
    sid = s.start_session(title="Many small changes", agent="claude-code", model="bench").id
    for k in range(turns):
        edit(f"person {k}")
        s.append(sid, Kind.PROMPT, {"text": f"change {k}"})
        s.checkpoint(session_id=sid, dirty=["big.py"])
        s.append(sid, Kind.TOOL_CALL, {"name": "Edit"})
        edit(f"agent {k}")
        s.checkpoint(session_id=sid, dirty=["big.py"])
`;

before(async () => {
  if (vsix === undefined || !existsSync(vsix)) {
    throw new Error(`TURNBACK_VSIX must name the built extension (got ${String(vsix)}); run scripts/test-e2e.sh`);
  }
  workspace = join(runDir, "greeter");
  await makeDemoWorkspace(workspace, join(runDir, "expected"));
  await run(PYTHON, ["-c", BIG_HISTORY, workspace, String(BIG_TURNS)], {});
  await installExtension(runDir, vsix);
  server = await startCodeServer({ runDir, folder: workspace, settings: extensionSettings() });
  browser = await launchBrowser();
  page = await openWorkbench(browser, server.folderUrl);
  // the server running and the folder's store open: its sessions listed in the Turnback view
  const view = new TreeView(page);
  await view.open();
  await view.row("Add a farewell command", 60_000);
});

after(async () => {
  writeFileSync(join(artifacts, "e2e", "attribution-latency.json"), JSON.stringify(figures, null, 2) + "\n");
  await browser?.close();
  await server?.stop();
  rmSync(runDir, { recursive: true, force: true });
});

/**
 * Installed in the page: `__tbNext()` resolves with the annotation text of the cursor's
 * line, and the time of the first frame after it appeared, once the DOM shows one
 * that differs from `previous` on the line the cursor is on now. The key's event time is
 * kept in `__tbKey` (the same clock as performance.now()).
 */
async function installProbe(): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as Record<string, unknown>;
    const annotationOfCursorLine = (): string | undefined => {
      const editor = document.querySelector(".editor-group-container.active .monaco-editor");
      const cursor = editor?.querySelector<HTMLElement>(".cursors-layer .cursor");
      if (editor === null || editor === undefined || cursor === null || cursor === undefined) return undefined;
      for (const line of Array.from(editor.querySelectorAll<HTMLElement>(".view-lines .view-line"))) {
        if (line.style.top !== cursor.style.top) continue;
        for (const span of Array.from(line.querySelectorAll("span"))) {
          const content = getComputedStyle(span, "::after").content;
          if (content !== "" && content !== "none" && content !== '""') return content;
        }
      }
      return undefined;
    };
    w["__tbAnnotation"] = annotationOfCursorLine;
    const cursorLine = (): string =>
      document.querySelector(".editor-group-container.active .monaco-editor .active-line-number")?.textContent ?? "";
    w["__tbLine"] = cursorLine;
    w["__tbNext"] = (previousLine: string) =>
      new Promise<{ text: string; found: number; frame: number; moved: number }>((resolve, reject) => {
        const editor = document.querySelector(".editor-group-container.active .monaco-editor");
        let moved = NaN; // when the DOM first showed the cursor on another line
        const done = (text: string, found: number): void => {
          observer.disconnect();
          clearTimeout(timer);
          requestAnimationFrame(() => resolve({ text, found, frame: performance.now(), moved }));
        };
        const check = (): void => {
          const now = performance.now();
          if (cursorLine() === previousLine) return;
          if (Number.isNaN(moved)) moved = now;
          const text = annotationOfCursorLine();
          if (text !== undefined) done(text, now);
        };
        const observer = new MutationObserver(check);
        const timer = setTimeout(() => {
          observer.disconnect();
          reject(new Error(`no annotation on the cursor's line ${cursorLine()} (it was on line ${previousLine})`));
        }, 20_000);
        for (const part of [".view-lines", ".cursors-layer", ".margin-view-overlays"]) {
          const el = editor?.querySelector(part);
          if (el !== null && el !== undefined) observer.observe(el, { subtree: true, childList: true, attributes: true, characterData: true });
        }
        check();
      });
    for (const kind of ["keydown", "mousedown"]) {
      window.addEventListener(kind, (e) => {
        w["__tbKey"] = e.timeStamp;
      }, { capture: true });
    }
  });
}

interface Moved {
  text: string; // the annotation of the cursor's new line
  fromKey: number; // ms from the key's (or the click's) event to the first frame showing the annotation
  fromCursor: number; // ms from the DOM showing the cursor moved to the DOM showing the annotation
}

/** Moves the cursor with `key`. */
async function move(key: string): Promise<Moved> {
  return moveBy(() => page.keyboard.press(key));
}

async function moveBy(action: () => Promise<void>): Promise<Moved> {
  const line = await page.evaluate(() => (window as unknown as { __tbLine: () => string }).__tbLine());
  type Next = { text: string; found: number; frame: number; moved: number };
  const next = page.evaluate((l) => (window as unknown as { __tbNext: (l: string) => Promise<Next> }).__tbNext(l), line);
  await action();
  const got = await next;
  const key = await page.evaluate(() => (window as unknown as { __tbKey: number }).__tbKey);
  return { text: got.text, fromKey: got.frame - key, fromCursor: got.found - got.moved };
}

function summary(ms: number[]): Record<string, number> {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { n: s.length, median: at(0.5), p90: at(0.9), max: s[s.length - 1] ?? NaN };
}

test("the current line's origin shows at its end: the turn's agent and prompt", async () => {
  await openFile(page, "greeter/greet.py");
  await installProbe();
  // greet.py as the branch left it: line 1 was there at the first checkpoint, line 8 is
  // from the first turn (kept through the rewind), line 9 from the branch's turn.
  await page.keyboard.press("Control+Home");
  await page.waitForFunction(
    () => (window as unknown as { __tbAnnotation: () => string | undefined }).__tbAnnotation() !== undefined,
    undefined,
    { timeout: 60_000 },
  );
  const first = await page.evaluate(() => (window as unknown as { __tbAnnotation: () => string }).__tbAnnotation());
  assert.match(first, /Before the first checkpoint/);
  await goToLine(page, 7);
  const eighth = (await move("ArrowDown")).text;
  assert.match(eighth, /Claude Code · “Add a farewell\(name\) next to greet\(\)/);
  const ninth = (await move("ArrowDown")).text;
  assert.match(ninth, /Claude Code · “Actually, make the farewell shorter\.”/);
  await shots.take(page, "greet-annotation");
});

test("the annotation follows the cursor in a 5,000-line file with many versions (latency recorded)", async (t) => {
  await openFile(page, "big.py");
  await installProbe();
  await goToLine(page, 2500);
  // the first answer walks the file's whole history: waited for, not counted
  await page.waitForFunction(
    () => (window as unknown as { __tbAnnotation: () => string | undefined }).__tbAnnotation() !== undefined,
    undefined,
    { timeout: 120_000 },
  );
  const near: Moved[] = [];
  for (let i = 0; i < 30; i++) {
    near.push(await move(i % 10 === 9 ? "PageDown" : "ArrowDown"));
  }
  for (const m of near) {
    assert.match(m.text, /Claude Code · “change \d+”|Changed between turns|Before the first checkpoint/);
  }
  const small: Moved[] = [];
  await openFile(page, "greeter/greet.py");
  await page.keyboard.press("Control+Home");
  for (let i = 0; i < 8; i++) {
    small.push(await move("ArrowDown"));
  }
  const report = (ms: Moved[]): Record<string, unknown> => ({
    fromKey: summary(ms.map((m) => m.fromKey)),
    fromCursor: summary(ms.map((m) => m.fromCursor)),
    all: ms.map((m) => [Math.round(m.fromKey * 10) / 10, Math.round(m.fromCursor * 10) / 10]),
  });
  figures["big.py"] = { turns: BIG_TURNS, checkpoints: 2 * BIG_TURNS + 1, ...report(near) };
  figures["greeter/greet.py"] = report(small);
  t.diagnostic(`annotation after a cursor move, ms: ${JSON.stringify(figures)}`);
  await shots.take(page, "big-annotation");
});
