"""A long session's old tool calls leave their large fields to the history store.

A real store (SQLite in a temporary directory) and the real recorder: once a finished call is
stored as it is, the session drops its content, rawInput and rawOutput (keeping the last
turn's, the recent and the unfinished ones), and every reader gets
them back exactly; a call that changes again comes back whole first. Checked against a twin
session that keeps everything (no loader).
"""

from __future__ import annotations

import copy
import sys
import tracemalloc
from pathlib import Path
from typing import Any

from acp_lsp.history.export import to_markdown
from acp_lsp.secret_store import SecretStore
from acp_lsp.session import Session
from acp_lsp.session.offload import KEEP_RECENT_TOOL_CALLS
from acp_lsp.session.toolcalls import EVICTED_KEYS
from tests.unit.test_history_appends import Harness

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from bench_soak import _write_call

JSON = Any


class Twin(Harness):
    """A recorded session and a twin fed the same updates that keeps everything."""

    def __init__(self, path: Path, secrets: SecretStore | None = None) -> None:
        super().__init__(path, secrets)
        self.twin = Session("s1", "demo", "/work")
        self.twin_on = True

    async def feed(self, *updates: JSON) -> None:
        for update in updates:
            self.recorder.observe(self.session, self.session.apply_update(copy.deepcopy(update)))
            if self.twin_on:
                self.twin.apply_update(copy.deepcopy(update))
        await self.recorder.flush()

    async def turn(self, turn: int, calls: int, size: int = 2048) -> None:
        for s in (self.session, self.twin):
            s.begin_turn()
        for n in range(calls):
            await self.feed(*_write_call(turn, n, size))
        for s in (self.session, self.twin):
            s.finish_turn()
        await self.recorder.flush()

    def whole_in_memory(self) -> list[str]:
        calls = self.session._tool_calls
        return [
            key for key in calls.ids() if any((calls.peek(key) or {}).get(k) for k in EVICTED_KEYS)
        ]


async def started(path: Path, turns: int) -> Twin:
    t = Twin(path)
    await t.start()
    for turn in range(1, turns + 1):
        await t.turn(turn, 20)
    return t


async def test_old_calls_leave_memory_and_read_back_equal(tmp_path: Path) -> None:
    t = await started(tmp_path / "h.sqlite3", 5)
    # the bound: the last turn's calls and the recent ones, nothing older
    assert len(t.whole_in_memory()) <= max(20, KEEP_RECENT_TOOL_CALLS)
    assert t.session.evicted_tool_calls() == 80
    # what readers get is what the session was told
    assert t.session.tool_calls() == t.twin.tool_calls()
    assert t.session.tool_call("toolu_0001_000") == t.twin.tool_call("toolu_0001_000")
    assert t.session.snapshot() == t.twin.snapshot()
    assert to_markdown(t.session.snapshot()) == to_markdown(t.twin.snapshot())
    await t.recorder.close()


async def test_held_memory_per_tool_call_is_bounded(tmp_path: Path) -> None:
    t = Twin(tmp_path / "h.sqlite3")
    t.twin_on = False
    tracemalloc.start()
    try:
        await t.start()
        for turn in range(1, 3):
            await t.turn(turn, 20, size=8192)
        before = tracemalloc.get_traced_memory()[0]
        for turn in range(3, 7):
            await t.turn(turn, 20, size=8192)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # each call carries its 8 KB file three times (~16 KB held when kept); an evicted one
    # keeps its title, kind, status and path
    assert grown / 80 < 2048, grown
    await t.recorder.close()


async def test_a_changed_evicted_call_comes_back_whole(tmp_path: Path) -> None:
    t = await started(tmp_path / "h.sqlite3", 3)
    old = "toolu_0001_003"
    assert old not in t.whole_in_memory()
    # a late update of an old call: content appended, status changed
    late = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": old,
        "status": "failed",
        "content": [
            *(t.twin.tool_call(old) or {})["content"],
            {"type": "content", "content": {"type": "text", "text": "late"}},
        ],
    }
    await t.feed(late)
    assert t.session.tool_call(old) == t.twin.tool_call(old)
    # a review on an old call keeps the content it had (set without reading it back)
    for s in (t.session, t.twin):
        s.set_review("toolu_0001_007", {"status": "accepted", "files": []})
    t.recorder.changed(t.session)
    t.recorder._states["s1"].calls.add("toolu_0001_007")
    await t.recorder.flush()
    assert t.session.tool_calls() == t.twin.tool_calls()
    assert (await t.stored())["toolCalls"] == t.twin.tool_calls()
    await t.recorder.close()


async def test_a_pending_review_is_read_back_and_secrets_stay_in_memory(tmp_path: Path) -> None:
    secrets = SecretStore()
    secrets.add("sk-secret-value-1234567890")
    t = Twin(tmp_path / "h.sqlite3", secrets)
    await t.start()
    await t.turn(1, 20)
    for s in (t.session, t.twin):
        s.set_review("toolu_0001_001", {"status": "pending", "files": []})
    secret = {
        "sessionUpdate": "tool_call",
        "toolCallId": "secret",
        "status": "completed",
        "rawInput": {"command": "echo sk-secret-value-1234567890"},
    }
    await t.feed(secret)
    t.recorder._states["s1"].calls.add("toolu_0001_001")
    for turn in range(2, 4):
        await t.turn(turn, 20)
    kept = t.whole_in_memory()
    assert "toolu_0001_001" not in kept  # the review keeps its own texts
    assert "secret" in kept  # its stored copy is scrubbed: not what the session holds
    assert "toolu_0001_002" not in kept
    assert t.session.tool_calls() == t.twin.tool_calls()
    await t.recorder.close()


async def test_forget_and_fork_keep_everything(tmp_path: Path) -> None:
    t = await started(tmp_path / "h.sqlite3", 3)
    assert t.session.evicted_tool_calls() > 0
    fork = Session("s2", "demo", "/work")
    fork.take_history(t.session)
    assert fork.evicted_tool_calls() == 0
    assert fork.tool_calls() == t.twin.tool_calls()
    t.recorder.forget("s1")  # acp/deleteSession: the stored copy goes
    assert t.session.evicted_tool_calls() == 0
    store = await t.recorder.store()
    assert store is not None
    await store.run(store.delete, "s1")
    assert t.session.tool_calls() == t.twin.tool_calls()
    await t.recorder.close()


async def test_without_a_store_nothing_is_dropped() -> None:
    session = Session("s1", "claude", "/w")
    for update in _write_call(1, 0, 1024):
        session.apply_update(update)
    assert session.tool_calls_stored("s1", [("toolu_0001_000", 2)]) == 0
    assert session.evicted_tool_calls() == 0


async def test_the_transcript_reads_an_evicted_call_back_once_not_at_every_render(
    tmp_path: Path,
) -> None:
    # a plain LSP editor's transcript is rendered up to three times a second: a finished
    # call left to the store is read back when it first shows (or changes), then kept as text
    from acp_lsp.editor.transcript import Transcripts

    t = await started(tmp_path / "h.sqlite3", 3)
    assert t.session.evicted_tool_calls() > 0
    calls = t.session._tool_calls
    assert calls.loader is not None
    real = calls.loader
    reads: list[int] = []

    def counted(session_id: str, ids: list[str]) -> dict[str, dict[str, JSON]]:
        reads.append(len(ids))
        return real(session_id, ids)

    calls.loader = counted
    transcripts = Transcripts(None, tmp_path)  # type: ignore[arg-type]
    first = transcripts._render(t.session)
    assert sum(reads) == t.session.evicted_tool_calls()
    reads.clear()
    assert transcripts._render(t.session) == first
    assert reads == []  # nothing read back again
    assert to_markdown(t.twin.snapshot()) in first  # what a whole snapshot shows
