"""Recovery: the bridge's state can be re-read at any time, and a crashed session comes back.

``acp/getSession`` at any moment (mid-turn with a prompt open, after the turn, after the agent
died) equals what an editor rebuilt from the notifications it was sent. After a crash,
``acp/loadSession`` brings the conversation back under the same session id: replayed by an
agent that supports ``session/load`` (the demo agent, persisting to disk), or kept from what
the bridge knew for an agent that can only ``session/resume``.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from acp_lsp import protocol as p
from tests.reliability.conftest import (
    Bridge,
    demo_agent,
    error_of,
    read_pids,
    scripted,
    wait_gone,
)
from tests.support.editor_model import view_of
from tests.support.lsp_editor import TestEditor

pytestmark = pytest.mark.timeout(90)


async def assert_in_sync(editor: TestEditor, sid: str) -> dict[str, Any]:
    snapshot: dict[str, Any] = await editor.acp("acp/getSession", {"sessionId": sid})
    model = editor.sessions[sid]
    assert model.seq == snapshot["seq"]
    assert model.view() == view_of(snapshot)
    return snapshot


def conversation(snapshot: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (m["role"], "".join(b.get("text", "") for b in m["content"]))
        for m in snapshot["messages"]
        if m["role"] != "thought"
    ]


RICH_TURN: list[dict[str, Any]] = [
    {
        "update": {
            "sessionUpdate": "agent_thought_chunk",
            "content": {"type": "text", "text": "hmm"},
        }
    },
    {
        "update": {
            "sessionUpdate": "plan",
            "entries": [{"content": "a", "priority": "high", "status": "pending"}],
        }
    },
    {
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "Reading "},
        }
    },
    {
        "update": {
            "sessionUpdate": "tool_call",
            "toolCallId": "r1",
            "title": "Read app.py",
            "kind": "read",
            "status": "in_progress",
            "locations": [{"path": "{cwd}/src/app.py", "line": 2}],
        }
    },
    {
        "update": {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "r1",
            "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "42 lines"}}],
        }
    },
    {"update": {"sessionUpdate": "_vendor_note", "x": 1}},
    {"update": {"sessionUpdate": "usage_update", "used": 10, "size": 100}},
    {"update": {"sessionUpdate": "session_info_update", "title": "Reading app"}},
    {
        "request": "session/request_permission",
        "params": {
            "sessionId": "{sessionId}",
            "toolCall": {
                "toolCallId": "w1",
                "title": "Edit app.py",
                "kind": "edit",
                "status": "pending",
            },
            "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
        },
    },
    {
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "done."},
        }
    },
]


async def test_get_session_matches_the_editor_at_every_point(
    bridge: Bridge, tmp_path: Path
) -> None:
    pids = tmp_path / "agent.pids"
    rich = {"on": {"session/prompt#1": RICH_TURN, "session/prompt#2": [{"sleep": 30}]}}
    editor = await bridge.start({"agent": scripted(rich, pids=pids)})
    gate: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    editor.permission_policy = lambda _params: gate
    sid = (await editor.new_session())["sessionId"]
    await assert_in_sync(editor, sid)

    turn = asyncio.ensure_future(editor.prompt(sid, "read and edit"))
    await editor.wait_for(lambda: bool(editor.permission_requests))
    mid = await assert_in_sync(editor, sid)  # mid-turn, a prompt open
    assert mid["status"] == "awaiting_permission"
    assert mid["toolCalls"][-1]["toolCallId"] == "w1"
    gate.set_result({"outcome": {"outcome": "selected", "optionId": "ok"}})
    assert (await turn)["stopReason"] == "end_turn"
    after = await assert_in_sync(editor, sid)
    assert after["status"] == "idle" and after["title"] == "Reading app"
    # agent text without messageId on each side of a tool call reads as two messages
    assert conversation(after) == [
        ("user", "read and edit"),
        ("agent", "Reading "),
        ("agent", "done."),
    ]

    # the agent dies mid-turn: the state is still there to read, and still in sync
    turn = asyncio.ensure_future(editor.prompt(sid, "second"))
    await editor.wait_for(lambda: editor.status_values(sid)[-1:] == ["running"])
    os.kill(read_pids(pids)[0], signal.SIGKILL)
    assert (await error_of(turn))["code"] == p.AGENT_UNAVAILABLE
    dead = await assert_in_sync(editor, sid)
    assert dead["status"] == "failed"
    assert conversation(dead)[-1] == ("user", "second")


async def test_load_session_brings_the_conversation_back_after_a_crash(
    bridge: Bridge, tmp_path: Path, workspace: Path
) -> None:
    pids = tmp_path / "demo.pids"
    agent = demo_agent(pidfile=pids, state_dir=tmp_path / "demo-state")
    editor = await bridge.start({"demo": agent})
    sid = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(sid, "explain src/app.py"))["stopReason"] == "end_turn"
    before = await assert_in_sync(editor, sid)
    assert len(before["messages"]) >= 2 and before["toolCalls"]

    os.kill(read_pids(pids)[0], signal.SIGKILL)
    await editor.wait_for(lambda: editor.status_values(sid)[-1:] == ["failed"])
    assert not await wait_gone(read_pids(pids)[:1])
    assert (await error_of(editor.prompt(sid, "are you there?")))["code"] == p.AGENT_UNAVAILABLE

    loaded = await editor.acp("acp/loadSession", {"agent": "demo", "sessionId": sid})
    assert loaded["sessionId"] == sid and loaded["status"] == "idle"
    assert conversation(loaded)[: len(conversation(before))] == conversation(before)
    assert [c["toolCallId"] for c in loaded["toolCalls"]] == [
        c["toolCallId"] for c in before["toolCalls"]
    ]
    assert loaded["seq"] >= before["seq"]
    editor.adopt(loaded)
    # the conversation goes on where it was
    assert (await editor.prompt(sid, "now plan the next step"))["stopReason"] == "end_turn"
    final = await assert_in_sync(editor, sid)
    assert conversation(final)[0] == ("user", "explain src/app.py")
    assert ("user", "now plan the next step") in conversation(final)
    assert len(read_pids(pids)) == 2


async def test_resume_only_agent_keeps_what_the_bridge_knew(bridge: Bridge, tmp_path: Path) -> None:
    """An agent without session/load: after a crash the snapshot holds what the bridge saw."""
    pids = tmp_path / "agent.pids"
    init = {
        "protocolVersion": 1,
        "agentInfo": {"name": "resumer", "version": "1"},
        "agentCapabilities": {"loadSession": False, "sessionCapabilities": {"resume": {}}},
    }
    talk = {
        "initialize": init,
        "on": {
            "session/prompt": [
                {
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": "noted"},
                    }
                }
            ]
        },
    }
    editor = await bridge.start({"agent": scripted(talk, pids=pids)})
    sid = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(sid, "remember 42"))["stopReason"] == "end_turn"
    before = await assert_in_sync(editor, sid)
    os.kill(read_pids(pids)[0], signal.SIGKILL)
    await editor.wait_for(lambda: editor.status_values(sid)[-1:] == ["failed"])
    loaded = await editor.acp("acp/loadSession", {"agent": "agent", "sessionId": sid})
    assert loaded["sessionId"] == sid and loaded["status"] == "idle"
    assert (
        conversation(loaded)
        == conversation(before)
        == [
            ("user", "remember 42"),
            ("agent", "noted"),
        ]
    )
    editor.adopt(loaded)
    assert (await editor.prompt(sid, "and?"))["stopReason"] == "end_turn"
    await assert_in_sync(editor, sid)
