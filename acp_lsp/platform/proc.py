"""One process as the tree code sees it, whichever reader found it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Proc:
    pid: int
    ppid: int
    pgid: int  # -1 where the platform has no process groups (Windows)
    sid: int  # -1 where it has no sessions (Windows)
    # when it started (/proc clock ticks, psutil's create time): tells a reused pid from the
    # process we saw; compared only with starts from the same reader
    start: float
