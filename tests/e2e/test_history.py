"""Sessions that outlive the server: the history store through the real server (DESIGN §2).

Each test's server keeps its history in ``tmp_path/data`` (tests/e2e/conftest.py), so a
second server started on the same ``tmp_path`` is "the editor, reopened".
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from acp_lsp import protocol as p
from acp_lsp.history.store import Batch, HistoryStore, SessionRow
from tests.agents import scripted_command
from tests.e2e.conftest import start_editor, with_fast_demo
from tests.support.lsp_editor import TestEditor, pick

pytestmark = pytest.mark.timeout(90)

TURN = [
    {
        "update": {
            "sessionUpdate": "agent_thought_chunk",
            "content": {"type": "text", "text": "hmm"},
        }
    },
    {
        "update": {
            "sessionUpdate": "tool_call",
            "toolCallId": "t1",
            "title": "Write notes.txt",
            "kind": "edit",
            "status": "pending",
        }
    },
    {
        "request": "fs/write_text_file",
        "params": {"sessionId": "{sessionId}", "path": "{cwd}/notes.txt", "content": "new\n"},
    },
    {
        "update": {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t1",
            "status": "completed",
            "content": [
                {"type": "diff", "path": "{cwd}/notes.txt", "oldText": "old\n", "newText": "new\n"}
            ],
        }
    },
    {
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "Wrote the zebra notes."},
        }
    },
]


def agent(tmp_path: Path, script: dict[str, Any]) -> dict[str, Any]:
    argv = scripted_command(script, tmp_dir=tmp_path)
    return {
        "command": argv[0],
        "args": argv[1:],
        "env": {"SCRIPTED_ACP_LOG": str(tmp_path / "agent.log")},
    }


async def editor_for(
    tmp_path: Path, workspace: Path, script: dict[str, Any], **options: Any
) -> TestEditor:
    settings = with_fast_demo(
        {"agents": {"a": agent(tmp_path, script)}, "defaultAgent": "a", **options}
    )
    return await start_editor(tmp_path, workspace, "neovim", settings)


async def error_of(coro: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as info:
        await coro
    return info.value


def sent_to_agent(tmp_path: Path, method: str) -> list[dict[str, Any]]:
    lines = (tmp_path / "agent.log").read_text(encoding="utf-8").splitlines()
    return [m for m in map(json.loads, lines) if m.get("method") == method]


async def test_a_session_survives_a_restart_with_tool_calls_and_review(
    tmp_path: Path, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("old\n", encoding="utf-8")
    script = {"session_ids": ["s-1"], "on": {"session/prompt": TURN}}
    editor = await editor_for(tmp_path, workspace, script)
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "write the notes")
    review = await editor.acp(
        p.ACP_REVIEW_EDIT, {"sessionId": sid, "action": "reject", "toolCallId": "t1"}
    )
    assert review["applied"] is True
    await editor.acp(p.ACP_RENAME_SESSION, {"sessionId": sid, "title": "Zebra notes"})
    await editor.shutdown_session()

    editor = await editor_for(tmp_path, workspace, script)
    listed = (await editor.acp(p.ACP_LIST_SESSIONS, {}))["sessions"]
    entry = next(s for s in listed if s["sessionId"] == sid)
    assert entry["live"] is False and entry["stored"] is True
    assert entry["title"] == "Zebra notes" and entry["messageCount"] == 3
    stored = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    assert stored["status"] == "stored"
    assert [m["role"] for m in stored["messages"]] == ["user", "thought", "agent"]
    [call] = stored["toolCalls"]
    assert call["status"] == "completed" and call["review"]["status"] == "rejected"
    assert [list(e) for e in stored["timeline"]] == [
        ["message"],
        ["message"],
        ["toolCall"],
        ["message"],
    ]
    # read-only until resumed
    err = await error_of(editor.prompt(sid, "more"))
    assert err.code == p.UNKNOWN_SESSION and "acp/loadSession" in err.message
    # search over message text, case-insensitively
    found = (await editor.acp(p.ACP_LIST_SESSIONS, {"query": "ZEBRA NOTES."}))["sessions"]
    assert [s["sessionId"] for s in found] == [sid]
    assert (await editor.acp(p.ACP_LIST_SESSIONS, {"query": "giraffe"}))["sessions"] == []
    # resume through the agent's own session/load, under the same id
    snap = await editor.acp(p.ACP_LOAD_SESSION, {"sessionId": sid})
    assert snap["sessionId"] == sid and snap["resumedFrom"] == "agent" and snap["status"] == "idle"
    assert len(snap["messages"]) == 3 and snap["toolCalls"][0]["review"]["status"] == "rejected"
    assert sent_to_agent(tmp_path, "session/load")[-1]["params"]["sessionId"] == "s-1"
    text = (await editor.acp(p.ACP_EXPORT_SESSION, {"sessionId": sid, "format": "markdown"}))[
        "text"
    ]
    assert text.startswith("# Zebra notes") and "## User" in text and "write the notes" in text
    assert "Write notes.txt** (edit, completed) — review: rejected" in text
    # the resumed session takes turns again
    assert (await editor.prompt(sid, "and again"))["stopReason"] == "end_turn"
    listed = (await editor.acp(p.ACP_LIST_SESSIONS, {}))["sessions"]
    assert sid in [s["sessionId"] for s in listed]
    await editor.acp(p.ACP_DELETE_SESSION, {"sessionId": sid})
    # the agent cannot delete sessions (no sessionCapabilities.delete) and still lists this one:
    # deleted here, it is neither listed nor left running
    assert sent_to_agent(tmp_path, "session/delete") == []
    listed = (await editor.acp(p.ACP_LIST_SESSIONS, {}))["sessions"]
    assert sid not in [s["sessionId"] for s in listed]
    err = await error_of(editor.acp(p.ACP_GET_SESSION, {"sessionId": sid}))
    assert err.code == p.UNKNOWN_SESSION
    await editor.shutdown_session()
    assert not editor.schema_errors, editor.schema_errors


async def test_an_agent_that_cannot_reload_gets_the_transcript(
    tmp_path: Path, workspace: Path
) -> None:
    plain = {
        "initialize": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []},
        "on": {"session/prompt": TURN[-1:]},
    }
    editor = await editor_for(tmp_path, workspace, plain)
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "remember the word pelican")
    await editor.shutdown_session()

    editor = await editor_for(tmp_path, workspace, plain)
    snap = await editor.acp(p.ACP_LOAD_SESSION, {"sessionId": sid})
    assert snap["sessionId"] == sid and snap["resumedFrom"] == "transcript"
    assert [m["role"] for m in snap["messages"]] == ["user", "agent"]
    await editor.prompt(sid, "what was the word?")
    prompts = sent_to_agent(tmp_path, "session/prompt")
    first, second = prompts[-1]["params"]["prompt"]
    assert "<transcript>" in first["text"] and "pelican" in first["text"]
    assert second == {"type": "text", "text": "what was the word?"}
    # the transcript primes only the first prompt after the resume
    await editor.prompt(sid, "thanks")
    assert len(sent_to_agent(tmp_path, "session/prompt")[-1]["params"]["prompt"]) == 1
    # the editor saw only the user's words, not the primer
    final = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    assert all("<transcript>" not in json.dumps(m) for m in final["messages"])
    await editor.shutdown_session()


async def test_kill_9_mid_turn_keeps_what_was_streamed(tmp_path: Path, workspace: Path) -> None:
    stream = [
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "part one. "},
            }
        },
        {"sleep": 1.0},
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "part two. "},
            }
        },
        {"sleep": 30},
    ]
    editor = await editor_for(tmp_path, workspace, {"on": {"session/prompt": stream}})
    sid = (await editor.new_session())["sessionId"]
    turn = asyncio.ensure_future(editor.prompt(sid, "go on", timeout=60))
    await editor.wait_for(
        lambda: "part two." in "".join(editor.sessions[sid].message_texts()), timeout=20
    )
    await asyncio.sleep(1.0)  # past the flush interval (250 ms): it is on disk
    assert editor._server is not None
    os.kill(editor._server.pid, signal.SIGKILL)
    with pytest.raises(Exception):  # noqa: B017 - the server is gone, any error will do
        await turn
    editor = await editor_for(tmp_path, workspace, {})
    stored = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    assert stored["messages"][0]["content"][0]["text"] == "go on"
    assert "part one. part two." in "".join(
        b.get("text", "") for b in stored["messages"][1]["content"]
    )
    db = sqlite3.connect(tmp_path / "data" / "history.sqlite3")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    await editor.shutdown_session()


def fill_store(path: Path, sessions: int, big: int) -> None:
    store = HistoryStore(path)
    store.open()
    batch = Batch()
    for i in range(sessions):
        sid = f"old-{i:04d}"
        stamp = f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}.000000Z"
        batch.sessions.append(
            SessionRow(
                sid, "a", stamp, stamp, cwd="/w", title=f"session number {i}", message_count=2
            )
        )
        for idx, (role, text) in enumerate((("user", f"question {i}"), ("agent", f"answer {i}"))):
            content = json.dumps([{"type": "text", "text": text}])
            batch.messages.append((sid, idx, idx, role, None, content, text.casefold()))
    stamp = "2026-02-01T00:00:00.000000Z"
    batch.sessions.append(
        SessionRow("big", "a", stamp, stamp, cwd="/w", title="long one", message_count=big)
    )
    for idx in range(big):
        text = f"message {idx} " + "lorem ipsum " * 8
        content = json.dumps([{"type": "text", "text": text}])
        batch.messages.append(
            ("big", idx, idx, "user" if idx % 2 == 0 else "agent", None, content, text)
        )
    store.write(batch)
    store.close()


async def test_a_thousand_sessions_and_one_of_ten_thousand_messages(
    tmp_path: Path, workspace: Path
) -> None:
    fill_store(tmp_path / "data" / "history.sqlite3", 1000, 10_000)
    editor = await editor_for(tmp_path, workspace, {})
    page = await editor.acp(p.ACP_LIST_SESSIONS, {"agent": "a", "limit": 50})
    assert len(page["sessions"]) == 50 and page["sessions"][0]["sessionId"] == "big"
    seen = {s["sessionId"] for s in page["sessions"]}
    while "nextCursor" in page:
        page = await editor.acp(
            p.ACP_LIST_SESSIONS, {"agent": "a", "limit": 200, "cursor": page["nextCursor"]}
        )
        seen |= {s["sessionId"] for s in page["sessions"]}
    assert len(seen) == 1001
    found = await editor.acp(p.ACP_LIST_SESSIONS, {"query": "ANSWER 777"})
    assert [s["sessionId"] for s in found["sessions"]] == ["old-0777"]
    big = await editor.acp(p.ACP_GET_SESSION, {"sessionId": "big"})
    assert len(big["messages"]) == 10_000 and big["messages"][9_999]["content"][0][
        "text"
    ].startswith("message 9999 ")
    await editor.shutdown_session()


@pytest.mark.parametrize("fault", ["corrupt", "locked"])
async def test_a_broken_store_is_named_and_live_sessions_still_work(
    tmp_path: Path, workspace: Path, fault: str
) -> None:
    path = tmp_path / "data" / "history.sqlite3"
    path.parent.mkdir(parents=True)
    holder = None
    if fault == "corrupt":
        path.write_bytes(b"this is not a database" * 100)
    else:
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("CREATE TABLE x (y)")
        holder.execute("BEGIN EXCLUSIVE")
    editor = await editor_for(tmp_path, workspace, {"on": {"session/prompt": TURN[-1:]}})
    editor.permission_policy = pick("allow_once")
    sid = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(sid, "hello"))["stopReason"] == "end_turn"
    await editor.wait_for(lambda: any(str(path) in m.message for m in editor.messages), timeout=20)
    warnings = [m.message for m in editor.messages if str(path) in m.message]
    assert len(warnings) == 1 and "live sessions work as before" in warnings[0]
    listed = (await editor.acp(p.ACP_LIST_SESSIONS, {}))["sessions"]
    assert [s["sessionId"] for s in listed] == [sid] and listed[0]["live"] is True
    await editor.shutdown_session()
    if holder is not None:
        holder.close()


async def test_a_session_primed_after_its_agent_died_keeps_its_seq_rising(
    tmp_path: Path, workspace: Path
) -> None:
    # The primed session is a new object under the dead one's id: its notifications must carry
    # later seqs than any the editor saw, or the editor drops its first answer as stale (a
    # full run's Claude-killed test once showed no text at all)
    words = [
        step
        for i in range(6)
        for step in (
            {
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": f"word {i}. "},
                }
            },
            {"sleep": 0.15},  # each its own notification
        )
    ]
    plain = {
        "initialize": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []},
        "on": {"session/prompt": words, "session/prompt#2": [{"exit": 1}]},
    }
    editor = await editor_for(tmp_path, workspace, plain)
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "count")
    seen = max(
        params["seq"]
        for method, params in editor.notifications
        if method == p.ACP_SESSION_UPDATE and params["sessionId"] == sid
    )
    assert seen >= 6
    await error_of(editor.prompt(sid, "and now die"))
    await editor.wait_for(lambda: editor.status_values(sid)[-1:] == ["failed"])
    loaded = await editor.acp(p.ACP_LOAD_SESSION, {"sessionId": sid})
    assert loaded["resumedFrom"] == "transcript" and loaded["seq"] >= seen
    editor.adopt(loaded)  # (replays what arrived for the id: the dead one's too)
    await editor.prompt(sid, "count again")
    assert "".join(editor.sessions[sid].message_texts()).count("word 5.") == 2
    await editor.shutdown_session()
