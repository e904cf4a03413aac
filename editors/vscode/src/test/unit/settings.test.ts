import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fromSnapshot } from "../../model/sessionModel";
import { statusText } from "../../model/statusText";
import { buildPrompt, describeContext } from "../../promptContext";
import {
  expandVariables,
  needsRestart,
  resolveServerCommand,
  serverConfiguration,
  type Settings,
} from "../../settings";

function settings(extra: Partial<Settings> = {}): Settings {
  return {
    serverCommand: "acp-lsp",
    serverCommandExplicit: false,
    serverArgs: [],
    serverEnv: {},
    agents: {},
    defaultAgent: "",
    followAlong: true,
    permissionRules: [],
    allowOutsideWorkspace: false,
    includeActiveFile: true,
    notifyWhenAway: true,
    ...extra,
  };
}

const expand = { workspaceFolder: "/ws", userHome: "/home/u", env: { TOKEN: "s3cret" } as Record<string, string | undefined> };

describe("server command", () => {
  test("acp-lsp on PATH by default", () => {
    assert.deepEqual(resolveServerCommand(settings(), expand), { command: "acp-lsp", args: [], env: {} });
  });

  test("ACP_LSP_PYTHON runs python -m acp_lsp unless a command was set", () => {
    const env = { ...expand, env: { ACP_LSP_PYTHON: "/venv/bin/python" } };
    assert.deepEqual(resolveServerCommand(settings({ serverArgs: ["-v"] }), env), {
      command: "/venv/bin/python",
      args: ["-m", "acp_lsp", "-v"],
      env: {},
    });
    const explicit = settings({ serverCommand: "${workspaceFolder}/.venv/bin/acp-lsp", serverCommandExplicit: true });
    assert.equal(resolveServerCommand(explicit, env).command, "/ws/.venv/bin/acp-lsp");
  });

  test("variables expand in the command, arguments and environment", () => {
    assert.equal(expandVariables("~/bin/acp-lsp", expand), "/home/u/bin/acp-lsp");
    assert.equal(expandVariables("${userHome}/x ${env:TOKEN} ${env:NOPE}", expand), "/home/u/x s3cret ");
    const cmd = resolveServerCommand(settings({ serverEnv: { KEY: "${env:TOKEN}" }, serverArgs: ["--log-file", "${workspaceFolder}/log"] }), expand);
    assert.deepEqual(cmd.env, { KEY: "s3cret" });
    assert.deepEqual(cmd.args, ["--log-file", "/ws/log"]);
  });

  test("only command, args and env changes restart the server", () => {
    assert.equal(needsRestart(settings(), settings({ followAlong: false, agents: { a: {} } })), false);
    assert.equal(needsRestart(settings(), settings({ serverArgs: ["-v"] })), true);
    assert.equal(needsRestart(settings(), settings({ serverEnv: { A: "1" } })), true);
  });
});

describe("server configuration", () => {
  test("the acp section of DESIGN §2, unset keys left out", () => {
    assert.deepEqual(serverConfiguration(settings()), { followAlong: true, fs: { allowOutsideWorkspace: false } });
    const rules = [{ kind: "read", path: "src/**", action: "allow" }];
    assert.deepEqual(
      serverConfiguration(settings({ agents: { claude: { command: "npx" } }, defaultAgent: " claude ", permissionRules: rules, followAlong: false })),
      {
        followAlong: false,
        fs: { allowOutsideWorkspace: false },
        agents: { claude: { command: "npx" } },
        defaultAgent: "claude",
        permissions: { rules },
      },
    );
  });
});

describe("prompt context", () => {
  const editor = {
    uri: "file:///ws/src/app.py",
    label: "src/app.py",
    languageId: "python",
    selection: { text: "def greet():\n    pass", startLine: 3, endLine: 4 },
  };

  test("the line under the input names the file and the selected lines", () => {
    assert.deepEqual(describeContext(editor), { file: "src/app.py", selection: "src/app.py:3-4" });
    assert.deepEqual(describeContext({ ...editor, selection: undefined }), { file: "src/app.py" });
    assert.deepEqual(describeContext(undefined), {});
  });

  test("the prompt carries the selection as quoted text and the file as a resource link", () => {
    const blocks = buildPrompt("Explain", editor, true);
    assert.equal(blocks[0]?.text, "Explain");
    assert.match(String(blocks[1]?.text), /Selected in src\/app\.py \(lines 3-4\):\n```python\ndef greet\(\):\n {4}pass\n```/);
    assert.deepEqual(blocks[2], { type: "resource_link", uri: "file:///ws/src/app.py", name: "app.py" });
    assert.deepEqual(buildPrompt("Explain", editor, false), [{ type: "text", text: "Explain" }]);
  });

  test("a selection containing a fence gets a longer one", () => {
    const blocks = buildPrompt("x", { ...editor, selection: { text: "```\ncode\n```", startLine: 1, endLine: 3 } }, true);
    assert.ok(String(blocks[1]?.text).includes("````python"));
  });
});

describe("status bar text", () => {
  test("state, agent, running tool call and progress", () => {
    const session = fromSnapshot({ sessionId: "s", agent: "demo", cwd: "/w", status: "running", seq: 0, messages: [], toolCalls: [], timeline: [] });
    session.toolCalls.t = { toolCallId: "t", title: "Read src/app.py", kind: "read", status: "in_progress", content: [], locations: [] };
    session.timeline.push({ toolCall: "t" });
    assert.equal(statusText(session, undefined).text, "$(loading~spin) demo: working · Read src/app.py");
    assert.equal(statusText(session, "Editing app.py").text, "$(loading~spin) demo: working · Editing app.py");
    session.status = "awaiting_permission";
    assert.match(statusText(session, undefined).text, /^\$\(shield\) demo: needs permission/);
    session.status = "idle";
    assert.equal(statusText(session, "stale").text, "$(comment-discussion) demo: idle");
    assert.equal(statusText(null, undefined).text, "$(comment-discussion) ACP");
  });
});
