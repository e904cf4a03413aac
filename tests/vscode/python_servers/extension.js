// Test only: starts `ruff server` (diagnostics) and `jedi-language-server` (definitions,
// references, hover, symbols) for Python files through vscode-languageclient, as a Python
// extension would. The binaries come from $ACP_LSP_TEST_BIN (the test venv's bin); once both
// servers are initialized the extension writes $ACP_LSP_TEST_SERVERS_READY, which the test
// waits for.

const fs = require("node:fs");
const path = require("node:path");
const { LanguageClient } = require("vscode-languageclient/node");

const clients = [];

async function activate() {
  const bin = process.env.ACP_LSP_TEST_BIN || "";
  const servers = [
    ["ruff", path.join(bin, "ruff"), ["server"]],
    ["jedi", path.join(bin, "jedi-language-server"), []],
  ];
  for (const [name, command, args] of servers) {
    const client = new LanguageClient(
      name,
      name,
      { command, args },
      { documentSelector: [{ scheme: "file", language: "python" }] },
    );
    clients.push(client);
  }
  await Promise.all(clients.map((c) => c.start()));
  const ready = process.env.ACP_LSP_TEST_SERVERS_READY;
  if (ready) {
    fs.writeFileSync(ready, servers.map((s) => s[0]).join("\n"));
  }
}

async function deactivate() {
  await Promise.all(clients.map((c) => c.stop(2000).catch(() => undefined)));
}

module.exports = { activate, deactivate };
