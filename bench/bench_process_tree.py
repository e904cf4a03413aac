"""An agent's process tree through /proc (today's reader) and through psutil, side by side.

Three costs of acp_lsp/backends/wire_tree.py, alternating the two readers in one run: the note
taken every 0.2 s while an agent works (``descendants``: its children, grandchildren, ...), the
full scan a stop starts with (``process_tree``), and a whole stop (``stop_tree``: SIGTERM, wait,
SIGKILL) of a fresh tree like Claude Code's (a shell with children in its group and one in a
session of its own). Linux only (the /proc reader).

    .venv/bin/python bench/bench_process_tree.py [--rounds R] [--kids K]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_lsp.backends import wire_tree
from acp_lsp.platform import procs_proc, procs_psutil

READERS: dict[str, ModuleType] = {"proc": procs_proc, "psutil": procs_psutil}


def spawn_agent(kids: int) -> tuple[subprocess.Popen[bytes], list[int]]:
    """A shell leading its own session: ``kids`` sleeps in its group, one in a session of
    its own; returns when all run."""
    script = "setsid sleep 300 & " + "sleep 300 & " * kids + "echo ready; exec sleep 300"
    proc = subprocess.Popen(
        ["/bin/sh", "-c", script], stdout=subprocess.PIPE, start_new_session=True
    )
    assert proc.stdout is not None
    proc.stdout.readline()
    deadline = time.monotonic() + 10
    while len(wire_tree.descendants(proc.pid)) < kids + 1:
        assert time.monotonic() < deadline, "the agent's children did not start"
        time.sleep(0.01)
    return proc, [p.pid for p in wire_tree.descendants(proc.pid)]


def timed(fn: Callable[[], Any], repeat: int) -> float:
    """Median milliseconds of one call."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def use(name: str) -> None:
    wire_tree.procs = READERS[name]  # type: ignore[assignment]


def run(rounds: int, kids: int) -> dict[str, Any]:
    costs: dict[str, dict[str, list[float]]] = {n: {} for n in READERS}
    for _ in range(rounds):
        for name in READERS:  # alternating: both see the same machine
            use(name)
            agent, _kids = spawn_agent(kids)
            try:
                start = wire_tree.started(agent.pid)
                note = timed(lambda a=agent: wire_tree.descendants(a.pid), 50)
                scan = timed(lambda a=agent, s=start: wire_tree.process_tree(a.pid, s), 20)
                noted = wire_tree.descendants(agent.pid)
                t0 = time.perf_counter()
                left = asyncio.run(wire_tree.stop_tree(agent.pid, start, 0.5, 2.0, noted))
                stop = (time.perf_counter() - t0) * 1000
                assert left == [], f"{name}: {left} survived"
            finally:
                agent.kill()
                agent.wait()
            for key, value in (("note", note), ("scan", scan), ("stop", stop)):
                costs[name].setdefault(key, []).append(value)
    use("proc")
    result: dict[str, Any] = {"processes": len(os.listdir("/proc")), "kids": kids + 1}
    for key in ("note", "scan", "stop"):
        proc_ms = statistics.median(costs["proc"][key])
        psutil_ms = statistics.median(costs["psutil"][key])
        result[key] = {
            "proc_ms": round(proc_ms, 3),
            "psutil_ms": round(psutil_ms, 3),
            "ratio": round(psutil_ms / proc_ms, 2),
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--kids", type=int, default=4)
    args = parser.parse_args()
    print(json.dumps(run(args.rounds, args.kids), indent=2))


if __name__ == "__main__":
    main()
