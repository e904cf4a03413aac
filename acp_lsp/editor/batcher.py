"""Batched, strictly ordered acp/sessionUpdate notifications.

Updates are queued per session and flushed after a short window, so an agent streaming
thousands of chunks reaches the editor as a few larger notifications. Adjacent plain text
chunks of one message are joined; nothing is reordered or dropped. ``seq`` rises by one per
notification and session, and a session stays *held* until the response that first names it
has gone out (its snapshot already contains what was queued meanwhile).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from acp_lsp.session import Session

JsonObject = dict[str, Any]
Send = Callable[[str, JsonObject], None]

_TEXT_KINDS = frozenset({"agent_message_chunk", "agent_thought_chunk", "user_message_chunk"})


class _TextRun:
    """Consecutive plain-text chunks of one message, joined lazily at flush time."""

    __slots__ = ("kind", "message_id", "parts")

    def __init__(self, kind: str, message_id: Any, text: str) -> None:
        self.kind = kind
        self.message_id = message_id
        self.parts = [text]

    def to_update(self) -> JsonObject:
        update: JsonObject = {
            "sessionUpdate": self.kind,
            "content": {"type": "text", "text": "".join(self.parts)},
        }
        if self.message_id is not None:
            update["messageId"] = self.message_id
        return update


def _joinable_text(update: JsonObject) -> str | None:
    """The text of an update of a _TEXT_KINDS kind that is a bare text chunk (may be joined)."""
    size = len(update)
    if size > 3 or (size == 3 and "messageId" not in update):
        return None
    content = update.get("content")
    if not isinstance(content, dict) or len(content) != 2 or content.get("type") != "text":
        return None
    text = content.get("text")
    return text if isinstance(text, str) else None


class _Queue:
    __slots__ = ("held", "items", "session")

    def __init__(self, session: Session) -> None:
        self.session = session
        self.items: list[JsonObject | _TextRun] = []
        self.held = False


class UpdateBatcher:
    """Queues editor-facing updates per session and flushes them in order."""

    def __init__(self, send: Send, method: str, flush_s: float = 0.03) -> None:
        self._send = send
        self._method = method
        self.flush_s = flush_s
        self._queues: dict[str, _Queue] = {}
        self._timer: asyncio.TimerHandle | None = None
        self.notifications_sent = 0

    def _queue(self, session: Session) -> _Queue:
        queue = self._queues.get(session.session_id)
        if queue is None:
            queue = self._queues[session.session_id] = _Queue(session)
        return queue

    def publish(self, session: Session, updates: list[JsonObject]) -> None:
        if not updates:
            return
        queue = self._queues.get(session.session_id) or self._queue(session)
        items = queue.items
        # The hot path of streaming: one call per agent chunk, so kept flat.
        for update in updates:
            kind: Any = update.get("sessionUpdate")
            text = _joinable_text(update) if kind in _TEXT_KINDS else None
            if text is None:
                items.append(update)
                continue
            message_id = update.get("messageId")
            last = items[-1] if items else None
            if type(last) is _TextRun and last.kind == kind and last.message_id == message_id:
                last.parts.append(text)
            else:
                items.append(_TextRun(kind, message_id, text))
        if self._timer is None:
            self._schedule()

    def _schedule(self) -> None:
        if self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return
            self._timer = loop.call_later(self.flush_s, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self.flush_all()

    def hold(self, session: Session) -> None:
        """Queue but do not send until ``release_after_response``: the session is new."""
        self._queue(session).held = True

    def release_after_response(self, session: Session) -> None:
        """Drop what the snapshot already holds, then release once the response is out.

        The handler's response is sent from a done-callback scheduled when it returns; a
        callback scheduled now and rescheduled once runs after it (asyncio runs callbacks
        FIFO)."""
        queue = self._queue(session)
        queue.items.clear()
        loop = asyncio.get_running_loop()

        def release() -> None:
            queue.held = False
            if queue.items:
                self._schedule()

        loop.call_soon(loop.call_soon, release)

    def flush(self, session: Session) -> None:
        queue = self._queues.get(session.session_id)
        if queue is not None and queue.items and not queue.held:
            self._flush_queue(queue)

    def flush_all(self) -> None:
        for queue in list(self._queues.values()):
            if queue.items and not queue.held:
                self._flush_queue(queue)

    def _flush_queue(self, queue: _Queue) -> None:
        items, queue.items = queue.items, []
        updates = [item.to_update() if isinstance(item, _TextRun) else item for item in items]
        session = queue.session
        session.seq += 1
        self.notifications_sent += 1
        self._send(
            self._method,
            {"sessionId": session.session_id, "seq": session.seq, "updates": updates},
        )

    def rekey(self, session: Session, old_id: str) -> None:
        queue = self._queues.pop(old_id, None)
        if queue is not None:
            self._queues[session.session_id] = queue

    def forget(self, session: Session) -> None:
        self.flush(session)
        self._queues.pop(session.session_id, None)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
