"""The process tree through psutil, the reader macOS and Windows use, on Linux: every
scenario of test_wire_tree.py again (the tree, a reused pid, a dead agent's orphans, what is
never the agent's), with acp_lsp.platform.procs_psutil in place of /proc. Linux itself keeps
/proc (cheaper for the 0.2 s note: bench/bench_process_tree.py)."""

from __future__ import annotations

import os
import sys

import pytest

from acp_lsp.backends import wire_tree
from acp_lsp.platform import procs_psutil
from acp_lsp.platform.stop import KILL, new_group
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
def psutil_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire_tree, "procs", procs_psutil)


def test_the_psutil_reader_sees_this_process_as_the_proc_reader_does() -> None:
    me = procs_psutil.read(os.getpid())
    assert me is not None
    assert (me.ppid, me.pgid, me.sid) == (
        os.getppid(),
        os.getpgid(0),
        os.getsid(0),
    )
    assert procs_psutil.read(2**22 + 1) is None  # above pid_max: no such process


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX groups")
def test_a_child_leads_a_group_of_its_own_and_the_hard_stop_is_sigkill() -> None:
    assert new_group() == {"start_new_session": True}
    assert KILL.name == "SIGKILL"
