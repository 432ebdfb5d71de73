// Starts `fumarole lsp` for .policy files and bundle.yaml manifests.
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("fumarole");
  const command = config.get("path") || "fumarole";
  const server = { command, args: ["lsp"], transport: TransportKind.stdio };
  client = new LanguageClient("fumarole", "fumarole", { run: server, debug: server }, {
    documentSelector: [
      { scheme: "file", language: "fumarole-policy" },
      { scheme: "file", pattern: "**/bundle.yaml" },
    ],
    synchronize: { configurationSection: "fumarole" },
  });
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
