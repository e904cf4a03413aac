"""Writes what the editor sees of each session to the store, off the hot path.

``observe`` runs for every acp/sessionUpdate notification the editor side sends, so it only
marks what changed (the text itself is read from the session when flushing); a flush task
wakes at most every ``interval`` seconds, builds one batch (the tail message, new messages,
touched tool calls, the session row) and hands it to the store's thread. A crash loses at
most the last interval; WAL keeps the file consistent. Every orderly end of the server
writes the rest: ``close`` after ``shutdown``, ``close_now`` (synchronous, bounded) when no
event loop will run again (``exit`` alone, stdin closed, a signal).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from acp_lsp.history.schema import search_copy
from acp_lsp.history.snapshot import SessionRow
from acp_lsp.history.store import Batch, HistoryStore, StoreError
from acp_lsp.session import Session
from acp_lsp.session.messages import Message, StreamMark

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]
_CHUNKS = frozenset(("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"))
# Text before an append that is scrubbed with it, so a secret split by a flush is still found.
_OVERLAP = 1024


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class _State:
    session: Session
    created_at: str
    agent_session_id: str | None
    protocol: str | None
    messages: int = 0  # messages stored so far (the last one may still grow)
    entries: int = 0  # timeline entries stored so far
    calls: set[str] = field(default_factory=set)
    extras: bool = True
    dirty: bool = True
    # The last message's index and where its stored copy ends (Message.stream_mark): later
    # text is appended to the store instead of rewriting the whole message.
    tail: tuple[int, StreamMark] | None = None
    # Tool calls in the batch being written, at their revisions: once it is written, the
    # session may drop their large fields (Session.tool_calls_stored).
    written: list[tuple[str, int]] = field(default_factory=list)


class Recorder:
    def __init__(
        self,
        open_store: Callable[[], HistoryStore],
        redact: Callable[[Any], Any],
        on_error: Callable[[str], None],
        spawn: Callable[..., Any],
        retention: Callable[[], tuple[float | None, float | None]] = lambda: (None, None),
        interval: float = 0.25,
    ) -> None:
        self._retention = retention
        self._open_store = open_store
        self._redact = redact
        self._on_error = on_error
        self._spawn = spawn
        self.interval = interval
        self._store: HistoryStore | None = None
        self._opened: HistoryStore | None = None  # the store being opened (or open)
        self._closed = False
        self._failed = False
        self._opening: asyncio.Task[HistoryStore | None] | None = None
        self._states: dict[str, _State] = {}
        self._dirty: list[_State] = []
        self._wake = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None
        self.enabled = True

    # -- the store ---------------------------------------------------------------------------
    async def store(self) -> HistoryStore | None:
        """The open store, opened on first use; None when history is off or unusable, or
        after the end closed it."""
        if not self.enabled or self._failed or self._closed:
            return None
        if self._store is not None:
            return self._store
        if self._opening is None:
            self._opening = asyncio.ensure_future(self._open())
        return await asyncio.shield(self._opening)

    async def _open(self) -> HistoryStore | None:
        store = self._opened = self._open_store()
        try:
            await store.run(store.open)
        except StoreError as exc:
            self._failed = True
            store.shutdown()
            self._on_error(
                f"acp-lsp: session history is off for this run: cannot use {exc} "
                "(live sessions work as before)"
            )
            return None
        self._store = store
        max_age, max_size = self._retention()
        if max_age is not None or max_size is not None:
            try:
                dropped = await store.run(store.prune, max_age, max_size)
                log.info("history retention dropped %d sessions", dropped)
            except Exception as exc:
                log.warning("history retention failed: %s", exc)
        return store

    # -- observing (event loop, cheap) ---------------------------------------------------------
    def track(self, session: Session, agent_session_id: str | None, protocol: str | None) -> None:
        if not self.enabled or self._failed or self._closed:
            return
        state = self._states.get(session.session_id)
        if state is None or state.session is not session:
            state = _State(session, now(), agent_session_id, protocol)
            self._states[session.session_id] = state
        session.set_tool_call_loader(self._read_back)
        self._mark(state)
        if self._loop is None:
            self._loop = self._spawn(self._run(), name="history writer")

    def forget(self, session_id: str) -> None:
        state = self._states.pop(session_id, None)
        if state is not None:
            # its stored copy goes: what the session dropped from memory comes back first
            state.session.restore_tool_calls()
            state.session.set_tool_call_loader(None)

    def _read_back(self, session_id: str, tool_call_ids: list[str]) -> dict[str, JsonObject]:
        store = self._store
        if store is None:
            raise StoreError("the history store is closed")
        return store.read_tool_calls(session_id, tool_call_ids)

    def observe(self, session: Session, updates: list[JsonObject]) -> None:
        state = self._states.get(session.session_id)
        if state is None:
            return
        for update in updates:
            kind = update.get("sessionUpdate")
            if kind == "tool_call":
                call = update.get("toolCall")
                if isinstance(call, dict) and isinstance(call.get("toolCallId"), str):
                    state.calls.add(call["toolCallId"])
            elif kind not in _CHUNKS:
                state.extras = True
        if not state.dirty:
            self._mark(state)

    def changed(self, session: Session, *, extras: bool = False) -> None:
        """Status or title changed (``extras``: what ``Session.extras`` holds changed too)."""
        state = self._states.get(session.session_id)
        if state is not None:
            state.extras = state.extras or extras
            if not state.dirty:
                self._mark(state)

    def _mark(self, state: _State) -> None:
        state.dirty = True
        self._dirty.append(state)
        self._wake.set()

    # -- flushing ------------------------------------------------------------------------------
    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            await asyncio.sleep(self.interval)
            self._wake.clear()
            await self.flush()

    async def flush(self) -> None:
        if self._closed:
            return
        store = await self.store()
        if store is None or self._closed:
            return
        written: list[_State] = []
        batch = self._batch(written)
        if not batch:
            return
        try:
            # queued at once (a read after this flush sees it), and shielded: the end cancels
            # the periodic writer, and a batch it took that the store's thread had not
            # started yet was dropped with it (its messages never stored)
            await asyncio.shield(store.queued(store.write, batch))
        except Exception as exc:  # a full disk or a lost file: say it once, keep serving
            log.warning("history write failed: %s", exc)
            if not self._failed:
                self._failed = True
                self._on_error(f"acp-lsp: session history stopped: {store.path}: {exc}")
            return
        for state in written:
            if self._states.get(state.session.session_id) is state and not self._failed:
                state.session.tool_calls_stored(state.session.session_id, state.written)
            state.written = []

    def _batch(self, written: list[_State] | None = None) -> Batch:
        """What changed since the last flush; from then on it counts as written. The states
        whose tool calls it holds join ``written``."""
        dirty, self._dirty = self._dirty, []
        batch = Batch()
        for state in dirty:
            if state.dirty and self._states.get(state.session.session_id) is state:
                self._collect(state, batch)
                if written is not None and state.written:
                    written.append(state)
        return batch

    def _collect(self, state: _State, batch: Batch) -> None:
        session, sid = state.session, state.session.session_id
        state.dirty = False
        positions: dict[int | str, int] = {}
        for offset, entry in enumerate(session.entries_from(state.entries)):
            positions[entry] = state.entries + offset
            if isinstance(entry, str):
                state.calls.add(entry)
        state.entries += len(positions)
        count = session.message_count()
        for idx in range(max(0, state.messages - 1), count):
            live = session.message(idx)
            if state.tail is not None and state.tail[0] == idx and idx == count - 1:
                appended = self._appended(live, state.tail[1])
                if appended is not None:
                    mark = live.stream_mark()
                    if appended and mark is not None:
                        batch.appends.append((sid, idx, appended, search_copy(appended)))
                        state.tail = (idx, mark)
                    continue
            message = self._redact(live.to_json())
            mark = live.stream_mark()
            batch.messages.append(
                (
                    sid,
                    idx,
                    positions.get(idx),
                    str(message.get("role", "agent")),
                    message.get("messageId"),
                    json.dumps(message.get("content", []), ensure_ascii=False),
                    live.text().casefold(),
                )
            )
            state.tail = (idx, mark) if mark is not None and idx == count - 1 else None
        state.messages = count
        state.written = []
        for call_id in state.calls:
            call = session.tool_call(call_id)
            if call is not None:
                stored = self._redact(call)
                batch.tool_calls.append((sid, call_id, positions.get(call_id), json.dumps(stored)))
                if stored == call:  # a call with a secret scrubbed stays whole in memory
                    state.written.append((call_id, session.tool_call_revision(call_id)))
        state.calls = set()
        batch.sessions.append(
            SessionRow(
                id=sid,
                agent=session.agent,
                created_at=state.created_at,
                updated_at=now(),
                agent_session_id=state.agent_session_id,
                protocol=state.protocol,
                cwd=session.cwd,
                title=session.title,
                status=session.status,
                message_count=count,
                extras=self._redact(session.extras()) if state.extras else None,
            )
        )
        state.extras = False

    def _appended(self, message: Message, mark: StreamMark) -> str | None:
        """The text appended to ``message`` since ``mark``, or None when the stored copy must
        be rewritten (the message changed otherwise, or a secret is in or near the new text)."""
        window = message.text_since(mark, _OVERLAP)
        if window is None:
            return None
        new = window[min(_OVERLAP, mark[1]) :]
        if new and self._redact(window) != window:
            return None
        return new

    def _mark_all(self) -> None:
        """Every session is written once more at the end (its row: status, title, extras)."""
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # its event loop is closed: it is done
                self._loop.cancel()
        for state in self._states.values():
            if not state.dirty:
                state.dirty = True  # not _mark: no loop may run to wake
                self._dirty.append(state)

    async def close(self) -> None:
        if self._closed:
            return
        self._mark_all()
        await self.flush()
        self._closed = True
        if self._store is not None:
            await asyncio.to_thread(self._store.shutdown)
            self._store = None

    def close_now(self, timeout: float) -> None:
        """The last flush, from synchronous code when no event loop will run again (or from a
        loop callback that ends the process): collect here, write and close in the store's
        thread, waiting at most ``timeout`` s. The store's thread runs its queue in order, so
        a write still under way from the last flush lands first; a store not opened yet (the
        first session is younger than one interval) is opened here."""
        if self._closed:
            return
        self._closed = True
        deadline = time.monotonic() + timeout
        store = self._store or self._opened
        if self.enabled and not self._failed and self._states:
            self._mark_all()
            batch = self._batch()
            if store is None and batch:
                store = self._opened = self._open_store()
                store.submit(store.open)
            if store is not None and batch:
                try:
                    store.submit(store.write, batch).result(max(0.0, deadline - time.monotonic()))
                except Exception as exc:  # busy past the deadline, never opened, a full disk
                    log.warning("history: the last write failed: %r", exc)
        if store is not None and not store.shutdown_within(max(0.0, deadline - time.monotonic())):
            log.warning("history: %s still busy at the end; it closes with the process", store.path)
        self._store = None
