"""The bridge against real ACP agents nobody on this team wrote.

Python SDK 0.12.1 examples (echo_agent.py, agent.py) and the TypeScript SDK 1.9.0 example
agent (tool calls, locations, permission, cancel). Every message the bridge sends them is
validated against the official ACP v1 schema.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import start_editor, with_fast_demo
from tests.support.lsp_editor import TestEditor, pick
from tests.support.peers import (
    permission_answers,
    python_example,
    sent_by_client,
    ts_agent,
    validate_log,
)

pytestmark = pytest.mark.timeout(60)


async def _editor(
    tmp_path: Path, workspace: Path, agent: dict[str, Any], profile: str = "neovim"
) -> TestEditor:
    options = with_fast_demo({"agents": {"peer": agent}, "defaultAgent": "peer"})
    return await start_editor(tmp_path, workspace, profile, options)


async def _done(editor: TestEditor, log: Path) -> None:
    await editor.shutdown_session()
    assert not editor.schema_errors, editor.schema_errors
    assert validate_log(log) > 0


@pytest.mark.parametrize("profile", ["visual_studio_code", "neovim"])
async def test_echo_agent_streams_and_keeps_meta(
    tmp_path: Path, workspace: Path, profile: str
) -> None:
    log = tmp_path / "echo.log"
    editor = await _editor(tmp_path, workspace, python_example("echo_agent.py", log), profile)
    snap = await editor.new_session()
    sid = snap["sessionId"]
    result = await editor.prompt(sid, "hello from the editor")
    assert result == {"stopReason": "end_turn"}
    model = editor.sessions[sid]
    assert model.message_texts() == ["hello from the editor", "hello from the editor"]
    final = await editor.acp("acp/getSession", {"sessionId": sid})
    agent_msg = final["messages"][1]
    assert agent_msg["role"] == "agent"
    # the agent's _meta on the content block reaches the editor unchanged (raw JSON kept)
    assert agent_msg["content"][0].get("_meta") == {"echo": True}
    assert [s["status"] for s in editor.statuses[sid]] == ["running", "idle"]
    await _done(editor, log)


async def test_example_agent_echoes_resource_links(tmp_path: Path, workspace: Path) -> None:
    log = tmp_path / "example.log"
    editor = await _editor(tmp_path, workspace, python_example("agent.py", log))
    agents = await editor.acp("acp/listAgents")
    peer = next(a for a in agents["agents"] if a["name"] == "peer")
    assert peer["protocol"] == "acp"
    snap = await editor.new_session()
    sid = snap["sessionId"]
    link = {"type": "resource_link", "uri": (workspace / "README.md").as_uri(), "name": "README.md"}
    await editor.prompt(sid, [{"type": "text", "text": "see this"}, link])
    final = await editor.acp("acp/getSession", {"sessionId": sid})
    agent_blocks = [b for m in final["messages"] if m["role"] == "agent" for b in m["content"]]
    assert agent_blocks[0]["text"].startswith("Client sent:")
    assert link in agent_blocks, agent_blocks
    # once started, the agent shows as running with its own title
    agents = await editor.acp("acp/listAgents")
    peer = next(a for a in agents["agents"] if a["name"] == "peer")
    assert peer["running"] is True
    await _done(editor, log)


async def test_example_agent_without_list_support(tmp_path: Path, workspace: Path) -> None:
    """session/list is not advertised: acp/listSessions still lists the live sessions."""
    log = tmp_path / "example.log"
    editor = await _editor(tmp_path, workspace, python_example("agent.py", log))
    snap = await editor.new_session()
    listed = await editor.acp("acp/listSessions", {})
    assert [s["sessionId"] for s in listed["sessions"]] == [snap["sessionId"]]
    assert listed["sessions"][0]["live"] is True
    await _done(editor, log)


@pytest.mark.parametrize("profile", ["visual_studio_code", "neovim"])
async def test_ts_agent_permission_allowed(tmp_path: Path, workspace: Path, profile: str) -> None:
    log = tmp_path / "ts.log"
    editor = await _editor(tmp_path, workspace, ts_agent(log), profile)
    editor.permission_policy = pick("allow_once")
    snap = await editor.new_session()
    sid = snap["sessionId"]
    result = await editor.prompt(sid, "change the config")
    assert result["stopReason"] == "end_turn"
    calls = editor.sessions[sid].tool_calls
    assert calls["call_1"]["status"] == "completed"
    assert calls["call_1"]["kind"] == "read"
    assert calls["call_2"]["status"] == "completed"
    assert len(editor.permission_requests) == 1
    asked = editor.permission_requests[0]
    assert asked["toolCall"]["toolCallId"] == "call_2"
    assert {o["kind"] for o in asked["options"]} == {"allow_once", "reject_once"}
    # the agent's locations do not exist: follow-along must not jump anywhere
    assert editor.shown_documents == []
    statuses = editor.status_values(sid)
    assert statuses[0] == "running" and "awaiting_permission" in statuses and statuses[-1] == "idle"
    await _done(editor, log)


async def test_ts_agent_permission_rejected(tmp_path: Path, workspace: Path) -> None:
    log = tmp_path / "ts.log"
    editor = await _editor(tmp_path, workspace, ts_agent(log))
    editor.permission_policy = pick("reject_once")
    sid = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(sid, "change the config"))["stopReason"] == "end_turn"
    # the agent leaves call_2 pending forever; the bridge finalises it when the turn ends
    assert editor.sessions[sid].tool_calls["call_2"]["status"] == "cancelled"
    assert permission_answers(log) == [{"outcome": "selected", "optionId": "reject"}]
    await _done(editor, log)


async def test_ts_agent_permission_dismissed(tmp_path: Path, workspace: Path) -> None:
    """An editor that dismisses the prompt answers reject_once (offered), never approval."""
    log = tmp_path / "ts.log"
    editor = await _editor(tmp_path, workspace, ts_agent(log))
    editor.permission_policy = lambda _params: {"outcome": {"outcome": "cancelled"}}
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "change the config")
    assert permission_answers(log) == [{"outcome": "selected", "optionId": "reject"}]
    assert editor.sessions[sid].tool_calls["call_2"]["status"] != "completed"
    await _done(editor, log)


async def test_ts_agent_plain_editor_gets_message_request(tmp_path: Path, workspace: Path) -> None:
    """Editors without acp/requestPermission get window/showMessageRequest, one action per option."""
    log = tmp_path / "ts.log"
    options = with_fast_demo({"agents": {"peer": ts_agent(log)}, "defaultAgent": "peer"})
    editor = await start_editor(tmp_path, workspace, "neovim", options, rich=False)
    editor.message_policy = lambda params: "Allow this change"
    sid = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(sid, "go"))["stopReason"] == "end_turn"
    assert editor.permission_requests == []
    request = editor.message_requests[0]
    assert [a.title for a in request.actions or []] == ["Allow this change", "Skip this change"]
    assert "Modifying critical configuration file" in request.message
    assert editor.sessions[sid].tool_calls["call_2"]["status"] == "completed"
    await _done(editor, log)


async def test_ts_agent_cancel_mid_turn(tmp_path: Path, workspace: Path) -> None:
    log = tmp_path / "ts.log"
    editor = await _editor(tmp_path, workspace, ts_agent(log))
    sid = (await editor.new_session())["sessionId"]
    turn = asyncio.ensure_future(editor.prompt(sid, "go"))
    await editor.wait_for(lambda: "call_1" in editor.sessions[sid].tool_calls, timeout=10)
    await editor.acp("acp/cancel", {"sessionId": sid})
    result = await turn
    assert result["stopReason"] == "cancelled"
    assert "cancelling" in editor.status_values(sid)
    assert editor.status_values(sid)[-1] == "idle"
    call_1 = editor.sessions[sid].tool_calls["call_1"]
    assert call_1["status"] in ("cancelled", "completed")
    cancels = [m for m in sent_by_client(log) if m.get("method") == "session/cancel"]
    assert len(cancels) == 1
    # the session stays usable
    editor.permission_policy = pick("allow_once")
    assert (await editor.prompt(sid, "again"))["stopReason"] == "end_turn"
    await _done(editor, log)


async def test_ts_agent_cancel_while_permission_pending(tmp_path: Path, workspace: Path) -> None:
    """The agent answers end_turn after a cancelled permission; the turn is still cancelled."""
    log = tmp_path / "ts.log"
    editor = await _editor(tmp_path, workspace, ts_agent(log))
    never: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    editor.permission_policy = lambda _params: never
    sid = (await editor.new_session())["sessionId"]
    turn = asyncio.ensure_future(editor.prompt(sid, "go"))
    await editor.wait_for(lambda: bool(editor.permission_requests), timeout=15)
    assert editor.status_values(sid)[-1] == "awaiting_permission"
    await editor.acp("acp/cancel", {"sessionId": sid})
    result = await turn
    assert result["stopReason"] == "cancelled"
    assert permission_answers(log) == [{"outcome": "cancelled"}]
    assert editor.sessions[sid].tool_calls["call_2"]["status"] == "cancelled"
    await _done(editor, log)
