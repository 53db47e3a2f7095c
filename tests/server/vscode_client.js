// The editor's own JSON-RPC client (vscode-jsonrpc) driving the server over stdio: its
// framing (no Content-Type, a Content-Length of UTF-8 bytes), its answers to the server's
// requests, $/cancelRequest, and `exit` without `shutdown`. Prints one JSON line of what
// happened; tests/server/test_vscode_client.py checks it.
"use strict";
const cp = require("child_process");
const rpc = require("vscode-jsonrpc/node");

const [cmd, ...args] = JSON.parse(process.argv[2]);
const ws = process.argv[3];
const child = cp.spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
const conn = rpc.createMessageConnection(
  new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
const seen = { configuration: 0, progressCreate: 0 };
conn.onRequest("workspace/configuration", (p) => { seen.configuration++; return p.items.map(() => ({})); });
conn.onRequest("window/workDoneProgress/create", () => { seen.progressCreate++; return null; });
conn.onNotification(() => {});
conn.listen();
const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));

async function main() {
  const uri = "file://" + ws;
  await conn.sendRequest("initialize", {
    processId: process.pid, rootUri: uri,
    workspaceFolders: [{ uri, name: "ws" }],
    capabilities: { workspace: { configuration: true, workspaceFolders: true },
                    window: { workDoneProgress: true } },
  });
  await conn.sendNotification("initialized", {});
  // non-ASCII text: Content-Length counts UTF-8 bytes, not characters
  const cp1 = await conn.sendRequest("turnback/createCheckpoint", { label: "é😀 first" });
  seen.checkpoint = typeof cp1 === "object" && cp1 !== null;
  // a request cancelled at once: answered (result or -32800), never left hanging
  const source = new rpc.CancellationTokenSource();
  const cancelled = conn.sendRequest("turnback/createCheckpoint", { label: "to cancel" }, source.token)
    .then(() => "answered", (e) => "error " + e.code);
  source.cancel();
  seen.cancelled = await cancelled;
  // many messages in one write: ten requests sent before any answer is read
  const many = [];
  for (let i = 0; i < 10; i++) many.push(conn.sendRequest("turnback/status", {}));
  seen.many = (await Promise.all(many)).length;
  conn.sendNotification("exit");  // without shutdown: LSP says exit code 1
  seen.exitCode = await Promise.race([exited, new Promise((r) => setTimeout(() => r("hung"), 20000))]);
  process.stdout.write(JSON.stringify(seen) + "\n");
  process.exit(0);
}
main().catch((e) => { process.stdout.write(JSON.stringify({ error: String(e), ...seen }) + "\n"); process.exit(1); });
