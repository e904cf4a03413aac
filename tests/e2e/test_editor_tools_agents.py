"""Editor tools (issue 27) with the agents that are not Claude: Qwen Code (OpenAI Chat
Completions), Gemini CLI and Codex (OpenAI Responses), each a real turn through the real acp-lsp server against the
scripted model server. The model is offered the editor's tools, calls ``diagnostics`` and
``definition``, the editor (a TestEditor) answers them through ``acp/editorTool``, and the
next model request carries the editor's answers.

Qwen Code offers MCP tools behind its ``tool_search`` / ``tool_call`` pair (named in a
startup reminder, called through ``tool_call``); Gemini CLI declares them as
``mcp_editor_<tool>``, but only in a trusted folder (docs/agents.md); Codex as functions of
a Responses namespace ``mcp__editor``.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pygls.uris import from_fs_path

from acp_lsp.backends.agent_env import QWEN_MCP_BLOCKING, start_env
from acp_lsp.config import AgentConfig
from tests.e2e.test_editor_tools import Tools, rng
from tests.model_server import ModelServer, Say, Script, Tool
from tests.support.lsp_editor import TestEditor
from tests.support.production import open_session, processes_of, start_agent, texts, tool_calls

pytestmark = pytest.mark.timeout(240)

JsonObject = dict[str, Any]
GREET = "def greet(name):\n    return nam\n"
MAIN = "from greet import greet\n\nprint(greet('x'))\n"


def workspace(tmp_path: Path) -> tuple[Path, str, str]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "greet.py").write_text(GREET, encoding="utf-8")
    (ws / "main.py").write_text(MAIN, encoding="utf-8")
    return ws, from_fs_path(str(ws / "greet.py")) or "", from_fs_path(str(ws / "main.py")) or ""


ANSWER = "`nam` is undefined; greet is defined in greet.py."
HOVER = "```python\ndef greet(name)\n```"


def answers(greet: str) -> dict[str, Any]:
    """What the editor's language servers say, in LSP terms."""
    return {
        "hover": {"contents": HOVER},
        "diagnostics": {
            "diagnostics": [
                {
                    "uri": greet,
                    "range": rng(1, 11, 1, 14),
                    "severity": 1,
                    "source": "pyright",
                    "message": '"nam" is not defined',
                }
            ]
        },
        "definition": {"locations": [{"uri": greet, "range": rng(0, 4, 0, 9)}]},
    }


def expected(ws: Path) -> tuple[JsonObject, JsonObject]:
    """The same answers as the agent gets them (MCP terms: paths, 1-based columns)."""
    path = str(ws / "greet.py")
    diagnostic = {
        "line": 2,
        "column": 12,
        "endLine": 2,
        "endColumn": 15,
        "severity": "error",
        "source": "pyright",
        "message": '"nam" is not defined',
    }
    diagnostics = {"files": [{"path": path, "diagnostics": [diagnostic]}], "total": 1}
    definition = {
        "locations": [{"path": path, "line": 1, "column": 5, "endLine": 1, "endColumn": 10}]
    }
    return diagnostics, definition


def call(tool: str, **args: Any) -> Tool:
    return Tool("call", {"name": tool, "input": json.dumps(args)})


@asynccontextmanager
async def turn(
    tmp_path: Path,
    ws: Path,
    agent: str,
    model: ModelServer,
    env: dict[str, str] | None = None,
    hover: bool = False,
) -> AsyncIterator[tuple[TestEditor, Tools, str]]:
    """One turn of ``agent`` with editor tools on, the editor answering diagnostics and
    definition (and hover) through acp/editorTool; then the editor shuts the server down and
    no process of the agent is left."""
    greet = from_fs_path(str(ws / "greet.py")) or ""
    editor = await start_agent(
        tmp_path,
        ws,
        agent,
        model,
        options={"editorTools": {"enabled": True}},
        env=env,
        editor_tools=["diagnostics", "definition", *(["hover"] if hover else [])],
    )
    tools = Tools(answers(greet))
    tools.install(editor)
    try:
        sid = await open_session(editor)
        result = await editor.prompt(sid, "What is wrong in greet.py?", timeout=180)
        assert result["stopReason"] == "end_turn"
        yield editor, tools, sid
    finally:
        await editor.shutdown_session()
    assert processes_of(tmp_path / "home") == []


def editor_requests(sid: str, greet: str, main: str) -> list[JsonObject]:
    """What the editor is asked (LSP terms: 0-based positions)."""
    return [
        {"sessionId": sid, "tool": "diagnostics", "arguments": {"uri": greet, "limit": 500}},
        {
            "sessionId": sid,
            "tool": "definition",
            "arguments": {"uri": main, "position": {"line": 2, "character": 6}},
        },
    ]


# -- Qwen Code -------------------------------------------------------------------------------


def qwen_tool_results(model: ModelServer) -> list[Any]:
    """The tool results Qwen Code sent its model in the turn's last request, in order."""
    *_, last = model.turn_requests()
    out = []
    for message in last.body["messages"]:
        if message["role"] == "tool":
            content = message["content"]
            text = content if isinstance(content, str) else content[0]["text"]
            out.append(text)
    return out


def qwen_announced(model: ModelServer) -> set[str]:
    """The editor tools the first request of the turn names (Qwen Code's startup reminder of
    tools reachable through tool_search / tool_call)."""
    first, *_ = model.turn_requests()
    return set(re.findall(r"mcp__editor__(\w+)", json.dumps(first.body["messages"])))


async def test_qwen_s_model_gets_the_editor_s_diagnostics_and_definition(
    tmp_path: Path, model: ModelServer
) -> None:
    ws, greet, main = workspace(tmp_path)
    model.script = Script(
        "editor tools",
        [
            [
                call("tool_call", name="mcp__editor__diagnostics", arguments={"path": "greet.py"}),
                call(
                    "tool_call",
                    name="mcp__editor__definition",
                    arguments={"path": "main.py", "line": 3, "column": 7},
                ),
                Say(ANSWER),
            ]
        ],
    )
    async with turn(tmp_path, ws, "qwen", model) as (editor, tools, sid):
        assert qwen_announced(model) >= {"diagnostics", "definition", "openDiff"}
        assert tools.requests == editor_requests(sid, greet, main)
        assert [json.loads(r) for r in qwen_tool_results(model)] == list(expected(ws))
        assert [(c["title"].split()[0], c["status"]) for c in tool_calls(editor, sid)] == [
            ("diagnostics", "completed"),
            ("definition", "completed"),
        ]
        assert texts(editor, sid)[-1].endswith(ANSWER)


# -- Gemini CLI ------------------------------------------------------------------------------

TRUSTED = {"GEMINI_CLI_TRUST_WORKSPACE": "true"}


def gemini_offered(model: ModelServer) -> set[str]:
    first, *_ = model.turn_requests()
    declared = [d["name"] for t in first.body.get("tools", []) for d in t["functionDeclarations"]]
    return {n.removeprefix("mcp_editor_") for n in declared if n.startswith("mcp_editor_")}


def gemini_tool_results(model: ModelServer) -> dict[str, Any]:
    """The function responses Gemini CLI sent its model in the turn's last request."""
    *_, last = model.turn_requests()
    return {
        part["functionResponse"]["name"]: part["functionResponse"]["response"]
        for content in last.body["contents"]
        for part in content.get("parts", [])
        if "functionResponse" in part
    }


def gemini_output(response: JsonObject) -> Any:
    """The JSON answer inside Gemini CLI's wrapping of what an MCP server says."""
    output = response["output"]
    assert output.startswith("<untrusted_context>\n"), response
    return json.loads(output.removeprefix("<untrusted_context>").split("</")[0])


async def test_gemini_s_model_gets_the_editor_s_answers_lists_too_in_a_trusted_folder(
    tmp_path: Path, model: ModelServer
) -> None:
    ws, greet, main = workspace(tmp_path)
    model.script = Script(
        "editor tools",
        [
            [
                call("mcp_editor_diagnostics", path="greet.py"),
                call("mcp_editor_definition", path="main.py", line=3, column=7),
                call("mcp_editor_hover", path="main.py", line=3, column=7),
                Say("greet is a function."),
            ]
        ],
    )
    async with turn(tmp_path, ws, "gemini", model, env=TRUSTED, hover=True) as (editor, tools, sid):
        assert gemini_offered(model) >= {"diagnostics", "definition", "hover", "openDiff"}
        asked = editor_requests(sid, greet, main)
        hover = {**asked[1], "tool": "hover"}
        assert tools.requests == [*asked, hover]
        results = gemini_tool_results(model)
        # every answer is an object, so Gemini CLI's MCP client takes the lists too (it
        # refuses a list or null as structuredContent, which it fills from the text)
        diagnostics, definition = expected(ws)
        assert gemini_output(results["mcp_editor_diagnostics"]) == diagnostics
        assert gemini_output(results["mcp_editor_definition"]) == definition
        assert gemini_output(results["mcp_editor_hover"]) == {"text": HOVER}
        assert [(c["title"].split()[0], c["status"]) for c in tool_calls(editor, sid)] == [
            ("diagnostics", "completed"),
            ("definition", "completed"),
            ("hover", "completed"),
        ]


async def test_gemini_offers_no_editor_tools_in_an_untrusted_folder(
    tmp_path: Path, model: ModelServer
) -> None:
    ws, _, _ = workspace(tmp_path)
    model.script = Script("answer", [[Say("Done.")]])
    async with turn(tmp_path, ws, "gemini", model) as (_, tools, _):
        assert gemini_offered(model) == set()
        assert tools.requests == []


# -- Codex ----------------------------------------------------------------------------------


def codex_offered(model: ModelServer) -> set[str]:
    """The editor tools of the first request: Codex offers an MCP server's tools as one
    Responses ``namespace`` tool, ``mcp__<server>``, beside its own."""
    first, *_ = model.turn_requests()
    spaces = [t for t in first.body["tools"] if t.get("type") == "namespace"]
    return {inner["name"] for t in spaces if t["name"] == "mcp__editor" for inner in t["tools"]}


def codex_tool_results(model: ModelServer) -> list[Any]:
    """The JSON answers Codex sent its model in the turn's last request, in order (it puts
    its own wall time before what the MCP server said)."""
    *_, last = model.turn_requests()
    outputs = [i["output"] for i in last.body["input"] if i.get("type") == "function_call_output"]
    return [json.loads(o.split("Output:\n", 1)[1]) for o in outputs]


async def test_codex_s_model_gets_the_editor_s_diagnostics_and_definition(
    tmp_path: Path, model: ModelServer
) -> None:
    """The scripted model calls the namespaced functions as Codex's models do
    (``{type: function_call, namespace: "mcp__editor", name: "diagnostics"}``)."""
    ws, greet, main = workspace(tmp_path)
    model.script = Script(
        "editor tools",
        [
            [
                call("mcp__editor__diagnostics", path="greet.py"),
                call("mcp__editor__definition", path="main.py", line=3, column=7),
                Say(ANSWER),
            ]
        ],
    )
    async with turn(tmp_path, ws, "codex", model) as (editor, tools, sid):
        assert codex_offered(model) >= {"diagnostics", "definition", "openDiff"}
        assert tools.requests == editor_requests(sid, greet, main)
        assert codex_tool_results(model) == list(expected(ws))
        assert texts(editor, sid)[-1].endswith(ANSWER)
        # Codex asks before every MCP tool call; the bridge allows the read-only ones once
        assert editor.permission_requests == []


# -- the bridge's part -------------------------------------------------------------------------


def test_qwen_code_alone_is_started_to_discover_mcp_servers_before_session_new_answers() -> None:
    qwen = AgentConfig(command="npx", args=["-y", "@qwen-code/qwen-code@0.24.4", "--acp"])
    claude = AgentConfig(command="claude-agent-acp")
    assert start_env("q", qwen, {"A": "1"}, mcp=True) == {**QWEN_MCP_BLOCKING, "A": "1"}
    assert start_env("qwen", AgentConfig(command="qwen"), {}, mcp=True) == QWEN_MCP_BLOCKING
    # no MCP servers, another agent, or the user's own setting: left alone
    assert start_env("q", qwen, {"A": "1"}, mcp=False) == {"A": "1"}
    assert start_env("claude", claude, {}, mcp=True) == {}
    own = {"QWEN_CODE_LEGACY_MCP_BLOCKING": "0"}
    assert start_env("q", qwen, own, mcp=True) == own
