"""The process tree through psutil, the reader macOS and Windows use.

A portable tree (Python processes, one in a group of its own) is found and stopped whole by
every reader this platform has (Linux: /proc and psutil; elsewhere psutil). On Linux, every
scenario of test_wire_tree.py runs again with psutil in place of /proc (Linux itself keeps
/proc, cheaper for the 0.2 s note: bench/bench_process_tree.py).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from types import ModuleType

import pytest

from acp_lsp.backends import wire_tree
from acp_lsp.platform import procs, procs_psutil
from acp_lsp.platform.stop import new_group

READERS = sorted({procs_psutil, *([procs] if sys.platform == "linux" else [])}, key=str)

SLEEP = [sys.executable, "-c", "import time; time.sleep(300)"]
AGENT = f"""
import subprocess, sys, time
kid = subprocess.Popen({SLEEP!r})
lone = subprocess.Popen({SLEEP!r}, **{new_group()!r})
print(kid.pid, lone.pid, flush=True)
time.sleep(300)
"""


@pytest.fixture
def portable_agent() -> Iterator[tuple[subprocess.Popen[str], int, int]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", AGENT], stdout=subprocess.PIPE, text=True, **new_group()
    )
    assert proc.stdout is not None
    kid, lone = (int(pid) for pid in proc.stdout.readline().split())
    yield proc, kid, lone
    for pid in (kid, lone):
        try:
            os.kill(pid, 9 if sys.platform != "win32" else 15)
        except OSError:
            pass
    proc.kill()
    proc.wait()


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__.rsplit(".", 1)[-1])
def test_a_tree_with_a_child_in_a_group_of_its_own_is_found_and_stopped_whole(
    reader: ModuleType,
    portable_agent: tuple[subprocess.Popen[str], int, int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(wire_tree, "procs", reader)
    proc, kid, lone = portable_agent
    start = wire_tree.started(proc.pid)
    noted = wire_tree.descendants(proc.pid)
    assert {kid, lone} <= {p.pid for p in noted}
    assert {proc.pid, kid, lone} <= {p.pid for p in wire_tree.process_tree(proc.pid, start)}
    assert asyncio.run(wire_tree.stop_tree(proc.pid, start, 0.5, 5.0, noted)) == []
    assert proc.wait(timeout=5) is not None
    assert reader.read(kid) is None and reader.read(lone) is None
    assert reader.read(2**22 + 1) is None  # above Linux's pid_max: no such process


if sys.platform == "linux":  # test_wire_tree.py sets up with /proc and setsid(1)
    from tests.unit.test_wire_tree import (
        agent,
        test_a_dead_agents_orphans_are_stopped_from_its_noted_tree,
        test_a_note_taken_after_the_program_died_keeps_what_it_orphaned,
        test_a_reused_pid_is_not_the_agent,
        test_processes_that_are_not_the_agents_are_left_alone,
        test_the_tree_holds_children_in_and_out_of_the_agents_session,
    )

    __all__ = [
        "agent",
        "test_a_dead_agents_orphans_are_stopped_from_its_noted_tree",
        "test_a_note_taken_after_the_program_died_keeps_what_it_orphaned",
        "test_a_reused_pid_is_not_the_agent",
        "test_processes_that_are_not_the_agents_are_left_alone",
        "test_the_tree_holds_children_in_and_out_of_the_agents_session",
    ]

    @pytest.fixture(autouse=True)
    def psutil_reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
        if "reader" not in request.fixturenames:  # the imported scenarios
            monkeypatch.setattr(wire_tree, "procs", procs_psutil)

    def test_psutil_sees_this_process_as_proc_does() -> None:
        assert procs_psutil.read(os.getpid()) is not None
        me, seen = procs_psutil.read(os.getpid()), procs.read(os.getpid())
        assert me is not None and seen is not None
        assert (me.ppid, me.pgid, me.sid) == (seen.ppid, seen.pgid, seen.sid)
