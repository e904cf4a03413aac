"""Sessions deleted here that their agent still lists are remembered, so listings leave them
out, until the session is recorded again (loaded from its agent anew). A real SQLite store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from acp_lsp.history.schema import MIGRATIONS, SCHEMA_VERSION
from acp_lsp.history.store import Batch, HistoryStore, SessionRow

ROW = SessionRow(id="s1", agent="demo", created_at="2026-11-25", updated_at="2026-11-25")


def test_a_deleted_session_is_remembered_until_it_is_recorded_again(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    store.open()
    try:
        store.write(Batch(sessions=[ROW]))
        assert store.delete("s1") is True
        assert store.deleted() == {"s1"}
        assert store.delete("unknown") is False  # nothing stored: nothing to remember
        assert store.deleted() == {"s1"}
        store.write(Batch(sessions=[ROW]))
        assert store.deleted() == set()
    finally:
        store.close()


def test_a_store_of_schema_2_gains_the_deleted_sessions(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(f"{MIGRATIONS[1]}\n{MIGRATIONS[2]}\nPRAGMA user_version=2;")
    store = HistoryStore(path)
    store.open()
    try:
        assert store.deleted() == set()
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        store.close()
