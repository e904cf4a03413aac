"""An agent that crashes: at start, mid-turn, and while a permission prompt is open.

What the user must see each time: the request ends with a clear -32005 error carrying the
agent's stderr, an open prompt is withdrawn, the session is marked ``failed``, other work
goes on (a new session works), and one ``acp/restartAgent`` brings the agent back.
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
    alive,
    error_of,
    eventually,
    read_pids,
    responses,
    scripted,
    wait_gone,
)

pytestmark = pytest.mark.timeout(60)

CHUNK = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "working"}}
HEALTHY: dict[str, Any] = {}  # default answers: session/prompt -> end_turn


async def agent_names(editor: Any) -> dict[str, Any]:
    listed = await editor.acp("acp/listAgents")
    return {a["name"]: a for a in listed["agents"]}


@pytest.mark.parametrize(
    "crash",
    [
        {"start": [{"stderr": "fatal: model file missing\n"}, {"exit": 3}]},
        {"on": {"initialize": [{"stderr": "fatal: model file missing\n"}, {"exit": 3}]}},
    ],
    ids=["before-initialize", "during-initialize"],
)
async def test_crash_at_start(bridge: Bridge, tmp_path: Path, crash: dict[str, Any]) -> None:
    pids = tmp_path / "broken.pids"
    editor = await bridge.start(
        {
            "good": scripted(HEALTHY, pids=tmp_path / "good.pids"),
            "broken": scripted(crash, HEALTHY, pids=pids),
        }
    )
    error = await error_of(editor.acp("acp/newSession", {"agent": "broken"}))
    assert error["code"] == p.AGENT_UNAVAILABLE
    assert "broken" in error["message"] and "failed to start" in error["message"]
    assert "fatal: model file missing" in error["data"]["stderr"]
    agents = await agent_names(editor)
    assert agents["broken"]["running"] is False
    assert "error" in agents["broken"]
    # the server and the other agent are unaffected
    sid = (await editor.new_session(agent="good"))["sessionId"]
    assert (await editor.prompt(sid, "hi"))["stopReason"] == "end_turn"
    # one request brings the broken agent back (its second start behaves)
    assert await editor.acp("acp/restartAgent", {"agent": "broken"}) == {}
    assert (await agent_names(editor))["broken"]["running"] is True
    sid = (await editor.new_session(agent="broken"))["sessionId"]
    assert (await editor.prompt(sid, "hi"))["stopReason"] == "end_turn"
    assert len(read_pids(pids)) == 2
    assert not alive(read_pids(pids)[0])


async def test_crash_mid_turn(bridge: Bridge, tmp_path: Path) -> None:
    pids = tmp_path / "agent.pids"
    crashing = {
        "on": {
            "session/prompt": [
                {"update": CHUNK},
                {"stderr": "panic: index out of range\n"},
                {"sleep": 0.1},
                {"exit": 9},
            ]
        }
    }
    editor = await bridge.start({"agent": scripted(crashing, HEALTHY, pids=pids)})
    other = (await editor.new_session())["sessionId"]
    sid = (await editor.new_session())["sessionId"]

    error = await error_of(editor.prompt(sid, "do it"))
    assert error["code"] == p.AGENT_UNAVAILABLE
    assert "exited" in error["message"]
    assert "panic: index out of range" in error["data"]["stderr"]
    # what the agent said before it died reached the editor
    assert editor.sessions[sid].message_texts() == ["do it", "working"]
    for session_id in (sid, other):  # every live session of that agent failed
        last = editor.statuses[session_id][-1]
        assert last["status"] == "failed"
        assert last["error"]["code"] == p.AGENT_UNAVAILABLE
        assert "panic" in last["error"]["stderr"]
    assert editor.status_values(sid) == ["running", "failed"]
    snapshot = await editor.acp("acp/getSession", {"sessionId": sid})
    assert snapshot["status"] == "failed"
    retry = await error_of(editor.prompt(sid, "again"))
    assert retry["code"] == p.AGENT_UNAVAILABLE and "restartAgent" in retry["message"]
    assert any("exited" in m.message for m in editor.log_messages)

    # a new session works: the agent is started again on use
    fresh = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(fresh, "hello"))["stopReason"] == "end_turn"
    assert not alive(read_pids(pids)[0])


async def test_crash_while_permission_prompt_open(bridge: Bridge, tmp_path: Path) -> None:
    pids, log = tmp_path / "agent.pids", tmp_path / "agent.log"
    asking = {
        "on": {
            "session/prompt": [
                {
                    "update": {
                        "sessionUpdate": "tool_call",
                        "toolCallId": "rm",
                        "title": "rm -rf build",
                        "kind": "execute",
                        "status": "pending",
                    }
                },
                {
                    "request": "session/request_permission",
                    "id": "perm",
                    "params": {
                        "sessionId": "{sessionId}",
                        "toolCall": {"toolCallId": "rm"},
                        "options": [
                            {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
                        ],
                    },
                },
            ]
        }
    }
    editor = await bridge.start({"agent": scripted(asking, HEALTHY, pids=pids, log=log)})
    prompts: list[asyncio.Future[Any]] = []

    def never_answer(_params: Any) -> asyncio.Future[Any]:
        prompts.append(asyncio.get_running_loop().create_future())
        return prompts[-1]

    editor.permission_policy = never_answer
    sid = (await editor.new_session())["sessionId"]
    turn = asyncio.ensure_future(editor.prompt(sid, "clean up"))
    await editor.wait_for(lambda: editor.status_values(sid)[-1:] == ["awaiting_permission"])
    os.kill(read_pids(pids)[0], signal.SIGKILL)  # the agent dies with the prompt open

    error = await error_of(turn)
    assert error["code"] == p.AGENT_UNAVAILABLE
    # the prompt was withdrawn from the editor ($/cancelRequest cancels its handler)
    await eventually(lambda: prompts[0].cancelled(), what="the prompt to be withdrawn")
    assert editor.status_values(sid)[-1] == "failed"
    call = editor.sessions[sid].tool_calls["rm"]
    assert call["status"] not in ("pending", "in_progress", "completed")
    assert "perm" not in responses(log)  # nobody answered for the user
    assert not await wait_gone(read_pids(pids)[:1])

    # restart with one request; the failed session comes back with acp/loadSession
    assert await editor.acp("acp/restartAgent", {"agent": "agent"}) == {}
    seen = editor.sessions[sid].seq
    loaded = await editor.acp("acp/loadSession", {"agent": "agent", "sessionId": sid})
    assert loaded["sessionId"] == sid and loaded["status"] == "idle"
    assert loaded["seq"] >= seen  # an editor keeping its model drops nothing new
    assert (await editor.prompt(sid, "again"))["stopReason"] == "end_turn"
    assert len(read_pids(pids)) == 2


async def test_crash_stops_the_agents_terminals(
    bridge: Bridge, tmp_path: Path, workspace: Path
) -> None:
    """Nobody can release a dead agent's terminals: the bridge stops them itself."""
    starts_terminal = {
        "on": {
            "session/prompt": [
                {
                    "request": "terminal/create",
                    "params": {
                        "sessionId": "{sessionId}",
                        "command": "/bin/sh",
                        "args": ["-c", "echo $$ > term.pid; exec sleep 300"],
                    },
                },
                {"sleep": 0.5},
                {"exit": 1},
            ]
        }
    }
    editor = await bridge.start({"agent": scripted(starts_terminal, pids=tmp_path / "p")})
    sid = (await editor.new_session())["sessionId"]
    error = await error_of(editor.prompt(sid, "serve"))
    assert error["code"] == p.AGENT_UNAVAILABLE
    terminal_pid = int((workspace / "term.pid").read_text())
    assert not await wait_gone([terminal_pid])
    await editor.wait_for(lambda: any("exitStatus" in m for m in editor.terminal_messages))
