"""Processes read through psutil (macOS, Windows): pid, parent and create time; the group
and session from the POSIX calls where there are such things."""

from __future__ import annotations

import os
import sys

import psutil

from acp_lsp.platform.proc import Proc


def _group(pid: int) -> tuple[int, int]:
    if sys.platform == "win32":
        return -1, -1
    else:
        try:
            return os.getpgid(pid), os.getsid(pid)
        except OSError:  # gone meanwhile, or (macOS) another user's session
            return -1, -1


def read(pid: int) -> Proc | None:
    """The process ``pid``, or None when it is gone or a zombie."""
    try:
        proc = psutil.Process(pid)
        with proc.oneshot():
            if proc.status() == psutil.STATUS_ZOMBIE:
                return None
            ppid, start = proc.ppid(), proc.create_time()
    except psutil.Error:
        return None
    return Proc(pid, ppid, *_group(pid), start)


def scan() -> list[Proc]:
    found = []
    for proc in psutil.process_iter(["ppid", "create_time", "status"], ad_value=None):
        info = proc.info
        if info["status"] == psutil.STATUS_ZOMBIE or info["create_time"] is None:
            continue
        pgid, sid = _group(proc.pid)
        found.append(Proc(proc.pid, info["ppid"] or 0, pgid, sid, info["create_time"]))
    return found


def descendants(pid: int) -> list[Proc] | None:
    """``pid``'s live descendants (psutil maps every parent in one pass)."""
    try:
        kids = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []
    found = [read(kid.pid) for kid in kids]
    return [proc for proc in found if proc is not None]
