"""Editor tools (issue 27): the MCP server the bridge adds to an agent's session, end to end.

The real acp-lsp server runs a scripted ACP agent that declares HTTP MCP servers; the test
reads the MCP URL from the session/new the agent received and calls every tool with the
official MCP SDK client, as an agent would. The editor is a TestEditor that either answers
``acp/editorTool`` with canned LSP results (the bridge converts them) or declares nothing
(the bridge answers what it knows itself).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from lsprotocol import types
from mcp import Client
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig

from acp_lsp.editor_tools.tools import BRIDGE_ONLY, TOOL_NAMES
from tests.agents import read_log
from tests.agents.scripted_acp import DEFAULT_INITIALIZE
from tests.e2e.conftest import server_env, with_fast_demo
from tests.e2e.test_files import agent_config
from tests.model_server import ModelServer, Say, Script, Tool
from tests.support import production
from tests.support.acp_lsp_schema import validate
from tests.support.lsp_editor import SERVER_COMMAND, TestEditor, capabilities
from tests.support.production import open_session, processes_of, start_agent, texts, tool_calls

pytestmark = pytest.mark.timeout(120)


JsonObject = dict[str, Any]
# every tool an editor front end can answer (openFile is always the bridge's)
ALL_TOOLS = [t for t in TOOL_NAMES if t not in BRIDGE_ONLY]
HTTP_MCP = {
    **DEFAULT_INITIALIZE,
    "agentCapabilities": {
        **DEFAULT_INITIALIZE["agentCapabilities"],
        "mcpCapabilities": {"http": True},
        "sessionCapabilities": {"list": {}, "close": {}, "resume": {}, "fork": {}},
    },
}


class Tools:
    """An editor end of acp/editorTool: canned answers, every request recorded."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.requests: list[JsonObject] = []
        self.withdrawn: list[str] = []
        self.shown: list[types.ShowDocumentParams] = []  # window/showDocument requests

    def install(self, editor: TestEditor) -> None:
        @editor.feature("acp/editorTool")
        async def editor_tool(client: TestEditor, params: JsonObject) -> Any:
            validate("acp/editorTool", "params", params)
            self.requests.append(params)
            answer = self.answers[params["tool"]]
            if answer == "never":
                try:
                    await asyncio.Event().wait()
                except asyncio.CancelledError:  # the bridge's $/cancelRequest
                    self.withdrawn.append(params["tool"])
                    raise
            validate("acp/editorTool", "result", answer)
            return answer

        self.shown = editor.shown_documents  # pytest-lsp answers window/showDocument


async def start(
    tmp_path: Path,
    workspace: Path,
    *,
    declared: list[str] | None,
    answers: dict[str, Any] | None = None,
    options: JsonObject | None = None,
    initialize: JsonObject = HTTP_MCP,
    agent_extra: JsonObject | None = None,
    script: JsonObject | None = None,
) -> tuple[TestEditor, Tools, Path]:
    log = tmp_path / "agent.log"
    full = {"initialize": initialize, **(script or {})}
    agent = {**agent_config(full, tmp_path, log), **(agent_extra or {})}
    opts: JsonObject = {
        "editorTools": {"enabled": True, "timeoutS": 1},
        **(options or {}),
        "agents": {"scripted": agent},
        "defaultAgent": "scripted",
    }
    config = ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=TestEditor, server_env=server_env(tmp_path)
    )
    editor = await config.start()
    assert isinstance(editor, TestEditor)
    tools = Tools(answers or {})
    tools.install(editor)
    caps = capabilities("neovim", rich=declared is not None)
    if declared is not None:
        caps.experimental["acp"]["editorTools"] = declared
    await editor.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            client_info=types.ClientInfo(name="plain-editor" if declared is None else "rich"),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            initialization_options=with_fast_demo(opts),
        )
    )
    return editor, tools, log


def mcp_servers(log: Path, method: str = "session/new") -> list[JsonObject]:
    *_, new = [m for m in read_log(log) if m.get("method") == method]
    servers: list[JsonObject] = new["params"]["mcpServers"]
    return servers


def editor_url(log: Path, method: str = "session/new") -> str:
    (server,) = [s for s in mcp_servers(log, method) if s["name"] == "editor"]
    assert server["type"] == "http" and server["headers"] == []
    assert server["url"].startswith("http://127.0.0.1:")
    return str(server["url"])


async def call(url: str, tool: str, args: JsonObject | None = None) -> tuple[bool, Any]:
    """(is_error, the JSON answer or the error text) as an agent gets it."""
    async with Client(url) as client:
        result = await client.call_tool(tool, args or {})
    text = result.content[0].text  # type: ignore[union-attr]
    if result.is_error:
        return True, text
    value = json.loads(text)
    # an object, and the same as structuredContent (Gemini CLI refuses anything else)
    assert isinstance(value, dict) and result.structured_content == value
    return False, value


def rng(line: int, char: int, end_line: int, end_char: int) -> JsonObject:
    return {
        "start": {"line": line, "character": char},
        "end": {"line": end_line, "character": end_char},
    }


async def test_an_editor_answers_every_tool_in_lsp_terms_the_agent_gets_mcp_terms(
    tmp_path: Path, workspace: Path
) -> None:
    main = workspace / "src" / "main.py"
    main.parent.mkdir(exist_ok=True)
    main.write_text("def greet():\n    return 1\n", encoding="utf-8")
    uri = from_fs_path(str(main))
    answers = {
        "diagnostics": {
            "diagnostics": [
                {
                    "uri": uri,
                    "range": rng(1, 4, 1, 10),
                    "severity": 2,
                    "source": "pyright",
                    "code": "reportX",
                    "message": "something odd",
                },
            ]
        },
        "definition": {"locations": [{"uri": uri, "range": rng(0, 4, 0, 9)}]},
        "references": {
            "locations": [
                {"uri": uri, "range": rng(0, 4, 0, 9)},
                {"uri": uri, "range": rng(5, 0, 5, 5)},
            ]
        },
        "hover": {"contents": "```python\ndef greet() -> int\n```"},
        "documentSymbols": {
            "symbols": [
                {
                    "name": "Greeter",
                    "kind": 5,
                    "range": rng(0, 0, 3, 0),
                    "children": [{"name": "greet", "kind": 6, "range": rng(1, 4, 2, 0)}],
                },
            ]
        },
        "workspaceSymbols": {
            "symbols": [
                {"name": "greet", "kind": 12, "location": {"uri": uri, "range": rng(0, 4, 0, 9)}}
            ]
        },
        "openEditors": {
            "editors": [{"uri": uri, "languageId": "python", "dirty": True, "active": True}]
        },
        "selection": {"selection": {"uri": uri, "range": rng(0, 0, 0, 3), "text": "def"}},
        "openDiff": {"answer": "accept", "text": "def greet():\n    return 2\n"},
    }
    editor, tools, log = await start(tmp_path, workspace, declared=ALL_TOOLS, answers=answers)
    try:
        await editor.new_session()
        url = editor_url(log)
        async with Client(url) as client:
            listed = await client.list_tools()
        assert sorted(t.name for t in listed.tools) == sorted([*ALL_TOOLS, "openFile"])
        assert all(t.description and t.input_schema["type"] == "object" for t in listed.tools)

        here = str(main)
        expected: dict[str, tuple[JsonObject, JsonObject, Any]] = {
            # tool: (MCP arguments, acp/editorTool arguments, MCP answer)
            "diagnostics": (
                {"path": "src/main.py"},
                {"uri": uri, "limit": 500},
                {
                    "files": [
                        {
                            "path": here,
                            "diagnostics": [
                                {
                                    "line": 2,
                                    "column": 5,
                                    "endLine": 2,
                                    "endColumn": 11,
                                    "severity": "warning",
                                    "source": "pyright",
                                    "code": "reportX",
                                    "message": "something odd",
                                }
                            ],
                        }
                    ],
                    "total": 1,
                },
            ),
            "definition": (
                {"path": here, "line": 2, "column": 12},
                {"uri": uri, "position": {"line": 1, "character": 11}},
                {
                    "locations": [
                        {"path": here, "line": 1, "column": 5, "endLine": 1, "endColumn": 10}
                    ]
                },
            ),
            "references": (
                {"path": here, "line": 1, "column": 5},
                {"uri": uri, "position": {"line": 0, "character": 4}},
                {
                    "locations": [
                        {"path": here, "line": 1, "column": 5, "endLine": 1, "endColumn": 10},
                        {"path": here, "line": 6, "column": 1, "endLine": 6, "endColumn": 6},
                    ]
                },
            ),
            "hover": (
                {"path": here, "line": 1},
                {"uri": uri, "position": {"line": 0, "character": 0}},
                {"text": "```python\ndef greet() -> int\n```"},
            ),
            "documentSymbols": (
                {"path": here},
                {"uri": uri},
                {
                    "symbols": [
                        {
                            "name": "Greeter",
                            "kind": "class",
                            "line": 1,
                            "column": 1,
                            "endLine": 4,
                            "endColumn": 1,
                        },
                        {
                            "name": "greet",
                            "kind": "method",
                            "line": 2,
                            "column": 5,
                            "endLine": 3,
                            "endColumn": 1,
                            "containerName": "Greeter",
                        },
                    ]
                },
            ),
            "workspaceSymbols": (
                {"query": "gre"},
                {"query": "gre"},
                {
                    "symbols": [
                        {"name": "greet", "kind": "function", "path": here, "line": 1, "column": 5}
                    ]
                },
            ),
            "openEditors": (
                {},
                {},
                {
                    "editors": [
                        {"path": here, "languageId": "python", "dirty": True, "active": True}
                    ]
                },
            ),
            "selection": (
                {},
                {},
                {
                    "selection": {
                        "path": here,
                        "line": 1,
                        "column": 1,
                        "endLine": 1,
                        "endColumn": 4,
                        "text": "def",
                    }
                },
            ),
            "openDiff": (
                {"path": here, "newText": "x = 1\n", "title": "Rename"},
                {"uri": uri, "newText": "x = 1\n", "title": "Rename"},
                {"answer": "accept", "text": "def greet():\n    return 2\n"},
            ),
        }
        for tool, (args, lsp_args, answer) in expected.items():
            assert await call(url, tool, args) == (False, answer), tool
            request = tools.requests[-1]
            assert request["tool"] == tool and request["arguments"] == lsp_args, tool
            assert request["sessionId"] == next(iter(editor.sessions))

        # openFile is always the bridge's: window/showDocument without the focus
        assert await call(url, "openFile", {"path": "src/main.py", "line": 2}) == (
            False,
            {"shown": True},
        )
        (shown,) = tools.shown
        assert shown.uri == uri and shown.take_focus is False
        assert shown.selection is not None and shown.selection.start.line == 1
        assert len(tools.requests) == len(expected)  # openFile never reached acp/editorTool
    finally:
        await editor.shutdown_session()
    assert not editor.schema_errors


async def test_a_plain_editor_gets_what_the_bridge_knows_and_a_clear_error_for_the_rest(
    tmp_path: Path, workspace: Path
) -> None:
    editor, tools, log = await start(tmp_path, workspace, declared=None)
    try:
        await editor.new_session()
        url = editor_url(log)
        notes = workspace / "notes.txt"
        notes.write_text("alpha\nbeta gamma\n", encoding="utf-8")
        editor.open(notes)
        uri = from_fs_path(str(notes))
        # nothing asked about yet
        assert await call(url, "selection") == (False, {"selection": None})

        editor.type_text(notes, "alpha\nbeta gamma delta\n")
        await editor.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(
                    start=types.Position(line=1, character=5),
                    end=types.Position(line=1, character=10),
                ),
                context=types.CodeActionContext(diagnostics=[]),
            )
        )
        assert await call(url, "selection") == (
            False,
            {
                "selection": {
                    "path": str(notes),
                    "line": 2,
                    "column": 6,
                    "endLine": 2,
                    "endColumn": 11,
                    "text": "gamma",
                }
            },
        )
        assert await call(url, "openEditors") == (
            False,
            {
                "editors": [
                    {"path": str(notes), "languageId": "plaintext", "dirty": True, "active": True}
                ]
            },
        )
        assert await call(url, "openFile", {"path": str(notes)}) == (False, {"shown": True})
        assert tools.shown[-1].take_focus is False

        for tool, args in [
            ("diagnostics", {}),
            ("definition", {"path": str(notes), "line": 1}),
            ("openDiff", {"path": str(notes), "newText": "x"}),
        ]:
            failed, message = await call(url, tool, args)
            assert failed, tool
            assert message == (
                f"{tool} is not available in this editor (plain-editor): "
                "its acp-lsp front end does not answer it"
            )
        assert tools.requests == []
    finally:
        await editor.shutdown_session()


async def test_an_editor_that_does_not_answer_is_withdrawn_after_the_timeout(
    tmp_path: Path, workspace: Path
) -> None:
    editor, tools, log = await start(
        tmp_path, workspace, declared=["hover"], answers={"hover": "never"}
    )
    try:
        await editor.new_session()
        failed, message = await call(
            editor_url(log), "hover", {"path": str(workspace / "README.md"), "line": 1}
        )
        assert failed and message == "the editor did not answer hover within 1s"
        await editor.wait_for(lambda: tools.withdrawn == ["hover"])
    finally:
        await editor.shutdown_session()


async def test_an_agent_that_gives_up_on_open_diff_withdraws_it_from_the_editor(
    tmp_path: Path, workspace: Path
) -> None:
    """openDiff has no time limit (the user is reviewing); when the agent gives up on the call
    (a cancelled turn closes its HTTP request) the editor's review is withdrawn."""
    editor, tools, log = await start(
        tmp_path, workspace, declared=ALL_TOOLS, answers={"openDiff": "never"}
    )
    try:
        await editor.new_session()
        args = {"path": "README.md", "newText": "new\n"}
        call_task = asyncio.ensure_future(call(editor_url(log), "openDiff", args))
        # an MCP client session first (its import and handshake took over 10 s with eight
        # workers on two cores): a bound for a stuck call, not a measure
        await editor.wait_for(lambda: len(tools.requests) == 1, timeout=60)
        await asyncio.sleep(1.5)  # longer than timeoutS: openDiff is not timed out
        assert tools.withdrawn == []
        call_task.cancel()  # the client closes its connection
        await editor.wait_for(lambda: tools.withdrawn == ["openDiff"])
    finally:
        await editor.shutdown_session()


async def test_paths_outside_the_workspace_and_wrong_tokens_are_refused(
    tmp_path: Path, workspace: Path
) -> None:
    outside = tmp_path / "secret.py"
    outside.write_text("x = 1\n", encoding="utf-8")
    editor, tools, log = await start(
        tmp_path, workspace, declared=ALL_TOOLS, answers={"definition": {"locations": []}}
    )
    try:
        await editor.new_session()
        url = editor_url(log)
        for path in (str(outside), "../secret.py"):
            failed, message = await call(url, "definition", {"path": path, "line": 1})
            assert failed and "is outside the workspace" in message, message
        assert tools.requests == []
        assert await call(url, "definition", {"path": "README.md", "line": 1}) == (
            False,
            {"locations": []},
        )

        assert await status_of(url) == 200
        assert await status_of(url.rsplit("/", 1)[0] + "/not-the-token") == 404
        assert await status_of(url + "/x") == 404
    finally:
        await editor.shutdown_session()


@pytest.mark.parametrize("allow_outside", [False, True], ids=["confined", "allowOutside"])
async def test_workspace_wide_answers_list_only_the_session_s_own_files(
    tmp_path: Path, workspace: Path, allow_outside: bool
) -> None:
    """An editor answers for every folder and buffer it has; the agent hears only of files
    inside the session's folders, as its path arguments are confined (unless
    fs.allowOutsideWorkspace)."""
    own = workspace / "src" / "main.py"
    own.parent.mkdir(exist_ok=True)
    own.write_text("x = 1\n", encoding="utf-8")
    other = tmp_path / "other" / "secret.py"  # another project the editor has open
    other.parent.mkdir()
    other.write_text("KEY = 1\n", encoding="utf-8")
    link = workspace / "linked.py"  # inside by name, outside by where it leads
    link.symlink_to(other)
    uris = [from_fs_path(str(f)) for f in (own, other, link)] + ["untitled:Untitled-1"]
    answers = {
        "diagnostics": {
            "diagnostics": [{"uri": u, "range": rng(0, 0, 0, 1), "message": "m"} for u in uris]
        },
        "workspaceSymbols": {
            "symbols": [
                {"name": "KEY", "kind": 14, "location": {"uri": u, "range": rng(0, 0, 0, 3)}}
                for u in uris
            ]
        },
        "openEditors": {
            "editors": [
                {"uri": u, "languageId": "python", "dirty": False, "active": False} for u in uris
            ]
        },
        "selection": {"selection": {"uri": uris[1], "range": rng(0, 0, 0, 3), "text": "KEY"}},
    }
    editor, tools, log = await start(
        tmp_path,
        workspace,
        declared=list(answers),
        answers=answers,
        options={
            "fs": {"allowOutsideWorkspace": allow_outside},
            "editorTools": {"enabled": True},  # the default time limit: a busy machine is slow
        },
    )
    try:
        await editor.new_session()
        url = editor_url(log)
        everything = [str(own), str(other), str(link), "untitled:Untitled-1"]
        expected = everything if allow_outside else [str(own)]
        failed, answer = await call(url, "diagnostics")
        assert not failed and [item["path"] for item in answer["files"]] == expected
        assert answer["total"] == len(expected)
        # the editor may cut its answer itself: to the worst 500, and to the session's folders
        (asked,) = [r["arguments"] for r in tools.requests if r["tool"] == "diagnostics"]
        assert asked["limit"] == 500
        assert ("folders" in asked) is not allow_outside
        assert str(workspace) in asked.get("folders", [str(workspace)])
        for tool, args, key in [
            ("workspaceSymbols", {"query": "K"}, "symbols"),
            ("openEditors", {}, "editors"),
        ]:
            failed, answer = await call(url, tool, args)
            assert not failed and [item["path"] for item in answer[key]] == expected, tool
        failed, answer = await call(url, "selection")
        assert not failed and (answer["selection"] is not None) is allow_outside
    finally:
        await editor.shutdown_session()


async def status_of(url: str) -> int:
    """The HTTP status of a tools/list at ``url``."""
    async with httpx.AsyncClient() as http:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        headers = {"accept": "application/json, text/event-stream"}
        return (await http.post(url, json=body, headers=headers)).status_code


async def test_each_session_has_its_own_url_for_as_long_as_it_lives(
    tmp_path: Path, workspace: Path
) -> None:
    selection = {"selection": None}
    editor, tools, log = await start(
        tmp_path, workspace, declared=ALL_TOOLS, answers={"selection": selection}
    )
    try:
        first = (await editor.new_session())["sessionId"]
        url = editor_url(log)
        fork = (await editor.acp("acp/forkSession", {"sessionId": first}))["sessionId"]
        fork_url = editor_url(log, "session/fork")
        assert fork_url != url
        assert await call(fork_url, "selection") == (False, {"selection": None})
        assert await call(url, "selection") == (False, {"selection": None})
        assert [r["sessionId"] for r in tools.requests] == [fork, first]

        await editor.acp("acp/closeSession", {"sessionId": first})
        assert await status_of(url) == 404
        assert await status_of(fork_url) == 200
        await editor.acp("acp/loadSession", {"sessionId": first, "agent": "scripted"})
        (method,) = {m["method"] for m in read_log(log)} & {"session/load", "session/resume"}
        loaded_url = editor_url(log, method)
        assert loaded_url not in (url, fork_url)
        assert await call(loaded_url, "selection") == (False, {"selection": None})
        assert tools.requests[-1]["sessionId"] == first
    finally:
        await editor.shutdown_session()


async def test_open_diff_is_refused_in_a_plan_mode(tmp_path: Path, workspace: Path) -> None:
    modes = {
        "currentModeId": "plan",
        "availableModes": [{"id": "plan", "name": "Plan"}, {"id": "default", "name": "Ask"}],
    }
    editor, tools, log = await start(
        tmp_path,
        workspace,
        declared=ALL_TOOLS,
        answers={"openDiff": {"answer": "accept"}},
        script={"new_session": {"modes": modes}},
    )
    try:
        snapshot = await editor.new_session()
        url = editor_url(log)
        args = {"path": "README.md", "newText": "new\n"}
        assert await call(url, "openDiff", args) == (
            True,
            "openDiff is not allowed in the session's current mode (no edits)",
        )
        assert tools.requests == []
        await editor.acp("acp/setMode", {"sessionId": snapshot["sessionId"], "modeId": "default"})
        assert await call(url, "openDiff", args) == (False, {"answer": "accept"})
    finally:
        await editor.shutdown_session()


@pytest.mark.parametrize(
    ("options", "initialize", "agent_extra"),
    [
        ({"editorTools": {"enabled": False}}, HTTP_MCP, {}),
        ({}, DEFAULT_INITIALIZE, {}),  # enabled, but the agent takes no HTTP MCP servers
        ({}, HTTP_MCP, {"editorTools": False}),
    ],
    ids=["off", "no-http-mcp", "agent-off"],
)
async def test_no_editor_server_unless_enabled_and_the_agent_takes_http(
    tmp_path: Path,
    workspace: Path,
    options: JsonObject,
    initialize: JsonObject,
    agent_extra: JsonObject,
) -> None:
    editor, _tools, log = await start(
        tmp_path,
        workspace,
        declared=ALL_TOOLS,
        options=options,
        initialize=initialize,
        agent_extra=agent_extra,
    )
    try:
        await editor.new_session()
        assert mcp_servers(log) == []
    finally:
        await editor.shutdown_session()


async def test_the_editor_server_is_on_by_default(tmp_path: Path, workspace: Path) -> None:
    editor, _tools, log = await start(
        tmp_path,
        workspace,
        declared=["selection"],
        answers={"selection": {"selection": None}},
        options={"editorTools": {}},
    )
    try:
        await editor.new_session()
        assert await call(editor_url(log), "selection") == (False, {"selection": None})
    finally:
        await editor.shutdown_session()


@pytest.mark.production
async def test_claude_connects_and_offers_the_editor_tools_to_its_model(
    tmp_path: Path, model: ModelServer
) -> None:
    """claude-agent-acp takes the bridge's MCP server from session/new, connects to it and
    lists its tools: its model is told each one by name (Claude defers MCP tools behind its
    ToolSearch tool)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    model.script = Script("answer", [[Say("Done.")]])
    editor = await start_agent(
        tmp_path, ws, "claude", model, options={"editorTools": {"enabled": True}}
    )
    try:
        sid = await open_session(editor)
        result = await editor.prompt(sid, "Hello.", timeout=180)
        assert result["stopReason"] == "end_turn"
        (first, *_) = model.turn_requests()
        offered = set(re.findall(r"mcp__editor__(\w+)", json.dumps(first.body)))
        assert offered == {*ALL_TOOLS, "openFile"}
    finally:
        await editor.shutdown_session()
    assert processes_of(tmp_path / "home") == []


# -- a real Claude turn: its model calls the editor tools ------------------------------------


async def start_claude(
    tmp_path: Path, ws: Path, model: ModelServer, answers: dict[str, Any]
) -> tuple[TestEditor, Tools]:
    """The real server with claude-agent-acp against ``model``, editor tools on, and an editor
    that answers ``acp/editorTool`` for the tools in ``answers``."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    config = ClientServerConfig(
        server_command=SERVER_COMMAND,
        client_factory=TestEditor,
        server_env=production.server_env(home),
    )
    editor = await config.start()
    assert isinstance(editor, TestEditor)
    tools = Tools(answers)
    tools.install(editor)
    caps = capabilities("visual_studio_code")
    caps.experimental["acp"]["editorTools"] = sorted(answers)
    options = {
        "agents": {"claude": production.agent_config("claude", model, home)},
        "defaultAgent": "claude",
        "editorTools": {"enabled": True},
    }
    await editor.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            client_info=types.ClientInfo(name="rich"),
            root_uri=ws.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
            initialization_options=options,
        )
    )
    return editor, tools


def load(*names: str) -> Tool:
    """Claude Code defers MCP tools: its model loads them through ToolSearch first."""
    query = "select:" + ",".join(f"mcp__editor__{n}" for n in names)
    return Tool(
        "call",
        {"name": "ToolSearch", "input": json.dumps({"query": query, "max_results": len(names)})},
    )


def use(name: str, **args: Any) -> Tool:
    return Tool("call", {"name": f"mcp__editor__{name}", "input": json.dumps(args)})


def tool_results(model: ModelServer) -> list[Any]:
    """The tool results Claude sent its model, in order."""
    out = []
    for request in model.turn_requests():
        last = request.body["messages"][-1]
        if isinstance(last["content"], list):
            out += [b for b in last["content"] if b.get("type") == "tool_result"]
    return out


@pytest.mark.production
async def test_claude_s_model_gets_the_editor_s_diagnostics(
    tmp_path: Path, model: ModelServer
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "greet.py").write_text("def greet(name):\n    return nam\n", encoding="utf-8")
    uri = from_fs_path(str(ws / "greet.py"))
    warning = {
        "uri": uri,
        "range": rng(1, 11, 1, 14),
        "severity": 1,
        "source": "pyright",
        "message": '"nam" is not defined',
    }
    model.script = Script(
        "diagnostics",
        [[load("diagnostics"), use("diagnostics", path="greet.py"), Say("`nam` is undefined.")]],
    )
    editor, tools = await start_claude(
        tmp_path, ws, model, {"diagnostics": {"diagnostics": [warning]}}
    )
    try:
        sid = await open_session(editor)
        result = await editor.prompt(sid, "What is wrong in greet.py?", timeout=180)
        assert result["stopReason"] == "end_turn"
        (request,) = tools.requests
        assert request == {
            "sessionId": sid,
            "tool": "diagnostics",
            "arguments": {"uri": uri, "limit": 500},
        }
        *_, answer = tool_results(model)
        assert not answer.get("is_error")
        content = answer["content"]
        text = content if isinstance(content, str) else content[0]["text"]
        diagnostic = {
            "line": 2,
            "column": 12,
            "endLine": 2,
            "endColumn": 15,
            "severity": "error",
            "source": "pyright",
            "message": '"nam" is not defined',
        }
        assert json.loads(text) == {
            "files": [{"path": str(ws / "greet.py"), "diagnostics": [diagnostic]}],
            "total": 1,
        }
        call_ = next(c for c in tool_calls(editor, sid) if c["title"] == "mcp__editor__diagnostics")
        assert call_["status"] == "completed"
        assert texts(editor, sid)[-1].endswith("`nam` is undefined.")
    finally:
        await editor.shutdown_session()
    assert processes_of(tmp_path / "home") == []


@pytest.mark.production
async def test_cancelling_claude_s_turn_withdraws_the_open_diff_review(
    tmp_path: Path, model: ModelServer
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "greet.py").write_text("x = 1\n", encoding="utf-8")
    model.script = Script(
        "review",
        [[load("openDiff"), use("openDiff", path="greet.py", newText="x = 2\n"), Say("Done.")]],
    )
    editor, tools = await start_claude(tmp_path, ws, model, {"openDiff": "never"})
    try:
        sid = await open_session(editor)
        turn = asyncio.ensure_future(editor.prompt(sid, "Propose x = 2.", timeout=180))
        await editor.wait_for(lambda: len(tools.requests) == 1, timeout=120)
        await editor.acp("acp/cancel", {"sessionId": sid})
        assert (await turn)["stopReason"] == "cancelled"
        # Claude's MCP client cancels the call on its own time: 10 s was too short under load
        await editor.wait_for(lambda: tools.withdrawn == ["openDiff"], timeout=60)
    finally:
        await editor.shutdown_session()
    assert processes_of(tmp_path / "home") == []
