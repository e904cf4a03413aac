"""Helpers shared by the benchmark clients: where things are, process figures, results.

Every client is its own process and prints exactly one JSON object on stdout (its result);
the runner (bench/run.py) starts them, alternates them and takes medians.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent.parent
ROOT = BENCH.parent
FLOOD_AGENT = BENCH / "agents" / "flood_agent.py"

sys.path.insert(0, str(BENCH / "agents"))
sys.path.insert(0, str(ROOT))

from flood_agent import chunk_text  # noqa: E402

_TICKS = os.sysconf("SC_CLK_TCK")


def agent_argv(prebuild: tuple[int, int] | None = None) -> list[str]:
    """The flood agent's command line (``prebuild`` = (N, SIZE) of the first flood)."""
    argv = [sys.executable, str(FLOOD_AGENT)]
    if prebuild is not None:
        argv += ["--prebuild", str(prebuild[0]), str(prebuild[1])]
    return argv


def expected_digest(n: int, size: int) -> str:
    """sha256 of the text of chunks 0..n-1, joined: what every client must receive."""
    digest = hashlib.sha256()
    for i in range(n):
        digest.update(chunk_text(i, size).encode())
    return digest.hexdigest()


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def proc_status(pid: int) -> dict[str, float]:
    """rss_mb, peak_rss_mb (VmHWM) and cpu_s (user + system) of a live process."""
    out: dict[str, float] = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                out["rss_mb"] = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                out["peak_rss_mb"] = int(line.split()[1]) / 1024
    with open(f"/proc/{pid}/stat") as fh:
        stat = fh.read()
    fields = stat[stat.rfind(")") + 2 :].split()
    out["cpu_s"] = (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime
    return out


def emit(result: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


def paced_figures(parts: list[str], received_ns: list[int]) -> dict[str, Any]:
    """Latency figures of a paced run: each chunk's text is ``[seq:monotonic_ns written]``."""
    written = [int(p[1:-1].split(":")[1]) for p in parts]
    latencies = [(got - w) / 1e6 for w, got in zip(written, received_ns, strict=True)]
    seqs = [int(p[1:].split(":")[0]) for p in parts]
    return {
        "frames": len(parts),
        "in_order": seqs == list(range(len(seqs))),
        "p50_ms": percentile(latencies, 50) if latencies else float("nan"),
        "p99_ms": percentile(latencies, 99) if latencies else float("nan"),
        "first_ms": latencies[0] if latencies else float("nan"),
    }
