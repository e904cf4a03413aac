"""An agent's whole process tree, found in /proc, so that none of it outlives the agent.

The agent leads its own session and process group, but not everything it starts stays there:
Claude Code runs each Bash command in a new session of its own (setsid), so signalling the
agent's group misses the command, and when the agent is killed its children are orphaned
and keep running. The tree is: every live process of the agent's session or group, and every
descendant of those (by parent pid), wherever its own group is. A child of the agent itself
that left its session is orphaned (to init) the moment the agent dies, so nothing links it to
the agent any more: the agent's descendants are also noted while it works (``descendants``),
and those still running are stopped with the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Proc:
    pid: int
    ppid: int
    pgid: int
    sid: int
    start: int  # start time in clock ticks: tells a reused pid from the one we saw

    def same_process(self) -> bool:
        """Still the process we saw (alive and not a zombie)."""
        now = _read(self.pid)
        return now is not None and now.start == self.start


def _read(pid: int) -> Proc | None:
    """The process ``pid`` from /proc, or None when it is gone or a zombie."""
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


def _all() -> list[Proc]:
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.isdigit():
            proc = _read(int(entry))
            if proc is not None:
                found.append(proc)
    return found


def started(pid: int) -> int | None:
    """When ``pid`` started (clock ticks), None when it is gone."""
    proc = _read(pid)
    return proc.start if proc is not None else None


def process_tree(
    leader: int, leader_start: int | None = None, noted: list[Proc] | None = None
) -> list[Proc]:
    """Live members of the session or group ``leader`` leads, and all their descendants;
    with ``noted`` (descendants found earlier), also those still running, the members of the
    sessions and groups they lead, and their descendants.

    ``leader_start`` (from :func:`started`) guards against a reused pid: the kernel gives a
    pid again only once no session or group uses it, so a live ``leader`` that started at
    another time means the agent's tree is gone."""
    now = started(leader)
    if leader_start is not None and now is not None and now != leader_start:
        return []
    procs = _all()
    children: dict[int, list[Proc]] = {}
    for proc in procs:
        children.setdefault(proc.ppid, []).append(proc)
    starts = {p.pid: p.start for p in procs}
    noted = [n for n in noted or [] if starts.get(n.pid, n.start) == n.start]  # pid not reused
    roots = {n.pid for n in noted if n.pid in starts}  # still running
    # a session or group stays while it has members, and its id is not given again meanwhile
    leaders = {leader} | {n.pid for n in noted if n.pid in (n.sid, n.pgid)}
    todo = [p for p in procs if p.pid in roots or p.sid in leaders or p.pgid in leaders]
    seen: dict[int, Proc] = {}
    while todo:
        proc = todo.pop()
        if proc.pid in seen or proc.pid == os.getpid():
            continue
        seen[proc.pid] = proc
        todo.extend(children.get(proc.pid, []))
    return list(seen.values())


def descendants(pid: int) -> list[Proc]:
    """``pid``'s live descendants, read from /proc/PID/task/TID/children (a few small files,
    cheap enough to do every second); the full scan where the kernel lacks those files."""
    found: dict[int, Proc] = {}
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children", "rb") as fh:
                    kids = fh.read().split()
            except FileNotFoundError:
                if parent == pid and task == tasks[0]:
                    return [p for p in process_tree(pid) if p.pid != pid]
                continue
            except OSError:
                continue
            for kid in kids:
                proc = _read(int(kid))
                if proc is not None and proc.pid not in found:
                    found[proc.pid] = proc
                    todo.append(proc.pid)
    return list(found.values())


def signal_tree(procs: list[Proc], sig: signal.Signals) -> None:
    for proc in procs:
        if proc.same_process():  # never signal a pid that was reused meanwhile
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(proc.pid, sig)


async def stop_tree(
    leader: int,
    leader_start: int | None,
    grace: float,
    kill_wait: float,
    seen: list[Proc] | None = None,
) -> list[Proc]:
    """SIGTERM the tree of ``leader`` (and those of ``seen``, its descendants found earlier,
    that still run), SIGKILL what is left after ``grace`` seconds; returns the processes that
    survived ``kill_wait`` more seconds (empty when all are gone)."""
    procs = _merge([p for p in seen or [] if p.same_process()], process_tree(leader, leader_start))
    if not procs:
        return []
    signal_tree(procs, signal.SIGTERM)
    if await _gone(procs, grace):
        return []
    procs = _merge(procs, process_tree(leader, leader_start, seen))  # started meanwhile
    signal_tree(procs, signal.SIGKILL)
    await _gone(procs, kill_wait)
    return [p for p in procs if p.same_process()]


def noted_with(noted: list[Proc], found: list[Proc]) -> list[Proc]:
    """Those of ``noted`` still running, and ``found``."""
    return _merge([p for p in noted if p.same_process()], found)


def _merge(old: list[Proc], new: list[Proc]) -> list[Proc]:
    known = {(p.pid, p.start) for p in old}
    return old + [p for p in new if (p.pid, p.start) not in known]


async def _gone(procs: list[Proc], timeout: float) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while any(p.same_process() for p in procs):
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True
