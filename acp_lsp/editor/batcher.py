"""Batched, strictly ordered acp/sessionUpdate notifications, flushed adaptively.

An update that arrives while the session's editor channel is idle goes out at once (on the
next turn of the event loop, so updates read together still travel together). While the
agent streams faster than that, updates queue and are joined: the gap between two
notifications of a session is at least ``min_gap`` (1 / ``maxNotificationsPerSecond``:
10 ms, ~100 notifications a second, by default), and while the stream keeps coming it
grows by half each time up to ``flush_s`` (the ``flushMs`` setting, the longest an update
may wait, never below ``min_gap``), falling back to ``min_gap`` as soon as
the channel was idle. Adjacent plain text chunks of one message are joined; nothing is
reordered or dropped. ``seq`` rises by one per notification and session, and a session stays
*held* until the response that first names it has gone out (its snapshot already contains
what was queued meanwhile). Status changes, permission prompts and the end of a turn call
``flush`` (at once, whatever the gap).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from acp_lsp.session import Session

JsonObject = dict[str, Any]
Send = Callable[[str, JsonObject], None]

# Notifications that may go right behind another one (then one per min_gap at most).
BURST = 2
# A new session's updates wait for the response that names it; this long at most.
RELEASE_FALLBACK_S = 5.0
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
    __slots__ = ("credit", "early", "gap", "held", "items", "last_sent", "session", "timer")

    def __init__(self, session: Session) -> None:
        self.session = session
        self.items: list[JsonObject | _TextRun] = []
        self.held = False
        self.last_sent = float("-inf")
        self.gap = 0.0  # spacing before the next notification may go
        self.credit = BURST  # notifications that may go early, before the gap is over
        self.early = False  # the next flush goes before the gap is over, on credit
        self.timer: Any = None  # the scheduled flush (an asyncio handle)


class UpdateBatcher:
    """Queues editor-facing updates per session and flushes them in order.

    ``adaptive=False`` keeps a fixed window of ``flush_s`` after the first queued update (what
    the unit tests of ordering and joining drive by hand)."""

    GROWTH = 1.5
    FLOOD_PARTS = 64  # updates per notification that mark a flood (> 6,400/s at 10 ms)

    def __init__(
        self,
        send: Send,
        method: str,
        flush_s: float = 0.03,
        *,
        adaptive: bool = True,
        min_gap: float = 0.01,
        clock: Callable[[], float] = time.monotonic,
        schedule: Callable[[float, Callable[[], None]], Any] | None = None,
    ) -> None:
        self._send = send
        self._method = method
        self.flush_s = flush_s
        self.adaptive = adaptive
        self.min_gap = min_gap
        self._clock = clock
        self._schedule_at = schedule  # (delay, fn) -> a handle with cancel(); tests inject it
        self._queues: dict[str, _Queue] = {}
        # id -> the session object that holds it now (a resume gives a dead one's id to a new
        # object): a late update of the old object must not take the id's queue back
        self._owners: dict[str, Session] = {}
        self.notifications_sent = 0

    def _queue(self, session: Session) -> _Queue:
        queue = self._queues.get(session.session_id)
        if queue is None or queue.session is not session:
            # a session resumed under the id of one that died is another object: the dead
            # one's queue (its seq counter, its hold) must not carry the new one's updates
            if queue is not None and queue.timer is not None:
                queue.timer.cancel()
            queue = self._queues[session.session_id] = _Queue(session)
        return queue

    def publish(self, session: Session, updates: list[JsonObject]) -> None:
        if not updates:
            return
        queue = self._queues.get(session.session_id)
        if queue is None or queue.session is not session:
            owner = self._owners.get(session.session_id)
            if owner is not None and owner is not session:
                return  # an update of a session object whose id another one holds now
            queue = self._queue(session)
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
        if queue.timer is None and not queue.held:
            self._schedule(queue)

    def _delay(self, queue: _Queue) -> float:
        """The wait before the queue's next notification; marks the queue early when its
        burst credit lets it go before the gap ends (the flush then spends that credit)."""
        if not self.adaptive:
            return self.flush_s
        wait = queue.last_sent + queue.gap - self._clock()
        if wait <= 0:
            return 0.0
        # a few may go early: the first chunk right behind the prompt's echo or a status
        queue.early = queue.credit > 0
        return 0.0 if queue.early else wait

    def _schedule(self, queue: _Queue) -> None:
        delay = self._delay(queue)

        def due() -> None:
            queue.timer = None
            if queue.items and not queue.held:
                self._flush_queue(queue)

        if self._schedule_at is not None:
            queue.timer = self._schedule_at(delay, due)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        # idle: the next loop turn, so what the agent sent together still goes together
        queue.timer = loop.call_soon(due) if delay <= 0 else loop.call_later(delay, due)

    def hold(self, session: Session) -> None:
        """Queue but do not send until ``release_after_response``: the session is new."""
        self._owners[session.session_id] = session
        self._queue(session).held = True

    def release_after_response(
        self,
        session: Session,
        after_response: Callable[[Callable[[], None]], bool] | None = None,
    ) -> None:
        """Drop what the snapshot already holds, then release once the response is out.

        ``after_response`` registers a callback to run once the answer to the current request
        is written (the protocol knows); without one, or outside a request, a callback
        scheduled now and rescheduled once runs after a response sent from the handler's
        done-callback (asyncio runs callbacks FIFO). A late fallback keeps a lost answer from
        holding the session forever."""
        queue = self._queue(session)
        queue.items.clear()
        loop = asyncio.get_running_loop()

        def release() -> None:
            if not queue.held:
                return
            queue.held = False
            if queue.items and queue.timer is None:
                self._schedule(queue)

        if after_response is not None and after_response(release):
            loop.call_later(RELEASE_FALLBACK_S, release)
        else:
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
        if queue.timer is not None:
            queue.timer.cancel()
            queue.timer = None
        items, queue.items = queue.items, []
        updates = [item.to_update() if isinstance(item, _TextRun) else item for item in items]
        session = queue.session
        session.seq += 1
        self.notifications_sent += 1
        now = self._clock()
        since = now - queue.last_sent
        if since > queue.gap + self.min_gap:
            # after a pause: the smallest gap, and the burst credit back
            queue.gap, queue.credit = self.min_gap, BURST
        elif queue.early or since < queue.gap - 0.001:
            # went early, on credit (a timer may fire up to the clock's resolution early: that
            # is on time; a flush let through on credit is early however close to the gap)
            queue.credit = max(0, queue.credit - 1)
        else:
            # streaming: a flood (many updates per notification) widens the gap up to
            # flushMs, so the editor gets fewer, larger messages; a steady stream keeps
            # (or shrinks back to) the smallest gap, so each chunk waits as little as the
            # cap of one notification per min_gap allows
            parts = sum(len(i.parts) if type(i) is _TextRun else 1 for i in items)
            queue.gap = (
                max(self.min_gap, min(self.flush_s, queue.gap * self.GROWTH))
                if parts >= self.FLOOD_PARTS
                else max(self.min_gap, queue.gap / self.GROWTH)
            )
        queue.last_sent = now
        queue.early = False
        self._send(
            self._method,
            {"sessionId": session.session_id, "seq": session.seq, "updates": updates},
        )

    def rekey(self, session: Session, old_id: str) -> None:
        queue = self._queues.pop(old_id, None)
        stale = self._queues.pop(session.session_id, None)
        if stale is not None and stale.timer is not None:
            stale.timer.cancel()  # a dead session's: none of it goes out under the new owner
        if queue is not None:
            self._queues[session.session_id] = queue
        self._owners.pop(old_id, None)
        self._owners[session.session_id] = session

    def forget(self, session: Session) -> None:
        self.flush(session)
        if self._owners.get(session.session_id) is session:
            del self._owners[session.session_id]
        queue = self._queues.pop(session.session_id, None)
        if queue is not None and queue.timer is not None:
            queue.timer.cancel()

    def close(self) -> None:
        for queue in self._queues.values():
            if queue.timer is not None:
                queue.timer.cancel()
                queue.timer = None
