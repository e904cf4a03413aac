"""Today's ACP through the real server: elicitation, fork, logout, every auth method type,
MCP servers by capability, prompt blocks by capability, and a slow agent start."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from acp_lsp import protocol as p
from tests.agents import scripted_command
from tests.e2e.conftest import start_editor, with_fast_demo
from tests.support.lsp_editor import TestEditor

pytestmark = pytest.mark.timeout(60)

FORM = {
    "mode": "form",
    "message": "How should I proceed?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "style": {"type": "string", "enum": ["tabs", "spaces"], "title": "Indent style"},
            "tests": {"type": "boolean", "title": "Run the tests?"},
        },
        "required": ["style"],
    },
}
ASK = [
    {
        "request": "elicitation/create",
        "params": {"sessionId": "{sessionId}", **FORM},
        "save_as": "e",
    },
    {
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "answer: {e.action} {e.content.style}"},
        }
    },
]


def scripted(tmp_path: Path, script: dict[str, Any], **extra: Any) -> dict[str, Any]:
    log = tmp_path / "agent.log"
    argv = scripted_command(script, tmp_dir=tmp_path)
    env = {"SCRIPTED_ACP_LOG": str(log), **extra.pop("env", {})}
    return {"command": argv[0], "args": argv[1:], "env": env, **extra}


def received(tmp_path: Path) -> list[dict[str, Any]]:
    lines = (tmp_path / "agent.log").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


async def editor_with(
    tmp_path: Path, workspace: Path, agent: dict[str, Any], *, rich: bool = True
) -> TestEditor:
    options = with_fast_demo({"agents": {"a": agent}, "defaultAgent": "a"})
    return await start_editor(tmp_path, workspace, "visual_studio_code", options, rich=rich)


async def error_of(coro: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as info:
        await coro
    return info.value


def agent_text(editor: TestEditor, sid: str) -> str:
    return "".join(editor.sessions[sid].message_texts()[1:])


async def test_elicitation_form_reaches_a_rich_editor(tmp_path: Path, workspace: Path) -> None:
    editor = await editor_with(
        tmp_path, workspace, scripted(tmp_path, {"on": {"session/prompt": ASK}})
    )
    editor.elicitation_policy = lambda _p: {"action": "accept", "content": {"style": "tabs"}}
    sid = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(sid, "format it"))["stopReason"] == "end_turn"
    [asked] = editor.elicitations
    assert asked["sessionId"] == sid and asked["agent"] == "a"
    assert asked["request"]["requestedSchema"] == FORM["requestedSchema"]
    assert agent_text(editor, sid) == "answer: accept tabs"
    await editor.shutdown_session()
    assert not editor.schema_errors, editor.schema_errors


async def test_elicitation_in_a_plain_editor_is_asked_field_by_field(
    tmp_path: Path, workspace: Path
) -> None:
    editor = await editor_with(
        tmp_path, workspace, scripted(tmp_path, {"on": {"session/prompt": ASK}}), rich=False
    )
    editor.permission_policy = lambda _p: None
    editor.message_policy = lambda params: "spaces" if "Indent" in params.message else "No"
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "format it")
    questions = [m.message for m in editor.message_requests]
    assert any("Indent style" in q for q in questions) and any(
        "Run the tests" in q for q in questions
    )
    assert agent_text(editor, sid) == "answer: accept spaces"
    answered = [m for m in received(tmp_path) if m.get("result", {}).get("action")]
    assert answered[0]["result"] == {
        "action": "accept",
        "content": {"style": "spaces", "tests": False},
    }
    await editor.shutdown_session()


async def test_a_form_that_needs_typing_is_declined_in_a_plain_editor(
    tmp_path: Path, workspace: Path
) -> None:
    form = {
        "mode": "form",
        "message": "Name the branch",
        "requestedSchema": {"properties": {"branch": {"type": "string"}}, "required": ["branch"]},
    }
    steps = [
        {
            "request": "elicitation/create",
            "params": {"sessionId": "{sessionId}", **form},
            "save_as": "e",
        },
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "{e.action}"},
            }
        },
    ]
    editor = await editor_with(
        tmp_path, workspace, scripted(tmp_path, {"on": {"session/prompt": steps}}), rich=False
    )
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "go")
    assert agent_text(editor, sid) == "decline"
    await editor.wait_for(lambda: any("branch" in m.message for m in editor.messages))
    await editor.shutdown_session()


async def test_url_elicitation_and_its_completion(tmp_path: Path, workspace: Path) -> None:
    url = {
        "mode": "url",
        "message": "Approve in the browser",
        "elicitationId": "el-1",
        "url": "https://example.invalid/ok",
    }
    steps = [
        {
            "request": "elicitation/create",
            "params": {"sessionId": "{sessionId}", **url},
            "save_as": "e",
        },
        {"notify": "elicitation/complete", "params": {"elicitationId": "el-1"}},
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "{e.action}"},
            }
        },
    ]
    editor = await editor_with(
        tmp_path, workspace, scripted(tmp_path, {"on": {"session/prompt": steps}})
    )
    editor.elicitation_policy = lambda _p: {"action": "accept"}
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "go")
    assert editor.elicitations[0]["request"]["url"] == url["url"]
    assert agent_text(editor, sid) == "accept"
    await editor.wait_for(
        lambda: any(m == "acp/elicitationComplete" for m, _ in editor.notifications)
    )
    done = next(params for m, params in editor.notifications if m == "acp/elicitationComplete")
    assert done == {"agent": "a", "elicitationId": "el-1"}
    await editor.shutdown_session()
    assert not editor.schema_errors, editor.schema_errors


FORKABLE = {
    "initialize": {
        "protocolVersion": 1,
        "agentCapabilities": {
            "sessionCapabilities": {"fork": {}},
            "auth": {"logout": {}},
            "promptCapabilities": {"image": True},
            "mcpCapabilities": {"http": True},
        },
        "authMethods": [],
    },
    "session_ids": ["orig", "copy"],
    "on": {
        "session/prompt": [
            {
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "hi"},
                }
            }
        ]
    },
}


async def test_fork_logout_and_capabilities(tmp_path: Path, workspace: Path) -> None:
    mcp = [
        {"name": "files", "command": "mcp-files", "args": [], "env": []},
        {"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": []},
        {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []},
    ]
    editor = await editor_with(tmp_path, workspace, scripted(tmp_path, FORKABLE, mcpServers=mcp))
    snap = await editor.new_session()
    sid = snap["sessionId"]
    assert snap["promptCapabilities"] == {"image": True}
    await editor.prompt(sid, "hello")
    fork = await editor.acp(p.ACP_FORK_SESSION, {"sessionId": sid})
    assert fork["sessionId"] == "copy" and fork["forkedFrom"] == sid
    assert [m["role"] for m in fork["messages"]] == ["user", "agent"]
    # the fork is a session of its own: a turn there leaves the original alone
    editor.sessions[fork["sessionId"]] = type(editor.sessions[sid])(fork)
    await editor.prompt(fork["sessionId"], "again")
    original = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    assert len(original["messages"]) == 2
    assert await editor.acp(p.ACP_LOGOUT, {"agent": "a"}) == {}
    sent = received(tmp_path)
    assert [m["method"] for m in sent if m.get("method") == "logout"] == ["logout"]
    new = next(m for m in sent if m.get("method") == "session/new")
    # stdio always, http because the agent takes it, sse left out (not advertised); then
    # the editor's tools (on by default, an http server)
    assert [s["name"] for s in new["params"]["mcpServers"]] == ["files", "web", "editor"]
    forked = next(m for m in sent if m.get("method") == "session/fork")
    assert forked["params"]["sessionId"] == "orig"
    agents = (await editor.acp(p.ACP_LIST_AGENTS))["agents"]
    a = next(x for x in agents if x["name"] == "a")
    assert a["promptCapabilities"] == {"image": True} and a["agentCapabilities"]["auth"] == {
        "logout": {}
    }
    # an audio block the agent does not accept is refused before the turn, naming why
    err = await error_of(
        editor.prompt(sid, [{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}])
    )
    assert err.code == p.INVALID_PARAMS and "promptCapabilities.audio" in err.message
    await editor.shutdown_session()
    assert not editor.schema_errors, editor.schema_errors


async def test_fork_and_logout_need_the_capability(tmp_path: Path, workspace: Path) -> None:
    editor = await editor_with(tmp_path, workspace, scripted(tmp_path, {}))
    sid = (await editor.new_session())["sessionId"]
    assert (
        await error_of(editor.acp(p.ACP_FORK_SESSION, {"sessionId": sid}))
    ).code == p.NOT_SUPPORTED
    assert (await error_of(editor.acp(p.ACP_LOGOUT, {"agent": "a"}))).code == p.NOT_SUPPORTED
    await editor.shutdown_session()


AUTH = {
    "initialize": {
        "protocolVersion": 1,
        "agentCapabilities": {},
        "authMethods": [
            {"id": "chatgpt", "name": "Login with ChatGPT"},
            {"type": "env_var", "id": "key", "name": "Use KEY_A", "vars": [{"name": "KEY_A"}]},
        ],
    },
    "on": {
        "session/new": [
            {
                "error": {
                    "code": -32000,
                    "message": "Authentication required: log in first.",
                    "data": {
                        "authMethods": [
                            {
                                "id": "tty",
                                "name": "Terminal login",
                                "_meta": {"type": "terminal", "args": ["--login"]},
                            }
                        ]
                    },
                }
            }
        ]
    },
}


async def test_every_auth_method_type(tmp_path: Path, workspace: Path) -> None:
    agent = scripted(tmp_path, AUTH)
    editor = await editor_with(tmp_path, workspace, agent)
    err = await error_of(editor.new_session())
    assert err.code == p.AUTH_REQUIRED
    assert "set KEY_A in the agent's env" in err.message and "Login with ChatGPT" in err.message
    data = err.data
    assert [m["id"] for m in data["authMethods"]] == ["chatgpt", "key", "tty"]
    assert data["loginTerminal"]["methodId"] == "tty"
    assert data["loginTerminal"]["args"] == [*agent["args"], "--login"]
    assert data["message"] == "Authentication required: log in first."
    # env_var: the editor learns which variables to set; nothing is sent to the agent
    answer = await editor.acp(p.ACP_AUTHENTICATE, {"agent": "a", "methodId": "key"})
    assert answer["envVars"] == [{"name": "KEY_A"}] and "KEY_A" in answer["message"]
    # terminal (from the error's _meta): the login command for the editor's terminal
    answer = await editor.acp(p.ACP_AUTHENTICATE, {"agent": "a", "methodId": "tty"})
    assert answer["terminal"]["command"] == agent["command"]
    # agent type: ACP authenticate
    assert await editor.acp(p.ACP_AUTHENTICATE, {"agent": "a", "methodId": "chatgpt"}) == {}
    sent = [m for m in received(tmp_path) if m.get("method") == "authenticate"]
    assert [m["params"]["methodId"] for m in sent] == ["chatgpt"]
    listed = next(x for x in (await editor.acp(p.ACP_LIST_AGENTS))["agents"] if x["name"] == "a")
    assert {m["id"] for m in listed["authMethods"]} == {"chatgpt", "key", "tty"}
    await editor.shutdown_session()
    assert not editor.schema_errors, editor.schema_errors


async def test_a_slow_start_shows_progress_and_its_own_limit(
    tmp_path: Path, workspace: Path
) -> None:
    slow = scripted(tmp_path, {"start": [{"sleep": 30}]}, startTimeout=1.5, requestTimeout=30)
    options = with_fast_demo(
        {"agents": {"a": slow, "quick": scripted(tmp_path, {})}, "defaultAgent": "a"}
    )
    editor = await start_editor(tmp_path, workspace, "visual_studio_code", options)
    err = await error_of(editor.new_session())
    assert err.code == p.AGENT_UNAVAILABLE
    assert "within 1.5s (startTimeout" in err.message
    assert "Starting a" in editor.progress_titles()
    # the server keeps serving, and a healthy agent starts fine after it
    snap = await editor.new_session(agent="quick")
    assert snap["agent"] == "quick"
    await editor.shutdown_session()
