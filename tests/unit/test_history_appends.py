"""The history stores a streaming answer by appending its new text, not by rewriting it.

A real store (SQLite in a temporary directory) and the real recorder, flushed by hand between
chunks: what a later process reads back must be exactly what the session holds, however the
message was written (whole, appended, or folded back into one row).
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_lsp.history.recorder import Recorder
from acp_lsp.history.schema import MIGRATIONS
from acp_lsp.history.store import HistoryStore
from acp_lsp.secret_store import SecretStore
from acp_lsp.session import Session
from acp_lsp.session.messages import Message

JSON = Any


def chunk(t: str, kind: str = "agent_message_chunk", **block: JSON) -> JSON:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": t, **block}}


class Harness:
    def __init__(self, path: Path, secrets: SecretStore | None = None) -> None:
        self.path = path
        self.secrets = secrets or SecretStore()
        self.errors: list[str] = []
        self.session = Session("s1", "demo", "/work")
        self.recorder = Recorder(
            lambda: HistoryStore(path),
            redact=self.secrets.redact_json,
            on_error=self.errors.append,
            spawn=lambda coro, name: asyncio.ensure_future(coro),
        )

    async def start(self) -> None:
        self.recorder.track(self.session, None, "acp")
        await self.recorder.flush()

    async def feed(self, *updates: JSON) -> None:
        for update in updates:
            self.recorder.observe(self.session, self.session.apply_update(update))
        await self.recorder.flush()

    async def stored(self) -> JSON:
        store = await self.recorder.store()
        assert store is not None
        return await store.run(store.snapshot, "s1")

    async def found(self, query: str) -> list[str]:
        """The ids acp/listSessions finds for ``query``."""
        store = await self.recorder.store()
        assert store is not None
        rows = await store.run(
            lambda: store.list(agent=None, cwd=None, query=query, offset=0, limit=None)
        )
        return [row.id for row in rows]

    def rows(self, table: str) -> int:
        with sqlite3.connect(self.path) as db:
            return int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


async def test_a_streamed_answer_is_appended_then_folded_and_reads_back_whole(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path / "h.sqlite3")
    await h.start()
    await h.feed(chunk("Hello"))
    for i in range(5):
        await h.feed(chunk(f" part{i}"))
    assert h.rows("message_appends") == 5  # one row per flush, not a rewrite each time
    assert (await h.stored())["messages"] == h.session.snapshot()["messages"]

    assert await h.found("PART4") == ["s1"]  # search sees appended text

    await h.feed(chunk("thinking", kind="agent_thought_chunk"))  # a new message starts
    assert h.rows("message_appends") == 0  # the answer was written whole again
    assert (await h.stored())["messages"] == h.session.snapshot()["messages"]
    await h.recorder.close()


async def test_a_change_other_than_appending_rewrites_the_message(tmp_path: Path) -> None:
    h = Harness(tmp_path / "h.sqlite3")
    await h.start()
    await h.feed(chunk("plain "), chunk("more"))
    # A text block with other keys cannot join the open block: a structural change.
    await h.feed(chunk("annotated", annotations={"priority": 1.0}))
    await h.feed({"sessionUpdate": "agent_message_chunk", "content": {"type": "image",
                 "data": "AAAA", "mimeType": "image/png"}})  # fmt: skip
    await h.feed(chunk(" after the image"))
    stored = (await h.stored())["messages"]
    assert stored == h.session.snapshot()["messages"]
    assert [b["type"] for b in stored[0]["content"]] == ["text", "text", "image", "text"]
    await h.recorder.close()


async def test_a_secret_split_by_a_flush_is_still_scrubbed(tmp_path: Path) -> None:
    secrets = SecretStore()
    secrets.add("sk-VERY-SECRET-123")
    h = Harness(tmp_path / "h.sqlite3", secrets)
    await h.start()
    await h.feed(chunk("the key is sk-VERY-"))
    await h.feed(chunk("SECRET-123 and more"))
    text = (await h.stored())["messages"][0]["content"][0]["text"]
    assert text == "the key is *** and more"
    with sqlite3.connect(h.path) as db:
        dump = "\n".join(str(row) for row in db.iterdump())
    assert "SECRET-123" not in dump
    await h.recorder.close()


async def test_a_store_of_the_first_schema_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(MIGRATIONS[1])
        db.execute(
            "INSERT INTO sessions (id, agent, created_at, updated_at, message_count) "
            "VALUES ('old', 'demo', '2026-01-01', '2026-01-01', 0)"
        )
        db.execute("PRAGMA user_version=1")
    h = Harness(path)
    await h.start()
    await h.feed(chunk("a"), chunk("b"))
    await h.feed(chunk("c"))
    store = await h.recorder.store()
    assert store is not None
    assert (await store.run(store.snapshot, "old")) is not None
    assert (await h.stored())["messages"][0]["content"][0]["text"] == "abc"
    await h.recorder.close()


@pytest.mark.parametrize("overlap", [0, 3, 100])
def test_text_since_returns_only_what_was_appended(overlap: int) -> None:
    message = Message("agent")
    message.append({"type": "text", "text": "abc"})
    mark = message.stream_mark()
    assert mark is not None
    for piece in ["de", "f", "ghij"]:
        message.append({"type": "text", "text": piece})
    got = message.text_since(mark, overlap)
    assert got == "abcdefghij"[max(0, 3 - overlap) :]
    message.content()  # joining the parts for a reader changes nothing
    assert message.text_since(mark, overlap) == got
    message.append({"type": "image", "data": "", "mimeType": "image/png"})
    assert message.text_since(mark) is None


@given(
    st.lists(st.one_of(st.text(max_size=5), st.sampled_from(["<read>", "<join>"])), max_size=30),
    st.integers(min_value=0, max_value=8),
)
def test_text_since_matches_the_text_whatever_was_read_or_joined(
    steps: list[str], overlap: int
) -> None:
    message = Message("agent")
    message.append({"type": "text", "text": "start"})
    mark = message.stream_mark()
    assert mark is not None
    text, marked = "start", 5
    for step in steps:
        if step == "<join>":
            message.content()  # a snapshot joins the parts
        elif step == "<read>":
            got = message.text_since(mark, overlap)
            assert got == text[max(0, marked - overlap) :]
            mark, marked = message.stream_mark() or mark, len(text)
        else:
            message.append({"type": "text", "text": step})
            text += step
    assert message.text_since(mark, overlap) == text[max(0, marked - overlap) :]


APPENDED = ["Plain ASCII, Mixed Case", " STRASSE", " Straße", " École", " déjà vu", " ΣΊΣΥΦΟΣ"]


async def test_search_finds_appended_text_in_any_case_with_a_copy_only_where_needed(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path / "h.sqlite3")
    await h.start()
    await h.feed(chunk("Start:"))
    for text in APPENDED:
        await h.feed(chunk(text))
    assert h.rows("message_appends") == len(APPENDED)
    with sqlite3.connect(h.path) as db:
        copies = dict(db.execute("SELECT text, search FROM message_appends").fetchall())
    # ASCII and already folded text is searched as it is; the rest through a casefolded copy
    assert copies == {
        "Plain ASCII, Mixed Case": None,
        " STRASSE": None,
        " Straße": " strasse",
        " École": " école",
        " déjà vu": None,
        " ΣΊΣΥΦΟΣ": " σίσυφοσ",
    }
    for query in ["mixed case", "MIXED CASE", "ascii, m", "straße", "STRASSE", "école",
                  "ÉCOLE", "DÉJÀ", "σίσυφος", "Σίσυφος", "100%", "a_b"]:  # fmt: skip
        expected = [] if query in ("100%", "a_b") else ["s1"]
        assert await h.found(query) == expected, query
    assert (await h.stored())["messages"] == h.session.snapshot()["messages"]
    await h.recorder.close()


async def test_a_store_of_schema_3_keeps_its_appends_searchable_and_in_order(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript("\n".join(MIGRATIONS[v] for v in (1, 2, 3)) + "PRAGMA user_version=3;")
        db.execute(
            "INSERT INTO sessions (id, agent, created_at, updated_at, message_count) "
            "VALUES ('old', 'demo', '2026-01-01', '2026-01-01', 1)"
        )
        db.execute(
            "INSERT INTO messages VALUES ('old', 0, 0, 'agent', NULL, ?, 'start')",
            ('[{"type": "text", "text": "Start"}]',),
        )
        # as schema 3 wrote them: every append with its casefolded copy
        for text in [" Zebra", " Straße", " plain"]:
            db.execute(
                "INSERT INTO message_appends VALUES ('old', 0, ?, ?)", (text, text.casefold())
            )
    h = Harness(path)
    await h.start()
    store = await h.recorder.store()
    assert store is not None
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == 4
    old = await store.run(store.snapshot, "old")
    assert old is not None
    assert old["messages"][0]["content"] == [{"type": "text", "text": "Start Zebra Straße plain"}]
    for query in ["ZEBRA", "strasse", "PLAIN"]:
        assert await h.found(query) == ["old"], query
    await h.feed(chunk("New "), chunk("Text"))
    await h.feed(chunk(" APPENDED"))
    assert await h.found("appended") == ["s1"]
    await h.recorder.close()
