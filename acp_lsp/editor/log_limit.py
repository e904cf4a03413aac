"""A flooding agent's stderr must not flood the editor's log: a per-second budget."""

from __future__ import annotations

import time
from collections.abc import Callable


class LogLimiter:
    """At most ``rate`` lines a second to the editor; the rest are counted and summarised."""

    def __init__(self, rate: int = 50, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self._clock = clock
        self._window = 0.0
        self._count = 0
        self.dropped = 0

    def allow(self) -> tuple[bool, int]:
        now = self._clock()
        if now - self._window >= 1.0:
            dropped, self.dropped = self.dropped, 0
            self._window, self._count = now, 0
            self._count += 1
            return True, dropped
        if self._count < self.rate:
            self._count += 1
            return True, 0
        self.dropped += 1
        return False, 0
