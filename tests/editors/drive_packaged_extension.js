// Runs the extension exactly as packaged: dist/extension.js taken out of the .vsix, which
// carries the real vscode-languageclient bundled in.  Only the `vscode` module (the editor
// itself) is a stand-in: a proxy that answers what the client reads of it (its version,
// the application's name, the `fumarole.path` setting) and accepts every registration.
// The client then starts the server as it would in VS Code: it spawns the command, sends
// its real initialize request and waits for the answer; deactivate sends shutdown and exit.
// It prints one JSON line: the spawned argv, whether start() resolved, the messages the
// client showed the user, and the server's answers as read from its stdout.
// usage: node drive_packaged_extension.js EXTENSION_JS FUMAROLE_COMMAND
"use strict";
const Module = require("module");
const childProcess = require("child_process");

const [extensionPath, fumarole] = process.argv.slice(2);
const report = { argv: null, started: false, error: null, messages: [], replies: [], code: null,
  stderr: "" };
const answers = { version: "1.82.0", appName: "Visual Studio Code", language: "en",
  workspaceFolders: undefined, then: undefined };

function editor(name) {
  return new Proxy(function () {}, {
    get(_, property) {
      if (property in answers) return answers[property];
      if (property === "get") return (key) => (key === "path" ? fumarole : undefined);
      if (/^show\w*Message$/.test(String(property))) {
        return (message) => { report.messages.push(message); return Promise.resolve(undefined); };
      }
      if (property === Symbol.toPrimitive) return () => name;
      return editor(`${name}.${String(property)}`);
    },
    apply() { return editor(`${name}()`); },
    construct() { return editor(`new ${name}`); },
  });
}

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === "vscode" ? request : resolve.call(this, request, ...rest);
};
require.cache.vscode = { id: "vscode", filename: "vscode", loaded: true, exports: editor("vscode") };

const spawn = childProcess.spawn;
childProcess.spawn = function (command, args, options) {
  report.argv = args;
  const child = spawn(command, args, options);
  let out = Buffer.alloc(0);
  child.stdout.on("data", (data) => {
    out = Buffer.concat([out, data]);
    for (;;) {
      const end = out.indexOf("\r\n\r\n");
      if (end < 0) break;
      const length = Number(/Content-Length: (\d+)/i.exec(out.slice(0, end).toString())[1]);
      if (out.length < end + 4 + length) break;
      report.replies.push(JSON.parse(out.slice(end + 4, end + 4 + length).toString("utf8")));
      out = out.slice(end + 4 + length);
    }
  });
  child.stderr.on("data", (data) => { report.stderr += data; });
  child.on("exit", (code) => { report.code = code; });
  return child;
};

// A client that fails to start also rejects promises nobody awaits; they are part of the report.
process.on("unhandledRejection", (error) => { report.error = report.error || String(error && error.message || error); });
const extension = require(extensionPath);
Promise.resolve(extension.activate({ subscriptions: [] }))
  .then(() => { report.started = true; return extension.deactivate(); })
  .catch((error) => { report.error = String(error && error.message || error); })
  .then(() => setTimeout(() => { console.log(JSON.stringify(report)); process.exit(0); }, 500));
