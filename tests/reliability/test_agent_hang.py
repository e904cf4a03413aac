"""An agent that hangs, ignores session/cancel, freezes, or never answers a control request.

A turn can always be cancelled: the agent gets ``session/cancel`` once; if it keeps going past
``cancelGraceS`` the turn still ends ``cancelled`` and the agent is stopped (SIGKILL if it
ignores SIGTERM). A control request without an answer fails after ``requestTimeout``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from acp_lsp import protocol as p
from tests.reliability.conftest import (
    Bridge,
    alive,
    error_of,
    read_pids,
    received,
    scripted,
    wait_gone,
)
from tests.support.lsp_editor import TestEditor

pytestmark = pytest.mark.timeout(60)

# requestTimeout in these tests; it also bounds `initialize`, so it leaves room for a slow
# interpreter start on a loaded machine
CONTROL_TIMEOUT_S = 3

STARTED = {
    "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "on it"}}
}


async def start_turn(editor: TestEditor, sid: str) -> asyncio.Future[dict[str, Any]]:
    turn = asyncio.ensure_future(editor.prompt(sid, "long job"))
    await editor.wait_for(lambda: editor.sessions[sid].message_texts()[-1:] == ["on it"])
    return turn


async def test_cancel_cuts_a_cooperative_turn_short(bridge: Bridge, tmp_path: Path) -> None:
    pids, log = tmp_path / "agent.pids", tmp_path / "agent.log"
    sleepy = {"on": {"session/prompt": [STARTED, {"sleep": 30}]}}
    editor = await bridge.start({"agent": scripted(sleepy, pids=pids, log=log)})
    sid = (await editor.new_session())["sessionId"]
    turn = await start_turn(editor, sid)
    assert await editor.acp("acp/cancel", {"sessionId": sid}) == {}
    assert (await turn)["stopReason"] == "cancelled"
    assert editor.status_values(sid) == ["running", "cancelling", "idle"]
    assert editor.statuses[sid][-1]["stopReason"] == "cancelled"
    assert len(received(log, "session/cancel")) == 1
    assert alive(read_pids(pids)[0])  # a cooperative agent is left running
    # the session goes on; a second cancel after the turn is a no-op
    assert await editor.acp("acp/cancel", {"sessionId": sid}) == {}


async def test_lsp_cancel_request_cancels_the_turn(bridge: Bridge, tmp_path: Path) -> None:
    """$/cancelRequest on a pending acp/prompt cancels the turn like acp/cancel."""
    log = tmp_path / "agent.log"
    sleepy = {"on": {"session/prompt": [STARTED, {"sleep": 30}]}}
    editor = await bridge.start({"agent": scripted(sleepy, pids=tmp_path / "p", log=log)})
    sid = (await editor.new_session())["sessionId"]
    turn = asyncio.ensure_future(
        editor.protocol.send_request_async(
            "acp/prompt", {"sessionId": sid, "prompt": "long job"}, msg_id="prompt-1"
        )
    )
    await editor.wait_for(lambda: editor.sessions[sid].message_texts()[-1:] == ["on it"])
    editor.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="prompt-1"))
    try:
        result = await asyncio.wait_for(turn, 20)
        assert result == {"stopReason": "cancelled"}
    except Exception as exc:  # the LSP answer for a cancelled request is also allowed
        assert getattr(exc, "code", None) == p.REQUEST_CANCELLED, exc
    await editor.wait_for(lambda: editor.status_values(sid)[-1:] == ["idle"])
    assert len(received(log, "session/cancel")) == 1


@pytest.mark.parametrize("ignore_term", [False, True], ids=["obeys-sigterm", "ignores-sigterm"])
async def test_agent_ignoring_cancel_is_stopped(
    bridge: Bridge, tmp_path: Path, ignore_term: bool
) -> None:
    pids, log = tmp_path / "agent.pids", tmp_path / "agent.log"
    stubborn = {"ignore_cancel": True, "on": {"session/prompt": [STARTED, {"sleep": 300}]}}
    agent = scripted(stubborn, {}, pids=pids, log=log, ignore_term=ignore_term)
    editor = await bridge.start({"agent": agent})
    sid = (await editor.new_session())["sessionId"]
    turn = await start_turn(editor, sid)
    first = read_pids(pids)[0]
    await editor.acp("acp/cancel", {"sessionId": sid})
    assert (await turn)["stopReason"] == "cancelled"
    assert not await wait_gone([first])
    assert any("ignored session/cancel" in m.message for m in editor.log_messages)
    # the agent was stopped, so its sessions failed (acp/loadSession brings them back)
    assert editor.status_values(sid) == ["running", "cancelling", "failed"]
    assert "was stopped" in editor.statuses[sid][-1]["error"]["message"]
    assert not any("exited" in m.message for m in editor.log_messages)  # not a crash
    # the agent is back (restarted) and new work goes through
    fresh = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(fresh, "hi"))["stopReason"] == "end_turn"


async def test_agent_answering_end_turn_after_cancel_still_ends_cancelled(
    bridge: Bridge, tmp_path: Path
) -> None:
    pids = tmp_path / "agent.pids"
    late = {"ignore_cancel": True, "on": {"session/prompt": [STARTED, {"sleep": 0.2}]}}
    editor = await bridge.start({"agent": scripted(late, pids=pids)})
    sid = (await editor.new_session())["sessionId"]
    turn = await start_turn(editor, sid)
    await editor.acp("acp/cancel", {"sessionId": sid})
    assert (await turn)["stopReason"] == "cancelled"
    assert editor.status_values(sid)[-1] == "idle"
    assert alive(read_pids(pids)[0])  # it answered within the grace period: not stopped
    assert (await editor.prompt(sid, "again"))["stopReason"] == "end_turn"


async def test_frozen_agent_turn_cancels(bridge: Bridge, tmp_path: Path) -> None:
    """The whole agent process blocks (reads nothing): cancel still ends the turn."""
    pids = tmp_path / "agent.pids"
    frozen = {"on": {"session/prompt": [STARTED, {"freeze": True}]}}
    editor = await bridge.start({"agent": scripted(frozen, {}, pids=pids)})
    sid = (await editor.new_session())["sessionId"]
    turn = await start_turn(editor, sid)
    await editor.acp("acp/cancel", {"sessionId": sid})
    assert (await turn)["stopReason"] == "cancelled"
    assert not await wait_gone(read_pids(pids)[:1])


@pytest.mark.parametrize(
    ("method", "call"),
    [
        ("session/new#2", lambda ed, sid: ed.acp("acp/newSession", {})),
        (
            "session/set_mode#1",
            lambda ed, sid: ed.acp("acp/setMode", {"sessionId": sid, "modeId": "x"}),
        ),
        (
            "session/set_config_option#1",
            lambda ed, sid: ed.acp(
                "acp/setConfigOption", {"sessionId": sid, "configId": "c", "value": True}
            ),
        ),
    ],
    ids=["newSession", "setMode", "setConfigOption"],
)
async def test_unanswered_control_request_times_out(
    bridge: Bridge, tmp_path: Path, method: str, call: Any
) -> None:
    silent = {"on": {method: [{"hang": True}]}}
    agent = scripted(silent, pids=tmp_path / "p", request_timeout=CONTROL_TIMEOUT_S)
    editor = await bridge.start({"agent": agent})
    sid = (await editor.new_session())["sessionId"]
    error = await error_of(call(editor, sid))
    assert error["code"] == p.AGENT_ERROR
    assert f"did not answer {method.split('#')[0]} within {CONTROL_TIMEOUT_S}s" in error["message"]
    # the agent and the session are still usable
    assert (await editor.prompt(sid, "hi"))["stopReason"] == "end_turn"


async def test_unanswered_session_list_falls_back_to_live_sessions(
    bridge: Bridge, tmp_path: Path
) -> None:
    silent = {"on": {"session/list": [{"hang": True}]}}
    editor = await bridge.start(
        {"agent": scripted(silent, pids=tmp_path / "p", request_timeout=CONTROL_TIMEOUT_S)}
    )
    sid = (await editor.new_session())["sessionId"]
    listed = await editor.acp("acp/listSessions", {})
    assert [(s["sessionId"], s["live"]) for s in listed["sessions"]] == [(sid, True)]
    # why the agent's own sessions are missing is said, not taken for "it has none"
    assert any(
        "listing 'agent' sessions" in m.message and "session/list" in m.message
        for m in editor.log_messages
    ), [m.message for m in editor.log_messages]


async def test_agent_that_never_answers_initialize(bridge: Bridge, tmp_path: Path) -> None:
    pids = tmp_path / "agent.pids"
    mute = {"on": {"initialize": [{"stderr": "loading weights...\n"}, {"hang": True}]}}
    editor = await bridge.start(
        {"agent": scripted(mute, {}, pids=pids, request_timeout=CONTROL_TIMEOUT_S)}
    )
    error = await error_of(editor.acp("acp/newSession", {}))
    assert error["code"] == p.AGENT_UNAVAILABLE
    assert "initialize" in error["message"]
    assert f"within {CONTROL_TIMEOUT_S}s" in error["message"]
    assert "loading weights" in error["data"]["stderr"]
    assert not await wait_gone(read_pids(pids)[:1])  # the half-started agent is not left behind
    sid = (await editor.new_session())["sessionId"]  # its next start behaves
    assert (await editor.prompt(sid, "hi"))["stopReason"] == "end_turn"
