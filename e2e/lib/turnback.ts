// Turnback outside the editor: the CLI the suite checks the disk with, the
// demo workspace builder, and the settings the extension runs under here.

import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { REPO_ROOT } from "./codeServer.ts";
import { run } from "./processes.ts";

export const PYTHON = process.env["TURNBACK_PYTHON"] ?? join(REPO_ROOT, ".venv", "bin", "python");
export const CLI = process.env["TURNBACK_CLI"] ?? join(REPO_ROOT, ".venv", "bin", "turnback");

/**
 * Settings for the extension. By default none: its server runs on `python3`
 * with the dependencies the .vsix carries, as for a user. TURNBACK_E2E_PYTHON
 * picks another interpreter.
 */
export function extensionSettings(): Record<string, unknown> {
  const python = process.env["TURNBACK_E2E_PYTHON"];
  return python === undefined ? {} : { "turnback.python": python };
}

export interface DemoSummary {
  workspace: string;
  sessions: { main: string; readme: string };
  checkpoints: Record<string, string>;
  checkpointEvents: Record<string, string>;
}

/**
 * Builds the demo workspace in `dir` with scripts/make-demo-workspace.py; the
 * files of each checkpoint are also copied to `expectDir/<checkpoint id>/`.
 */
export async function makeDemoWorkspace(dir: string, expectDir: string): Promise<DemoSummary> {
  const script = join(REPO_ROOT, "scripts", "make-demo-workspace.py");
  const out = await run(PYTHON, [script, dir, "--json", "--expect-dir", expectDir], {
    env: { ...process.env, TURNBACK_CLI: CLI },
  });
  return JSON.parse(out) as DemoSummary;
}

/** `turnback --json ARGS` in the workspace, parsed. */
export async function cliJson<T>(workspace: string, ...args: string[]): Promise<T> {
  return JSON.parse(await run(CLI, ["--json", ...args], { cwd: workspace })) as T;
}

/** `turnback show CP PATH`: the file's bytes as the store holds them. */
export async function showBytes(workspace: string, checkpoint: string, path: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLI, ["show", checkpoint, path], { cwd: workspace });
    const chunks: Buffer[] = [];
    let err = "";
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.once("error", reject);
    child.once("exit", (code) => {
      if (code === 0) resolve(Buffer.concat(chunks));
      else reject(new Error(`turnback show ${checkpoint} ${path} exited ${code}: ${err}`));
    });
  });
}

/** Every file of the workspace (minus the store) as relative path → bytes. */
export function readTree(workspace: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (dir === workspace && entry.name === ".turnback") continue;
        walk(full);
      } else {
        let bytes: Buffer;
        try {
          bytes = readFileSync(full);
        } catch (err) {
          // gone since the listing: a rewind's second name let go after its answer
          if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
          throw err;
        }
        files.set(relative(workspace, full).split(sep).join("/"), bytes);
      }
    }
  };
  walk(workspace);
  return files;
}

/**
 * The workspace's tree once it equals `expected`, or as it is at `timeoutMs`. A rewind or
 * undo answers before its second names (`.turnback-tmp-…`, which keep a replaced file for a
 * write that lands late) are let go after the answer, so a tree read at the answer's toast
 * can still hold them for a moment: wait for the condition, not a fixed time.
 */
export async function settledTree(
  workspace: string,
  expected: Map<string, Buffer>,
  timeoutMs = 10_000,
): Promise<Map<string, Buffer>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const tree = readTree(workspace);
    if (treeDiff(expected, tree).length === 0 || Date.now() >= deadline) return tree;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Differences between two trees, one line each; empty when they are byte-equal. */
export function treeDiff(expected: Map<string, Buffer>, actual: Map<string, Buffer>): string[] {
  const problems: string[] = [];
  for (const [path, bytes] of expected) {
    const got = actual.get(path);
    if (got === undefined) problems.push(`${path}: missing`);
    else if (!got.equals(bytes)) problems.push(`${path}: ${got.length} bytes differ from ${bytes.length} expected`);
  }
  for (const path of actual.keys()) if (!expected.has(path)) problems.push(`${path}: not expected`);
  return problems;
}
