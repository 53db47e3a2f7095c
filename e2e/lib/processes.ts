// Child processes in their own process groups, so stopping one stops
// everything it spawned (code-server forks an extension host, which starts
// the Turnback language server). Every group started here is remembered and
// killed when this process exits, whatever the reason.

import { type ChildProcess, spawn, type SpawnOptions } from "node:child_process";
import { createWriteStream } from "node:fs";
import { createServer } from "node:net";

const groups = new Map<number, Group>();

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone: nothing to stop.
  }
}

const exitHooks: (() => void)[] = [];

/** Runs `hook` (synchronous) when this process exits, however it exits short of SIGKILL. */
export function onExit(hook: () => void): void {
  exitHooks.push(hook);
}

// Last resort on any exit path; orderly stops happen in stopGroup.
process.on("exit", () => {
  for (const pid of groups.keys()) killGroup(pid, "SIGKILL");
  for (const hook of exitHooks) {
    try {
      hook();
    } catch {
      // Exiting anyway: one failed clean-up must not skip the others.
    }
  }
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    // Give every group the same short grace, then the exit hook SIGKILLs the rest.
    for (const pid of groups.keys()) killGroup(pid, "SIGTERM");
    setTimeout(() => process.exit(signal === "SIGINT" ? 130 : 143), 2000).unref();
    void Promise.all([...groups.values()].map((g) => g.exited)).then(() =>
      process.exit(signal === "SIGINT" ? 130 : 143),
    );
  });
}

export interface Group {
  child: ChildProcess;
  pid: number;
  exited: Promise<number | null>;
}

/** Spawns `command` as the leader of a new process group, output to `logPath`. */
export function spawnGroup(
  command: string,
  args: readonly string[],
  options: SpawnOptions & { logPath: string },
): Group {
  const log = createWriteStream(options.logPath, { flags: "a" });
  const child = spawn(command, args, {
    ...options,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${command}: no process id`);
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => {
      resolve(code);
    });
  });
  const group = { child, pid, exited };
  groups.set(pid, group);
  return group;
}

/** SIGTERM to the whole group, SIGKILL after `graceMs` if the leader is still there. */
export async function stopGroup(group: Group, graceMs = 5000): Promise<void> {
  if (!groups.has(group.pid)) return;
  killGroup(group.pid, "SIGTERM");
  const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), graceMs));
  const outcome = await Promise.race([group.exited.then(() => "exited" as const), timer]);
  // Children of the leader may outlive it: the group gets SIGKILL either way.
  killGroup(group.pid, "SIGKILL");
  groups.delete(group.pid);
  if (outcome === "timeout") await group.exited;
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        reject(new Error("no port from a listening socket"));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/** Runs a command to completion; rejects with its output when it fails. */
export async function run(
  command: string,
  args: readonly string[],
  options: SpawnOptions = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${command} ${args.join(" ")} exited ${code}: ${err || out}`));
    });
  });
}
