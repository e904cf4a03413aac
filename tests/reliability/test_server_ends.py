"""Every orderly end of the server keeps the session history and takes its children along.

The server is ended right after a prompt's answer, well inside the history recorder's flush
interval (250 ms), in each way an editor ends it: ``shutdown`` + ``exit``, ``exit`` alone,
its pipe closing, SIGTERM, SIGHUP, SIGINT. A second server on the same data dir
(ACP_LSP_DATA_DIR) must list the session and read back the whole turn; every agent and
terminal process the first server started must be gone, checked by pid. Also: the run's only
session (the store not opened yet), a turn the end cuts off, and the final flush against a
busy store thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from acp_lsp.history.recorder import Recorder
from acp_lsp.history.store import HistoryStore
from acp_lsp.session import Session
from tests.reliability.conftest import (
    alive,
    read_pids,
    record_figure,
    scripted,
    server_env,
    wait_gone,
)
from tests.reliability.raw_lsp import RawLspClient

pytestmark = pytest.mark.timeout(60)

JsonObject = dict[str, Any]
BOUND_S = 10.0
TERMINAL_COMMAND = "sleep 300 & echo $! > bg.pid; echo $$ > term.pid; exec sleep 300"


def _chunk(kind: str, text: str) -> JsonObject:
    return {"update": {"sessionUpdate": kind, "content": {"type": "text", "text": text}}}


# The turn that must not be lost: a thought, a tool call and its result, the answer.
TURN: list[JsonObject] = [
    _chunk("agent_thought_chunk", "thinking about zebras"),
    {
        "update": {
            "sessionUpdate": "tool_call",
            "toolCallId": "t1",
            "title": "Count the zebras",
            "kind": "other",
            "status": "pending",
        }
    },
    {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}},
    _chunk("agent_message_chunk", "There are "),
    _chunk("agent_message_chunk", "three zebras."),
]

# The first prompt of the agent starts a terminal (and a background grandchild) and leaves it
# running; every later prompt is TURN.
SCRIPT: JsonObject = {
    "on": {
        "session/prompt#1": [
            {
                "request": "terminal/create",
                "params": {
                    "sessionId": "{sessionId}",
                    "command": "/bin/sh",
                    "args": ["-c", TERMINAL_COMMAND],
                },
            },
            _chunk("agent_message_chunk", "started"),
        ],
        "session/prompt": TURN,
    }
}


async def _end(client: RawLspClient, how: str) -> int:
    began = asyncio.get_running_loop().time()
    code = await _end_it(client, how)
    record_figure(f"server_end_s[{how}]", round(asyncio.get_running_loop().time() - began, 3))
    return code


async def _end_it(client: RawLspClient, how: str) -> int:
    if how == "shutdown-exit":
        assert await client.call("shutdown") is None
        client.notify("exit")
    elif how == "shutdown-exit-unanswered":  # exit sent before shutdown's answer came
        client.request("shutdown")
        client.notify("exit")
    elif how == "exit":
        client.notify("exit")
    elif how == "stdin-eof":
        client.close_stdin()
    else:
        client.proc.send_signal(getattr(signal, how))
    return await client.wait_exit(BOUND_S + 5)


# The LSP spec: 0 after shutdown, 1 for an exit without it; a signal: 128 + its number.
EXIT_CODES = {
    "shutdown-exit": 0,
    "shutdown-exit-unanswered": 0,
    "exit": 1,
    "stdin-eof": 0,
    "SIGTERM": 128 + signal.SIGTERM,
    "SIGHUP": 128 + signal.SIGHUP,
    "SIGINT": 128 + signal.SIGINT,
}


def _store_closed(tmp_path: Path) -> bool:
    """SQLite folds the write-ahead log into the file and removes it at the last close."""
    data = tmp_path / "data"
    return (data / "history.sqlite3").exists() and not (data / "history.sqlite3-wal").exists()


async def _reopened(
    tmp_path: Path, workspace: Path, check: Callable[[RawLspClient], Awaitable[None]]
) -> None:
    """A second server on the same data dir, as the editor reopened."""
    client = await RawLspClient.start(server_env(tmp_path), tmp_path / "server2.log")
    try:
        await client.initialize(workspace, {"agents": {}})
        await check(client)
        assert await client.call("shutdown") is None
        client.notify("exit")
        assert await client.wait_exit() == 0
    finally:
        await client.aclose()


async def _stored(client: RawLspClient, sid: str) -> JsonObject:
    listed = (await client.call("acp/listSessions", {}))["sessions"]
    entry = next((s for s in listed if s["sessionId"] == sid), None)
    assert entry is not None, f"{sid} not listed: {listed}"
    assert entry["stored"] is True and entry["live"] is False
    assert entry["status"] == "idle"  # however the server ended
    stored: JsonObject = await client.call("acp/getSession", {"sessionId": sid})
    assert stored["status"] == "stored"
    assert entry["messageCount"] == len(stored["messages"])
    return stored


def _texts(message: JsonObject) -> str:
    return "".join(b.get("text", "") for b in message["content"] if b.get("type") == "text")


@contextlib.asynccontextmanager
async def _server(
    tmp_path: Path, workspace: Path, script: JsonObject, pids: Path
) -> AsyncIterator[RawLspClient]:
    """The real server over stdio with one scripted agent "a" (its pids written to ``pids``)."""
    client = await RawLspClient.start(server_env(tmp_path), tmp_path / "server.log")
    try:
        await client.initialize(workspace, {"agents": {"a": scripted(script, pids=pids)}})
        yield client
    finally:
        await client.aclose()


@pytest.mark.parametrize("how", list(EXIT_CODES))
async def test_an_answered_turn_outlives_every_end(
    tmp_path: Path, workspace: Path, how: str
) -> None:
    agent_pids = tmp_path / "agent.pids"
    async with _server(tmp_path, workspace, SCRIPT, agent_pids) as client:
        older = (await client.call("acp/newSession", {"agent": "a"}))["sessionId"]
        await client.call("acp/prompt", {"sessionId": older, "prompt": "start a terminal"})
        await client.wait_for(lambda: (workspace / "bg.pid").exists())
        await client.wait_for(lambda: (workspace / "term.pid").exists())
        await asyncio.sleep(0.1)  # the pid files are complete
        pids = read_pids(agent_pids)
        pids += [int((workspace / n).read_text()) for n in ("term.pid", "bg.pid")]
        assert len(pids) == 3 and all(alive(pid) for pid in pids)

        # A session made and answered within one flush interval, then the end at once.
        sid = (await client.call("acp/newSession", {"agent": "a"}))["sessionId"]
        answer = await client.call("acp/prompt", {"sessionId": sid, "prompt": "count zebras"})
        assert answer == {"stopReason": "end_turn"}
        assert await _end(client, how) == EXIT_CODES[how]
    assert not await wait_gone(pids, BOUND_S)
    assert _store_closed(tmp_path)

    async def check(reopened: RawLspClient) -> None:
        stored = await _stored(reopened, sid)
        messages = stored["messages"]
        assert [m["role"] for m in messages] == ["user", "thought", "agent"]
        assert _texts(messages[0]) == "count zebras"
        assert _texts(messages[1]) == "thinking about zebras"
        assert _texts(messages[2]) == "There are three zebras."
        [call] = stored["toolCalls"]
        assert call["toolCallId"] == "t1" and call["status"] == "completed"
        assert stored["timeline"] == [
            {"message": 0},
            {"message": 1},
            {"toolCall": "t1"},
            {"message": 2},
        ]
        first = await _stored(reopened, older)
        assert [_texts(m) for m in first["messages"]] == ["start a terminal", "started"]

    await _reopened(tmp_path, workspace, check)


async def test_a_session_younger_than_one_flush_is_kept(tmp_path: Path, workspace: Path) -> None:
    """The first session of the run, ended at once: the history is opened at the end."""
    script = {"on": {"session/prompt": TURN}}
    async with _server(tmp_path, workspace, script, tmp_path / "p") as client:
        sid = (await client.call("acp/newSession", {"agent": "a"}))["sessionId"]
        await client.call("acp/prompt", {"sessionId": sid, "prompt": "count zebras"})
        assert await _end(client, "exit") == 1
    assert _store_closed(tmp_path)

    async def check(reopened: RawLspClient) -> None:
        stored = await _stored(reopened, sid)
        assert [_texts(m) for m in stored["messages"]] == [
            "count zebras",
            "thinking about zebras",
            "There are three zebras.",
        ]

    await _reopened(tmp_path, workspace, check)


# A turn the end cuts off: it has shown a tool call and some text, then waits.
CUT_OFF: JsonObject = {
    "on": {
        "session/prompt": [
            {
                "update": {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "t1",
                    "title": "Count the zebras",
                    "kind": "other",
                    "status": "in_progress",
                }
            },
            _chunk("agent_message_chunk", "So far: two zebras"),
            {"sleep": 300},
        ]
    }
}


@pytest.mark.parametrize("how", ["shutdown-exit", "stdin-eof", "SIGTERM"])
async def test_a_turn_cut_off_by_the_end_keeps_what_it_showed(
    tmp_path: Path, workspace: Path, how: str
) -> None:
    agent_pids = tmp_path / "agent.pids"
    async with _server(tmp_path, workspace, CUT_OFF, agent_pids) as client:
        sid = (await client.call("acp/newSession", {"agent": "a"}))["sessionId"]
        client.request("acp/prompt", {"sessionId": sid, "prompt": "count zebras"})

        def shown() -> bool:
            return any(
                m == "acp/sessionUpdate" and "So far" in json.dumps(params)
                for m, params in client.notifications
            )

        await client.wait_for(shown)
        pids = read_pids(agent_pids)
        await _end(client, how)
    assert not await wait_gone(pids, BOUND_S)
    assert _store_closed(tmp_path)

    async def check(reopened: RawLspClient) -> None:
        stored = await _stored(reopened, sid)
        assert [_texts(m) for m in stored["messages"]] == ["count zebras", "So far: two zebras"]
        [call] = stored["toolCalls"]
        assert call["status"] == "cancelled"
        # ended as a cancel ends a turn (after shutdown too: the agent was stopped, not lost)
        listed = (await reopened.call("acp/listSessions", {}))["sessions"]
        assert [s["status"] for s in listed if s["sessionId"] == sid] == ["idle"]

    await _reopened(tmp_path, workspace, check)


# -- the final flush itself (the real recorder and store, in this process) -------------------


def _chunk_update(text: str) -> JsonObject:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}


def _read_back(path: Path, sid: str) -> JsonObject | None:
    store = HistoryStore(path)
    store.open()
    try:
        return store.snapshot(sid)
    finally:
        store.close()


async def test_the_final_flush_waits_for_a_busy_store_without_hanging(tmp_path: Path) -> None:
    """A write still under way when the end comes lands first and the final one after it, in
    order; a store thread that stays busy past the bound does not hold the end."""
    path = tmp_path / "history.sqlite3"
    recorder = Recorder(
        lambda: HistoryStore(path),
        redact=lambda value: value,
        on_error=lambda _message: None,
        spawn=lambda coro, name: asyncio.ensure_future(coro),
    )
    session = Session("s1", "a", str(tmp_path))
    recorder.track(session, None, "acp")
    await recorder.flush()
    store = await recorder.store()
    assert store is not None
    recorder.observe(session, session.apply_update(_chunk_update("one, ")))
    gate = threading.Event()
    store.submit(gate.wait, 30)  # the store's thread is busy
    under_way = asyncio.ensure_future(recorder.flush())  # collected, queued behind the gate
    await asyncio.sleep(0.05)
    recorder.observe(session, session.apply_update(_chunk_update("two.")))

    ended = threading.Thread(target=recorder.close_now, args=(0.2,))
    ended.start()
    ended.join(10)
    assert not ended.is_alive(), "the final flush did not return while the store was busy"
    gate.set()  # the store's thread goes on: both writes land, in order
    await under_way
    await asyncio.to_thread(store.shutdown)
    stored = _read_back(path, "s1")
    assert stored is not None
    assert [_texts(m) for m in stored["messages"]] == ["one, two."]
