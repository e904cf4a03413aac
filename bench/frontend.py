"""What the front-end benchmarks (bench/nvim_bench.py, bench/vscode_bench.py) share: the
scenarios, the bridge-alone run they are compared with, medians and the goals table."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
KEY_EVERY_MS = 20
JsonObject = dict[str, Any]


def scenarios(quick: bool) -> list[tuple[str, str, str | None, int]]:
    """(label, prompt, marker of the last text or None = end of turn, tail bytes to search)."""
    n, big = (300, 8) if quick else (20_000, 256)
    tools = 20 if quick else 2_000
    return [
        (f"{n:,} chunks of 40 characters", f"flood {n} 40", f"{n - 1:08d}|", 200),
        (f"1 MiB answer ({big} chunks of 4 KiB)", f"flood {big} 4096", f"{big - 1:08d}|", 9000),
        (f"{tools:,} tool calls", f"tools {tools} 1000 1000", None, 0),
        # The fixed path of every turn (webview, workbench, extension host, server, agent and
        # back): an answer of one chunk.
        ("1 chunk of 40 characters (the fixed path)", "flood 1 40", f"{0:08d}|", 200),
    ]


def run_bridge(prompt: str) -> JsonObject:
    """The bridge alone (bench/clients/lsp_client.py): prompt sent -> last text received."""
    words = prompt.split()
    argv = [sys.executable, str(BENCH / "clients" / "lsp_client.py"), *words]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        argv, cwd=BENCH / "clients", capture_output=True, text=True, timeout=600, env=env
    )
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1:]}
    out: JsonObject = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def median_of(runs: list[JsonObject], key: str) -> float:
    """The median of `key` over the runs that have it."""
    return med([r[key] for r in runs if r.get(key) is not None])


def alternate(
    label: str, prompt: str, repeats: int, builds: dict[str, Callable[[], JsonObject]]
) -> tuple[list[JsonObject], dict[str, list[JsonObject]], float]:
    """The bridge alone and each build, in alternating rounds (a busy machine slows all
    alike): the bridge's runs, each build's runs and the bridge's median time (ms)."""
    bridge: list[JsonObject] = []
    runs: dict[str, list[JsonObject]] = {name: [] for name in builds}
    for _ in range(repeats):
        bridge.append(run_bridge(prompt))
        print(f"{label}: bridge {bridge[-1]}", file=sys.stderr)
        for name, run in builds.items():
            runs[name].append(run())
            print(f"  {name} {runs[name][-1]}", file=sys.stderr)
    return bridge, runs, med([b["seconds"] * 1000 for b in bridge if "seconds" in b])


def goal_rows(label: str, ratio: float, p99: float, how: str = "") -> list[JsonObject]:
    """The two goals of a scenario: last text within 1.5x of the bridge, keys under 50 ms
    (`how`: which measure of the keys, when there are several)."""
    return [
        {
            "goal": f"{label}: last text visible ≤ 1.5× the bridge",
            "measured": f"{ratio:.2f}×",
            "met": ratio <= 1.5,
        },
        key_goal(label, p99, how),
    ]


def key_goal(label: str, p99: float, how: str = "", measured: str | None = None) -> JsonObject:
    return {
        "goal": f"{label}: keystroke latency p99 < 50 ms{how}",
        "measured": measured or f"{p99:.1f} ms",
        "met": p99 < 50,
    }


def goals_table(goals: list[JsonObject]) -> list[str]:
    return [
        "| goal | measured | met |",
        "|---|---|---|",
        *(f"| {g['goal']} | {g['measured']} | {'yes' if g['met'] else '**no**'} |" for g in goals),
    ]


def table(head: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]


def write_results(
    out: Path,
    name: str,
    started: float,
    repeats: int,
    head: list[str],
    rows: list[list[str]],
    floor_note: str,
    goals: list[JsonObject],
    data: JsonObject,
) -> None:
    """bench/results/NAME.md (the tables) and NAME.json (rows, goals and `data`); print the
    tables."""
    lines = [
        f"Run {time.strftime('%Y-%m-%d %H:%M', time.gmtime(started))} UTC, {repeats} alternating"
        f" round(s), medians; load average {os.getloadavg()[0]:.1f};"
        f" {time.time() - started:.0f} s.",
        "",
        *table(head, rows),
        "",
        floor_note,
        "",
        *goals_table(goals),
    ]
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.md").write_text("\n".join(lines) + "\n")
    (out / f"{name}.json").write_text(json.dumps({"rows": rows, "goals": goals, **data}, indent=1))
    print("\n".join(lines))
