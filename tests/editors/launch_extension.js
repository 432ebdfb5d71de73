// Loads editors/vscode/extension.js as VS Code would, with the `vscode` API and
// vscode-languageclient replaced by stand-ins, and starts the server exactly as
// vscode-languageclient 9 does for an Executable with TransportKind.stdio: the command,
// its args, then "--stdio" appended.  It then speaks LSP to that process (initialize,
// initialized, shutdown, exit) and prints one JSON line: the argv and what the server said.
// usage: node launch_extension.js EXTENSION_JS FUMAROLE_COMMAND
"use strict";
const Module = require("module");
const { spawn } = require("child_process");

const [extensionPath, fumarole] = process.argv.slice(2);
const TransportKind = { stdio: 0, ipc: 1, pipe: 2, socket: 3 };

function frame(message) {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, "ascii"), body]);
}

class LanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    this.server = serverOptions.run;
    this.clientOptions = clientOptions;
  }
  start() {
    const argv = [...(this.server.args || [])];
    if (this.server.transport === TransportKind.stdio) argv.push("--stdio");
    const child = spawn(this.server.command, argv, { stdio: ["pipe", "pipe", "pipe"] });
    let out = Buffer.alloc(0), err = "";
    const replies = {};
    child.stderr.on("data", (d) => { err += d; });
    child.stdout.on("data", (d) => {
      out = Buffer.concat([out, d]);
      for (;;) {
        const end = out.indexOf("\r\n\r\n");
        if (end < 0) break;
        const length = Number(/Content-Length: (\d+)/i.exec(out.slice(0, end).toString())[1]);
        if (out.length < end + 4 + length) break;
        const message = JSON.parse(out.slice(end + 4, end + 4 + length).toString("utf8"));
        out = out.slice(end + 4 + length);
        if (message.id !== undefined) replies[message.id] = message;
        if (message.id === 1) {
          child.stdin.write(frame({ jsonrpc: "2.0", method: "initialized", params: {} }));
          child.stdin.write(frame({ jsonrpc: "2.0", id: 2, method: "shutdown", params: null }));
        } else if (message.id === 2) {
          child.stdin.write(frame({ jsonrpc: "2.0", method: "exit", params: null }));
        }
      }
    });
    return new Promise((resolve) => {
      child.on("exit", (code) => {
        console.log(JSON.stringify({ command: this.server.command, argv, code, stderr: err,
          selector: this.clientOptions.documentSelector, initialize: replies[1] || null,
          shutdown: replies[2] || null }));
        resolve();
      });
      child.stdin.write(frame({ jsonrpc: "2.0", id: 1, method: "initialize",
        params: { processId: process.pid, rootUri: null, capabilities: {} } }));
    });
  }
  stop() { return Promise.resolve(); }
}

const stand_ins = {
  vscode: {
    workspace: { getConfiguration: () => ({ get: (key) => (key === "path" ? fumarole : undefined) }) },
  },
  "vscode-languageclient/node": { LanguageClient, TransportKind },
};
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request in stand_ins ? request : resolve.call(this, request, ...rest);
};
for (const [name, exports] of Object.entries(stand_ins)) {
  require.cache[name] = { id: name, filename: name, loaded: true, exports };
}
const extension = require(extensionPath);
Promise.resolve(extension.activate({ subscriptions: [] })).then(() => extension.deactivate());
