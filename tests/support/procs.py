"""Whether a process still runs, on every platform: psutil reads /proc on Linux and asks the
system on macOS and Windows."""

from __future__ import annotations

import psutil


def running(pid: int) -> bool:
    """Alive and not a zombie nobody reaped yet."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:  # gone (a ZombieProcess is one too)
        return False
