// The demo's server: installs the extension into a fresh code-server profile,
// serves the given folder on 127.0.0.1 and prints the URL; runs until
// interrupted, then stops code-server and everything under it.
//
// Usage: node e2e/serve.ts --folder DIR --run-dir DIR [--vsix FILE] [--port N]
//        [--setting KEY=JSON]...

import { parseArgs } from "node:util";
import { installExtension, startCodeServer } from "./lib/codeServer.ts";
import { extensionSettings } from "./lib/turnback.ts";

const { values } = parseArgs({
  options: {
    folder: { type: "string" },
    "run-dir": { type: "string" },
    vsix: { type: "string" },
    port: { type: "string" },
  },
});
const folder = values.folder;
const runDir = values["run-dir"];
if (folder === undefined || runDir === undefined) {
  console.error("serve: --folder DIR and --run-dir DIR are required");
  process.exit(2);
}
const port = values.port === undefined ? undefined : Number(values.port);
if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) {
  console.error(`serve: --port must be a TCP port number, not ${values.port}`);
  process.exit(2);
}

if (values.vsix !== undefined) await installExtension(runDir, values.vsix);
const server = await startCodeServer({
  runDir,
  folder,
  settings: extensionSettings(),
  ...(port === undefined ? {} : { port }),
});
console.log(`\nTurnback demo: open ${server.folderUrl}\n(code-server log: ${server.logPath}; Ctrl-C stops it)\n`);

// processes.ts stops the process group on SIGINT/SIGTERM; until then, idle.
await new Promise<never>(() => setInterval(() => undefined, 1 << 30));
