"""An agent's process tree (acp_lsp.backends.wire_tree), on real processes: what the bridge
stops when an agent dies, and what it must never touch."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_lsp.backends.wire_tree import (
    descendants,
    noted_with,
    process_tree,
    started,
    stop_tree,
)

# /proc (the reader under test) and setsid(1) from util-linux: tests/unit/test_platform_procs.py
# has the tree test every platform runs (psutil)
pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="reads /proc and starts setsid(1): Linux's process tree"
)

# an "agent" leading its own session, with a child in its group and one in a session of its
# own (as Claude Code runs Bash), each a sleep; the child pids go to the file named by $0
AGENT = 'setsid sleep 300 & lone=$!; sleep 301 & kid=$!; echo "$kid $lone" > "$0"; exec sleep 302'


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, int]]:
    pids = tmp_path / "pids"
    proc = subprocess.Popen(["/bin/sh", "-c", AGENT, str(pids)], start_new_session=True)
    deadline = time.monotonic() + 10
    while not (pids.exists() and pids.read_text().strip()):
        assert time.monotonic() < deadline, "the agent did not start its children"
        time.sleep(0.01)
    kid, lone = (int(pid) for pid in pids.read_text().split())
    # `setsid` may not have left the agent's session yet when the pids are written (a loaded
    # machine): the tests need it gone, as Claude Code's Bash is
    while session_of(lone) != lone:
        assert time.monotonic() < deadline, "the lone child did not start its own session"
        time.sleep(0.01)
    yield proc, kid, lone
    for pid in (proc.pid, kid, lone):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    proc.wait()


def session_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rfind(")") + 2 :].split()[3])


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def test_the_tree_holds_children_in_and_out_of_the_agents_session(
    agent: tuple[subprocess.Popen[bytes], int, int],
) -> None:
    proc, kid, lone = agent
    assert {p.pid for p in process_tree(proc.pid, started(proc.pid))} == {proc.pid, kid, lone}
    assert {p.pid for p in descendants(proc.pid)} == {kid, lone}


def test_a_reused_pid_is_not_the_agent(agent: tuple[subprocess.Popen[bytes], int, int]) -> None:
    proc, _kid, _lone = agent
    start = started(proc.pid)
    assert start is not None
    assert process_tree(proc.pid, start + 1) == []  # another process now has the pid


def test_a_dead_agents_orphans_are_stopped_from_its_noted_tree(
    agent: tuple[subprocess.Popen[bytes], int, int],
) -> None:
    proc, kid, lone = agent
    start = started(proc.pid)
    noted = descendants(proc.pid)
    proc.kill()
    proc.wait()
    # the child in its own session now belongs to init: only the note links it to the agent
    assert lone not in {p.pid for p in process_tree(proc.pid, start)}
    left = asyncio.run(stop_tree(proc.pid, start, 0.5, 2.0, noted))
    assert left == []
    assert not alive(kid) and not alive(lone)


def test_a_note_taken_after_the_program_died_keeps_what_it_orphaned(tmp_path: Path) -> None:
    # a wrapper (as codex-acp's node script) whose program ran a command in a session of its
    # own; the program dies, the wrapper lives on a moment: a note taken then no longer sees
    # the command under the wrapper, and must not forget it
    pids = tmp_path / "pids"
    program = f"setsid sleep 303 & echo $$ $! > {pids}; exec sleep 304"
    wrapper = subprocess.Popen(["/bin/sh", "-c", f"/bin/sh -c '{program}'; sleep 305"])
    try:
        deadline = time.monotonic() + 10
        while not (pids.exists() and pids.read_text().strip()):
            assert time.monotonic() < deadline, "the program did not start its command"
            time.sleep(0.01)
        prog, command = (int(pid) for pid in pids.read_text().split())
        noted = descendants(wrapper.pid)
        assert {prog, command} <= {p.pid for p in noted}
        os.kill(prog, 9)
        deadline = time.monotonic() + 10
        while command in {p.pid for p in descendants(wrapper.pid)}:
            assert time.monotonic() < deadline, "the command was not orphaned"
            time.sleep(0.01)
        noted = noted_with(noted, descendants(wrapper.pid))
        assert command in {p.pid for p in noted} and prog not in {p.pid for p in noted}
        assert asyncio.run(stop_tree(wrapper.pid, started(wrapper.pid), 0.5, 2.0, noted)) == []
        assert not alive(command)
    finally:
        for pid in [wrapper.pid, *(int(p) for p in pids.read_text().split())]:
            try:
                os.kill(pid, 9)
            except (ProcessLookupError, ValueError):
                pass
        wrapper.wait()


def test_processes_that_are_not_the_agents_are_left_alone(
    agent: tuple[subprocess.Popen[bytes], int, int],
) -> None:
    proc, _kid, _lone = agent
    other = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        start = started(proc.pid)
        asyncio.run(stop_tree(proc.pid, start, 0.5, 2.0, descendants(proc.pid)))
        assert proc.wait(timeout=5) == -9 or proc.returncode == -15  # the agent: stopped
        assert alive(other.pid)  # a process of its own, never the agent's: untouched
    finally:
        other.kill()
        other.wait()
