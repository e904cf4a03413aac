"""Editor tools and permissions (issue 27 point 3): a read-only tool of the session's own editor
server runs without a prompt; openDiff, a name-alike of another MCP server and a call the bridge
cannot tell apart still reach the editor.

A scripted agent asks ``session/request_permission`` for each call, in the shapes the real
agents send: Claude Code names the tool in ``_meta.claudeCode`` (``toolName``, and
``mcpServer`` in newer versions; the tool_call before the request carries it too), Qwen Code in
``_meta.toolName``, Codex in the rawInput of the MCP elicitation it forwards, Gemini CLI only
in the title. Then real Qwen Code in its Default mode;
real Claude Code in Manual mode is tests/nvim/test_editor_tools_claude.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agents import read_log
from tests.e2e.test_editor_tools import ALL_TOOLS, Tools, start
from tests.e2e.test_editor_tools_agents import answers as editor_answers
from tests.e2e.test_editor_tools_agents import call, workspace
from tests.model_server import ModelServer, Say, Script
from tests.support.lsp_editor import pick
from tests.support.production import open_session, start_agent

pytestmark = pytest.mark.timeout(120)

JsonObject = dict[str, Any]
# an agent's options, "always" first as Qwen Code sends them: the bridge must never pick it
OPTIONS = [
    {"optionId": "allow_always", "name": "Yes, and don't ask again", "kind": "allow_always"},
    {"optionId": "allow", "name": "Yes", "kind": "allow_once"},
    {"optionId": "reject", "name": "No", "kind": "reject_once"},
]


def claude_meta(name: str, server: str | None = None) -> JsonObject:
    claude: JsonObject = {"toolName": name}
    if server is not None:
        claude["mcpServer"] = {"name": server, "source": "dynamic"}
    return {"claudeCode": claude}


def codex_ask(server: str, tool: str) -> JsonObject:
    """The rawInput of Codex's permission request for an MCP tool call (codex-acp 0.16)."""
    return {
        "id": f"mcp_tool_call_approval_{tool}",
        "server_name": server,
        "request": {
            "_meta": {"codex_approval_kind": "mcp_tool_call", "tool_params": {}},
            "message": f'Allow the {server} MCP server to run tool "{tool}"?',
            "mode": "form",
            "requested_schema": {"type": "object", "properties": {}},
        },
    }


# (tool call id, the toolCall of the request, the _meta of a tool_call sent before it or None)
ASKS: list[tuple[str, JsonObject, JsonObject | None]] = [
    # Claude Code without mcpServer: the name is in the tool_call the request completes
    ("diagnostics", {"title": "mcp__editor__diagnostics"}, claude_meta("mcp__editor__diagnostics")),
    (
        "hover",
        {"title": "mcp__editor__hover", "_meta": claude_meta("mcp__editor__hover", "editor")},
        None,
    ),
    ("qwen-symbols", {"title": "{}", "_meta": {"toolName": "mcp__editor__documentSymbols"}}, None),
    (
        "openDiff",
        {"title": "mcp__editor__openDiff", "_meta": claude_meta("mcp__editor__openDiff", "editor")},
        None,
    ),
    (
        "other-server",
        {"title": "mcp__other__diagnostics", "_meta": claude_meta("mcp__other__diagnostics")},
        None,
    ),
    # a server that says it is another one though the name reads like ours
    (
        "other-named",
        {"title": "x", "_meta": claude_meta("mcp__editor__diagnostics", "other")},
        None,
    ),
    # a server named "editor" in Claude's own settings (Claude tells where a server came from)
    (
        "claude-settings",
        {
            "title": "x",
            "_meta": {
                "claudeCode": {
                    "toolName": "mcp__editor__diagnostics",
                    "mcpServer": {"name": "editor", "source": "project"},
                }
            },
        },
        None,
    ),
    # Codex: an MCP elicitation it forwards, the tool named only in its own message
    (
        "codex-hover",
        {"title": "Approve MCP tool call", "rawInput": codex_ask("editor", "hover")},
        None,
    ),
    (
        "codex-openDiff",
        {"title": "Approve MCP tool call", "rawInput": codex_ask("editor", "openDiff")},
        None,
    ),
    (
        "codex-other",
        {"title": "Approve MCP tool call", "rawInput": codex_ask("other", "diagnostics")},
        None,
    ),
    # the shape of Codex's rawInput under another title: not Codex's MCP approval
    ("codex-titled", {"title": "echo", "rawInput": codex_ask("editor", "hover")}, None),
    # the title alone proves nothing: an MCP server's annotations can set it
    ("title-only", {"title": "mcp__editor__diagnostics"}, None),
    # Gemini CLI: the bare tool name, no server
    ("gemini", {"title": "diagnostics", "kind": "other"}, None),
]
ASKED_EDITOR = [
    "openDiff",
    "other-server",
    "other-named",
    "claude-settings",
    "codex-openDiff",
    "codex-other",
    "codex-titled",
    "title-only",
    "gemini",
]


def script(asks: list[tuple[str, JsonObject, JsonObject | None]]) -> JsonObject:
    steps: list[JsonObject] = []
    for call_id, tool_call, before in asks:
        if before is not None:
            update = {"sessionUpdate": "tool_call", "toolCallId": call_id, "_meta": before}
            steps.append({"update": {**update, "title": "tool", "status": "pending"}})
        params = {
            "sessionId": "{sessionId}",
            "toolCall": {"toolCallId": call_id, **tool_call},
            "options": OPTIONS,
        }
        steps.append({"request": "session/request_permission", "params": params, "id": call_id})
    return {"on": {"session/prompt": steps}}


def answers(log: Path) -> dict[str, Any]:
    """What the agent got for each permission request, by tool call id."""
    return {m["id"]: m.get("result") for m in read_log(log) if "method" not in m and "id" in m}


async def test_read_only_editor_tools_are_allowed_once_without_a_prompt_the_rest_ask(
    tmp_path: Path, workspace: Path
) -> None:
    editor, _tools, log = await start(tmp_path, workspace, declared=ALL_TOOLS, script=script(ASKS))
    editor.permission_policy = pick("reject_once")  # the user says No to whatever is shown
    try:
        snapshot = await editor.new_session()
        result = await editor.prompt(snapshot["sessionId"], [{"type": "text", "text": "go"}])
        assert result["stopReason"] == "end_turn"
        asked = [r["toolCall"]["toolCallId"] for r in editor.permission_requests]
        assert asked == ASKED_EDITOR
        allowed = {"outcome": {"outcome": "selected", "optionId": "allow"}}
        refused = {"outcome": {"outcome": "selected", "optionId": "reject"}}
        got = answers(log)
        assert got == {
            call_id: refused if call_id in ASKED_EDITOR else allowed for call_id, _, _ in ASKS
        }
    finally:
        await editor.shutdown_session()


ASK_RULE = {"permissions": {"rules": [{"title": "^mcp__editor__", "action": "ask"}]}}
REJECT_RULE = {"permissions": {"rules": [{"title": "hover", "action": "reject"}]}}


@pytest.mark.parametrize(
    ("options", "agent_extra", "asked"),
    [
        ({"editorTools": {"enabled": False}}, {}, True),
        # the user's own MCP server named "editor": the name no longer tells which it is
        ({}, {"mcpServers": [{"name": "editor", "command": "true", "args": [], "env": []}]}, True),
        # the user's permission rules come first
        (ASK_RULE, {}, True),
        (REJECT_RULE, {}, False),
    ],
    ids=["editor-tools-off", "another-server-named-editor", "ask-rule", "reject-rule"],
)
async def test_the_user_s_rules_and_sessions_without_their_own_editor_server_decide_instead(
    tmp_path: Path, workspace: Path, options: JsonObject, agent_extra: JsonObject, asked: bool
) -> None:
    asks = ASKS[1:2]  # mcp__editor__hover, with Claude's mcpServer name "editor"
    editor, _tools, log = await start(
        tmp_path,
        workspace,
        declared=ALL_TOOLS,
        options=options,
        agent_extra=agent_extra,
        script=script(asks),
    )
    editor.permission_policy = pick("reject_once")
    try:
        snapshot = await editor.new_session()
        await editor.prompt(snapshot["sessionId"], [{"type": "text", "text": "go"}])
        prompts = [r["toolCall"]["toolCallId"] for r in editor.permission_requests]
        assert prompts == (["hover"] if asked else [])
        assert answers(log) == {"hover": {"outcome": {"outcome": "selected", "optionId": "reject"}}}
    finally:
        await editor.shutdown_session()


@pytest.mark.production
@pytest.mark.timeout(240)
async def test_qwen_code_in_its_default_mode_asks_the_user_only_for_open_diff(
    tmp_path: Path, model: ModelServer
) -> None:
    """Qwen Code's Default mode asks before every MCP tool that is not trusted (its own "auto"
    mode, where a session starts, asks its model instead). The user refuses what they are
    asked: openDiff, so it never reaches the editor; diagnostics reaches it unasked."""
    ws, greet, _main = workspace(tmp_path)
    model.script = Script(
        "editor tools",
        [
            [
                call("tool_call", name="mcp__editor__diagnostics", arguments={"path": "greet.py"}),
                call(
                    "tool_call",
                    name="mcp__editor__openDiff",
                    arguments={"path": "greet.py", "newText": "x = 1\n"},
                ),
                Say("done"),
            ]
        ],
    )
    editor = await start_agent(
        tmp_path,
        ws,
        "qwen",
        model,
        options={"editorTools": {"enabled": True}},
        editor_tools=["diagnostics", "openDiff"],
    )
    tools = Tools({**editor_answers(greet), "openDiff": {"answer": "reject"}})
    tools.install(editor)
    editor.permission_policy = pick("reject_once")
    try:
        sid = await open_session(editor)
        await editor.acp("acp/setMode", {"sessionId": sid, "modeId": "default"})
        result = await editor.prompt(sid, "Check greet.py", timeout=180)
        assert result["stopReason"] == "end_turn"
        (asked,) = editor.permission_requests
        assert asked["toolCall"]["_meta"] == {"toolName": "mcp__editor__openDiff"}
        assert [r["tool"] for r in tools.requests] == ["diagnostics"]
    finally:
        await editor.shutdown_session()
