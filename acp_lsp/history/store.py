"""The session store: one SQLite database per user (WAL), owned by one worker thread.

Rows: a session (metadata, plan/usage/modes as JSON), its messages (by timeline index, with
a casefolded copy of their text for search), text appended to a message's last text block
since it was last written whole (so a long streamed answer costs its new text per flush, not
its length; a casefolded copy only where search needs one, see ``search_copy``), and its
tool calls (their last merged state, review included). ``pos`` is a
row's place in the session's timeline. Every method here is blocking and runs in the store's
thread (``HistoryStore.run``), never on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from acp_lsp.history.schema import MIGRATIONS, SCHEMA_VERSION
from acp_lsp.history.snapshot import SessionRow, parse_all, stored_snapshot

JsonObject = dict[str, Any]
T = TypeVar("T")


class StoreError(Exception):
    """The store cannot be used (corrupt, locked, read-only, wrong version)."""


@dataclass
class Batch:
    """What one flush writes: changed session rows, messages and tool calls."""

    sessions: list[SessionRow] = field(default_factory=list)
    # (session_id, idx, pos | None, role, message_id, content json, search text)
    messages: list[tuple[str, int, int | None, str, str | None, str, str]] = field(
        default_factory=list
    )
    # (session_id, tool_call_id, pos | None, state json)
    tool_calls: list[tuple[str, str, int | None, str]] = field(default_factory=list)
    # (session_id, idx, text, search_copy(text)): appended to the message's last text block
    appends: list[tuple[str, int, str, str | None]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.sessions or self.messages or self.tool_calls or self.appends)


class HistoryStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="acp-history")
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._reader: sqlite3.Connection | None = None  # read_tool_calls's, on the event loop

    # -- lifecycle (store thread) --------------------------------------------------------
    def open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                self.path, timeout=1.0, check_same_thread=False, isolation_level=None
            )
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash loses at most the last commit
            db.execute("PRAGMA foreign_keys=ON")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(f"{self.path}: written by a newer acp-lsp (schema {version})")
            for target in range(version + 1, SCHEMA_VERSION + 1):
                # one transaction per step: a crash mid-migration leaves the old version
                db.executescript(
                    f"BEGIN;\n{MIGRATIONS[target]}\nPRAGMA user_version={target};\nCOMMIT;"
                )
            db.execute("SELECT count(*) FROM sessions").fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {exc}") from None
        self._db = db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        with self._lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` in the store's thread."""
        return await self.queued(fn, *args)

    def queued(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Queue ``fn(*args)`` on the store's thread now, in order with every other call; the
        future is its result (cancelling it once the thread started it stops nothing)."""
        return asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Queue ``fn(*args)`` on the store's thread from synchronous code (the final flush)."""
        return self._pool.submit(fn, *args)

    def shutdown(self) -> None:
        with contextlib.suppress(RuntimeError):  # shut down already: wait for its queue
            self._pool.submit(self.close)
        self._pool.shutdown(wait=True)

    def shutdown_within(self, timeout: float) -> bool:
        """Close after the work already queued, waiting at most ``timeout`` s; False when the
        store's thread is still busy then (the database closes when the process ends)."""
        try:
            closed = self._pool.submit(self.close)
        except RuntimeError:  # shut down already
            return True
        self._pool.shutdown(wait=False)
        try:
            closed.result(timeout)
        except TimeoutError:
            return False
        return True

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError(f"{self.path}: not open")
        return self._db

    # -- writes --------------------------------------------------------------------------
    def write(self, batch: Batch) -> None:
        db = self.db
        with db:  # one transaction per flush
            db.execute("BEGIN")
            # a session recorded again (loaded from its agent anew) is no longer deleted
            db.executemany(
                "DELETE FROM deleted_sessions WHERE id=?", [(row.id,) for row in batch.sessions]
            )
            for row in batch.sessions:
                db.execute(
                    """INSERT INTO sessions (id, agent, agent_session_id, protocol, cwd, title,
                           title_search, created_at, updated_at, status, message_count, extras)
                       VALUES (?,?,?,?,?,?,?,?,?,?,?,?)
                       ON CONFLICT(id) DO UPDATE SET agent=excluded.agent,
                           agent_session_id=excluded.agent_session_id,
                           protocol=excluded.protocol, cwd=excluded.cwd,
                           title=coalesce(excluded.title, sessions.title),
                           title_search=coalesce(excluded.title_search, sessions.title_search),
                           updated_at=excluded.updated_at, status=excluded.status,
                           message_count=excluded.message_count,
                           extras=coalesce(excluded.extras, sessions.extras)""",
                    (
                        row.id,
                        row.agent,
                        row.agent_session_id,
                        row.protocol,
                        row.cwd,
                        row.title,
                        row.title.casefold() if row.title else None,
                        row.created_at,
                        row.updated_at,
                        row.status,
                        row.message_count,
                        json.dumps(row.extras) if row.extras is not None else None,
                    ),
                )
            db.executemany(
                """INSERT INTO messages (session_id, idx, pos, role, message_id, content, search)
                   VALUES (?,?,coalesce(?, -1),?,?,?,?)
                   ON CONFLICT(session_id, idx) DO UPDATE SET role=excluded.role,
                       message_id=excluded.message_id, content=excluded.content,
                       search=excluded.search,
                       pos=CASE WHEN excluded.pos >= 0 THEN excluded.pos ELSE messages.pos END""",
                batch.messages,
            )
            # A message written whole already holds what was appended to it.
            db.executemany(
                "DELETE FROM message_appends WHERE session_id=? AND idx=?",
                [(row[0], row[1]) for row in batch.messages],
            )
            db.executemany(
                "INSERT INTO message_appends (session_id, idx, text, search) VALUES (?,?,?,?)",
                batch.appends,
            )
            db.executemany(
                """INSERT INTO tool_calls (session_id, tool_call_id, pos, state)
                   VALUES (?,?,coalesce(?, -1),?)
                   ON CONFLICT(session_id, tool_call_id) DO UPDATE SET state=excluded.state,
                       pos=CASE WHEN excluded.pos >= 0 THEN excluded.pos ELSE tool_calls.pos END""",
                batch.tool_calls,
            )

    def rename(self, session_id: str, title: str) -> bool:
        with self.db as db:
            cur = db.execute(
                "UPDATE sessions SET title=?, title_search=? WHERE id=?",
                (title, title.casefold(), session_id),
            )
        return cur.rowcount > 0

    def delete(self, session_id: str) -> bool:
        with self.db as db:
            db.execute("BEGIN")
            db.execute("DELETE FROM messages WHERE session_id=?", (session_id,))
            db.execute("DELETE FROM message_appends WHERE session_id=?", (session_id,))
            db.execute("DELETE FROM tool_calls WHERE session_id=?", (session_id,))
            cur = db.execute("DELETE FROM sessions WHERE id=?", (session_id,))
            if cur.rowcount > 0:
                db.execute(
                    "INSERT OR REPLACE INTO deleted_sessions VALUES (?, datetime('now'))",
                    (session_id,),
                )
        return cur.rowcount > 0

    def deleted(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT id FROM deleted_sessions")}

    def prune(self, max_age_days: float | None, max_size_mb: float | None) -> int:
        """Retention: drop sessions older than the age limit, then the oldest until the file
        fits the size limit. Returns how many sessions were dropped."""
        dropped = 0
        db = self.db
        if max_age_days is not None:
            rows = db.execute(
                "SELECT id FROM sessions "
                "WHERE updated_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?)",
                (f"-{max_age_days} days",),
            ).fetchall()
            for (sid,) in rows:
                dropped += self.delete(sid)
        if max_size_mb is not None:
            limit = max_size_mb * 1024 * 1024
            while self._size() > limit:
                oldest = db.execute(
                    "SELECT id FROM sessions ORDER BY updated_at LIMIT 1"
                ).fetchone()
                if oldest is None:
                    break
                dropped += self.delete(oldest[0])
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                db.execute("VACUUM")
        return dropped

    def _size(self) -> int:
        page = self.db.execute("PRAGMA page_size").fetchone()[0]
        count = self.db.execute("PRAGMA page_count").fetchone()[0]
        return int(page * count)

    # -- reads ---------------------------------------------------------------------------
    def read_tool_calls(self, session_id: str, tool_call_ids: list[str]) -> dict[str, JsonObject]:
        """The stored states of these tool calls (those found): what a live session dropped
        from memory, read back when a snapshot, an export or the review needs it.

        The one read made from the event loop, not the store's thread: it serves synchronous
        readers of a session. It has its own read-only connection, so it never waits for a
        write under way (WAL: it sees the last commit), and reads a few rows by key.
        """
        with self._lock:
            if self._reader is None:
                try:
                    self._reader = sqlite3.connect(
                        self.path.resolve().as_uri() + "?mode=ro",
                        uri=True,
                        timeout=1.0,
                        check_same_thread=False,
                        isolation_level=None,
                    )
                except sqlite3.Error as exc:
                    raise StoreError(f"{self.path}: {exc}") from None
            found: dict[str, JsonObject] = {}
            for start in range(0, len(tool_call_ids), 500):
                chunk = tool_call_ids[start : start + 500]
                rows = self._reader.execute(
                    "SELECT tool_call_id, state FROM tool_calls WHERE session_id=? AND "
                    f"tool_call_id IN ({','.join('?' * len(chunk))})",
                    (session_id, *chunk),
                ).fetchall()
                states = parse_all([row[1] for row in rows])
                found.update(zip([row[0] for row in rows], states, strict=True))
            return found

    def session_row(self, session_id: str) -> SessionRow | None:
        row = self.db.execute(
            """SELECT id, agent, created_at, updated_at, agent_session_id, protocol, cwd, title,
                      status, message_count, extras FROM sessions WHERE id=?""",
            (session_id,),
        ).fetchone()
        if row is None:
            return None
        found = SessionRow(*row[:10])
        found.extras = json.loads(row[10]) if row[10] else None
        return found

    def list(
        self,
        *,
        agent: str | None,
        cwd: str | None,
        query: str | None,
        offset: int,
        limit: int | None,
    ) -> list[SessionRow]:
        where, args = [], []
        if agent:
            where.append("agent = ?")
            args.append(agent)
        if cwd:
            where.append("cwd = ?")
            args.append(cwd)
        if query:
            needle = f"%{_escape(query.casefold())}%"
            where.append(
                "(title_search LIKE ? ESCAPE '\\' OR id IN "
                "(SELECT session_id FROM messages WHERE search LIKE ? ESCAPE '\\' "
                "UNION SELECT session_id FROM message_appends "
                "WHERE coalesce(search, text) LIKE ? ESCAPE '\\'))"
            )
            args += [needle, needle, needle]
        sql = (
            "SELECT id, agent, created_at, updated_at, agent_session_id, protocol, cwd, title, "
            "status, message_count FROM sessions"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY updated_at DESC, id LIMIT ? OFFSET ?"
        )
        rows = self.db.execute(sql, (*args, -1 if limit is None else limit, offset)).fetchall()
        return [SessionRow(*row) for row in rows]

    def snapshot(self, session_id: str) -> JsonObject | None:
        """The stored SessionSnapshot (status "stored"), or None."""
        row = self.session_row(session_id)
        return None if row is None else stored_snapshot(self.db, row)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
