"""Processes read from Linux's /proc: a stat file per process, a children file per thread.

Kept on Linux beside psutil (:mod:`.procs_psutil`): the agent's tree is noted every 0.2 s,
and reading its few ``children`` files costs a fraction of a full scan
(bench/bench_process_tree.py).
"""

from __future__ import annotations

import os

from acp_lsp.platform.proc import Proc


def read(pid: int) -> Proc | None:
    """The process ``pid``, or None when it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    # after "pid (comm) ": state ppid pgrp session tty tpgid flags ... starttime is field 22
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 20 or fields[0] == b"Z":
        return None
    try:
        return Proc(pid, int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]))
    except ValueError:
        return None


def scan() -> list[Proc]:
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.isdigit():
            proc = read(int(entry))
            if proc is not None:
                found.append(proc)
    return found


def descendants(pid: int) -> list[Proc] | None:
    """``pid``'s live descendants from /proc/PID/task/TID/children (a few small files); None
    where the kernel lacks those files (the caller scans instead)."""
    found: dict[int, Proc] = {}
    todo = [pid]
    while todo:
        kids = _children(todo.pop())
        if kids is None:
            return None
        for kid in kids:
            proc = read(kid)
            if proc is not None and proc.pid not in found:
                found[proc.pid] = proc
                todo.append(proc.pid)
    return list(found.values())


def _children(pid: int) -> list[int] | None:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []  # gone
    kids: list[int] = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as fh:
                kids += [int(kid) for kid in fh.read().split()]
        except FileNotFoundError:
            if task == tasks[0]:
                return None
        except OSError:
            continue
    return kids
