"""An agent's whole process tree, so that none of it outlives the agent (processes as
:mod:`acp_lsp.platform.procs` reads them: /proc on Linux, psutil elsewhere).

The agent leads its own session and process group, but not everything it starts stays there:
Claude Code runs each Bash command in a new session of its own (setsid), so signalling the
agent's group misses the command, and when the agent is killed its children are orphaned
and keep running. The tree is: every live process of the agent's session or group, and every
descendant of those (by parent pid), wherever its own group is. A child of the agent itself
that left its session is orphaned (to init) the moment the agent dies, so nothing links it to
the agent any more: the agent's descendants are also noted while it works (``descendants``),
and those still running are stopped with the rest. Windows has no sessions or groups: there
the tree is the agent's descendants, by parent pid.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

from acp_lsp.platform import procs
from acp_lsp.platform.proc import Proc
from acp_lsp.platform.stop import KILL

__all__ = ["Proc", "descendants", "noted_with", "process_tree", "started", "stop_tree"]


def _same_process(proc: Proc) -> bool:
    """Still the process we saw (alive and not a zombie)."""
    now = procs.read(proc.pid)
    return now is not None and now.start == proc.start


def started(pid: int) -> float | None:
    """When ``pid`` started (in the reader's unit), None when it is gone."""
    proc = procs.read(pid)
    return proc.start if proc is not None else None


def process_tree(
    leader: int, leader_start: float | None = None, noted: list[Proc] | None = None
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
    found = procs.scan()
    children: dict[int, list[Proc]] = {}
    for proc in found:
        children.setdefault(proc.ppid, []).append(proc)
    starts = {p.pid: p.start for p in found}
    noted = [n for n in noted or [] if starts.get(n.pid, n.start) == n.start]  # pid not reused
    roots = {n.pid for n in noted if n.pid in starts}  # still running
    # a session or group stays while it has members, and its id is not given again meanwhile
    leaders = {leader} | {n.pid for n in noted if n.pid in (n.sid, n.pgid)}
    todo = [p for p in found if p.pid in roots or p.sid in leaders or p.pgid in leaders]
    seen: dict[int, Proc] = {}
    while todo:
        proc = todo.pop()
        if proc.pid in seen or proc.pid == os.getpid():
            continue
        seen[proc.pid] = proc
        todo.extend(children.get(proc.pid, []))
    return list(seen.values())


def descendants(pid: int) -> list[Proc]:
    """``pid``'s live descendants, cheap enough to note every 0.2 s on Linux (its children
    files); the full scan where the platform lists no children."""
    found = procs.descendants(pid)
    if found is None:
        return [p for p in process_tree(pid) if p.pid != pid]
    return found


def signal_tree(tree: list[Proc], sig: signal.Signals) -> None:
    for proc in tree:
        if _same_process(proc):  # never signal a pid that was reused meanwhile
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(proc.pid, sig)


async def stop_tree(
    leader: int,
    leader_start: float | None,
    grace: float,
    kill_wait: float,
    seen: list[Proc] | None = None,
) -> list[Proc]:
    """SIGTERM the tree of ``leader`` (and those of ``seen``, its descendants found earlier,
    that still run), SIGKILL what is left after ``grace`` seconds; returns the processes that
    survived ``kill_wait`` more seconds (empty when all are gone)."""
    tree = _merge([p for p in seen or [] if _same_process(p)], process_tree(leader, leader_start))
    if not tree:
        return []
    signal_tree(tree, signal.SIGTERM)
    if await _gone(tree, grace):
        return []
    tree = _merge(tree, process_tree(leader, leader_start, seen))  # started meanwhile
    signal_tree(tree, KILL)
    await _gone(tree, kill_wait)
    return [p for p in tree if _same_process(p)]


def noted_with(noted: list[Proc], found: list[Proc]) -> list[Proc]:
    """Those of ``noted`` still running, and ``found``."""
    return _merge([p for p in noted if _same_process(p)], found)


def _merge(old: list[Proc], new: list[Proc]) -> list[Proc]:
    known = {(p.pid, p.start) for p in old}
    return old + [p for p in new if (p.pid, p.start) not in known]


async def _gone(tree: list[Proc], timeout: float) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while any(_same_process(p) for p in tree):
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True
