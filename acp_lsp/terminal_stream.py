"""Live terminal output for the editor, without flooding it.

One ``TerminalStream`` per terminal turns the output the command writes into
``acp/terminalOutput`` payloads: ``{"data", "truncated"?, "reset"?, "exitStatus"?}``. The
editor applies a message by replacing its copy with ``data`` when ``reset`` is true and
appending it otherwise, then capping its copy to the byte limit on a character boundary (the
same rule the terminal's retained output follows). ``truncated`` describes the editor's
copy once the message is applied: true when it lacks the head of the output (absent means
false, so the latest message's flag is the one to show). After the exit message the editor's
copy equals the terminal's retained output.

Call ``due()`` after every ``feed()`` and ``flush()`` and (re)schedule a flush for then.

Guarantee: the bytes of ``data`` sent over a terminal's life are at most twice the retained
output at exit, however fast or slow the command writes. Why it holds:

* the output retained at exit is at least ``kept_lb = min(retained now, limit - 3)`` (once
  output is dropped, at most three more bytes go to reach a character boundary);
* live messages never bring the total sent above ``kept_lb`` (checked before each send);
* the exit message sends either the unsent output (a suffix of what is retained) or a reset
  to the retained output, so at most the retained output.

Within that budget, the first half of the limit streams as plain appends at
``min_interval``; after that each flush spends at most an eighth of what is left and the
interval grows, so a command that keeps writing still gets (sparser, shorter) updates of its
latest output instead of a frozen view. A backlog larger than the limit is never sent whole:
its head is dropped and the tail goes out as a reset.

The class is pure: it never sleeps or schedules. The caller flushes at ``due()``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from acp_lsp.terminals import OutputBuffer

log = logging.getLogger(__name__)

# Longest UTF-8 character minus one: the most a character-boundary cut drops beyond the limit.
_BOUNDARY_SLACK = 3


class TerminalStream:
    """Batches one terminal's output into editor messages (see the module docstring)."""

    FREE_SHARE = 2  # the first 1/FREE_SHARE of the limit streams without throttling
    SPEND_SHARE = 8  # afterwards a flush spends at most 1/SPEND_SHARE of the budget left
    GROWTH = 1.5  # interval growth per throttled flush
    MAX_INTERVAL = 30.0
    MIN_TAIL_BYTES = 256  # a throttled reset shorter than this is not worth sending

    def __init__(
        self,
        limit_bytes: int | None,
        send: Callable[[dict[str, Any]], None],
        *,
        clock: Callable[[], float] = time.monotonic,
        min_interval: float = 0.05,
    ) -> None:
        if limit_bytes is not None and limit_bytes < 0:
            raise ValueError("limit_bytes must not be negative")
        self._limit = limit_bytes
        self._send = send
        self._clock = clock
        self._min_interval = min_interval
        self._interval = min_interval
        # Mirror of the terminal's retained output (without a limit: only the unsent part).
        self._retained = OutputBuffer(limit_bytes)
        self._unsent = 0  # bytes fed since the last message
        self._pending_since: float | None = None
        self._last_sent: float | None = None
        self._sent = 0  # bytes of data sent so far
        self._synced = True  # the editor's copy equals the retained output
        self._editor_bytes = 0  # size of the editor's copy while not synced
        self._exited = False
        limit = limit_bytes or 0
        self._min_tail = max(4, min(self.MIN_TAIL_BYTES, limit // 16))

    @property
    def bytes_sent(self) -> int:
        """Bytes of ``data`` sent so far, exit message included."""
        return self._sent

    def feed(self, data: str) -> None:
        """New output from the command."""
        if self._exited:
            log.debug("terminal output after exit ignored (%d chars)", len(data))
            return
        n = self._retained.append(data)
        if n and not self._unsent:
            self._pending_since = self._clock()
        self._unsent += n

    def due(self) -> float | None:
        """Clock time of the next useful flush, or None when there is nothing to send."""
        if self._exited or not self._unsent or self._plan() is None:
            return None
        assert self._pending_since is not None
        if self._last_sent is None:
            return self._pending_since
        return max(self._pending_since, self._last_sent + self._interval)

    def flush(self, now: float | None = None) -> None:
        """Send what is pending if a flush is due by ``now``."""
        when = self._clock() if now is None else now
        due = self.due()
        if due is None or when < due:
            return
        plan = self._plan()
        assert plan is not None
        reset, nbytes = plan
        self._emit(reset, nbytes, when, None)
        free = self._limit is None or self._sent <= self._limit // self.FREE_SHARE
        if free:
            self._interval = self._min_interval
        else:
            self._interval = min(self._interval * self.GROWTH, self.MAX_INTERVAL)

    def exit(self, exit_status: dict[str, Any]) -> None:
        """Send everything still owed and the exit status, in one message."""
        if self._exited:
            return
        retained = self._retained.nbytes
        if self._limit is None or (
            self._unsent <= retained
            and (self._synced or self._editor_bytes + self._unsent >= self._limit)
        ):
            self._emit(False, self._unsent, self._clock(), exit_status)
        else:
            self._emit(True, retained, self._clock(), exit_status)
        self._exited = True

    def _plan(self) -> tuple[bool, int] | None:
        """(reset, bytes) for a live flush now, or None if nothing is worth sending."""
        if self._limit is None:
            return (False, self._unsent)
        retained = self._retained.nbytes
        overflowed = self._unsent > retained  # part of the backlog was already dropped
        allowance = self._allowance()
        if not overflowed and self._unsent <= allowance:
            return (False, self._unsent)
        tail = min(allowance, retained)
        if tail == retained or tail >= self._min_tail:
            return (True, tail) if tail else None
        return None

    def _allowance(self) -> int:
        """Bytes a live flush may send now."""
        assert self._limit is not None
        floor = max(self._limit - _BOUNDARY_SLACK, 0)
        kept_lb = min(self._retained.nbytes, floor)
        free = self._limit // self.FREE_SHARE - self._sent
        throttled = (floor - self._sent) // self.SPEND_SHARE
        return max(0, min(kept_lb - self._sent, max(free, throttled)))

    def _emit(
        self, reset: bool, nbytes: int, now: float, exit_status: dict[str, Any] | None
    ) -> None:
        retained = self._retained.nbytes
        if self._limit is None:
            data = self._retained.text()
            self._retained.clear()
        else:
            data = self._retained.tail(nbytes)
        size = len(data.encode("utf-8", "surrogatepass"))
        self._sent += size
        if reset:
            self._synced = size == retained
            self._editor_bytes = size
        elif not self._synced:
            assert self._limit is not None
            self._editor_bytes += size
            self._synced = self._editor_bytes >= self._limit
        message: dict[str, Any] = {"data": data}
        if reset:
            message["reset"] = True
        if self._retained.truncated or not self._synced:
            message["truncated"] = True
        if exit_status is not None:
            message["exitStatus"] = exit_status
        self._unsent = 0
        self._pending_since = None
        self._last_sent = now
        self._send(message)
