"""acp-lsp benchmarks: every benchmark side by side in one run, medians over repeats.

    ./run bench                       the full suite (a few minutes)
    ./run bench --quick               a tiny run (what the smoke test does)
    ./run bench --only streaming,latency
    ./run bench --out DIR             write DIR/latest.md and DIR/latest.json
    ./run bench --against DIR         also measure the server in DIR/acp_lsp (before/after)
    ./run bench registry [ARGS]       only the ACP Registry probe (bench/registry_probe.py)

Each client runs in its own process; where figures are compared they are measured
alternately in the same run, so a busy machine slows them alike. The results go to
bench/results/latest.md (the table in docs/performance.md) and latest.json (for tracking);
logs of the run go to bench/results/run.tmp/ (not committed).

The front ends under load are separate scripts, not part of this suite (they need real
editors): bench/nvim_bench.py (Neovim) and bench/vscode_bench.py (VS Code in code-server).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
CLIENTS = BENCH / "clients"
sys.path.insert(0, str(CLIENTS))
sys.path.insert(0, str(BENCH))

from common import FLOOD_AGENT, expected_digest  # noqa: E402

JsonObject = dict[str, Any]
TS_SDK = ROOT / ".cache" / "peers" / "ts-sdk" / "node_modules" / "@agentclientprotocol" / "sdk"
# The newest TypeScript SDK (2.x, fetched for the schema tests): the anchor of issue 16.
TS_SDK_2 = ROOT / ".cache" / "peers" / "ts-sdk-2" / "node_modules" / "@agentclientprotocol" / "sdk"
CHUNK_SIZE = 40
FLUSH_MS = 30  # the server's default flushMs: the latency goal is relative to it
FAST_CAP = 500  # a raised notification cap, to show what the default 100/s costs in latency


@dataclass
class Params:
    quick: bool
    repeats: int
    stream_n: int
    paced_n: int
    paced_ms: float
    latency_repeats: int
    sustain_s: float
    tools_n: int
    term_bytes: int
    term_limit: int
    startup_repeats: int
    memory_sessions: tuple[int, ...]
    memory_items: int


FULL = Params(
    quick=False,
    repeats=5,
    stream_n=20_000,
    paced_n=600,
    paced_ms=5,
    latency_repeats=3,
    sustain_s=3.0,
    tools_n=2_000,
    term_bytes=50 * 1024 * 1024,
    term_limit=1024 * 1024,
    startup_repeats=5,
    memory_sessions=(1, 10, 100),
    memory_items=1_000,
)
QUICK = Params(
    quick=True,
    repeats=1,
    stream_n=300,
    paced_n=20,
    paced_ms=5,
    latency_repeats=1,
    sustain_s=0.3,
    tools_n=10,
    term_bytes=256 * 1024,
    term_limit=64 * 1024,
    startup_repeats=1,
    memory_sessions=(1, 2),
    memory_items=40,
)


@dataclass
class Section:
    """One benchmark's result: a Markdown table, notes, goals, and the raw figures."""

    title: str
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    goals: list[JsonObject] = field(default_factory=list)
    data: JsonObject = field(default_factory=dict)

    def goal(self, name: str, measured: str, target: str, met: bool | None) -> None:
        self.goals.append({"goal": name, "measured": measured, "target": target, "met": met})


class Runner:
    def __init__(self, params: Params, log_dir: Path, against: Path | None = None) -> None:
        self.p = params
        self.log_dir = log_dir
        self.against = against  # another tree's acp_lsp/, measured beside this one
        self.python = sys.executable
        self.node = shutil.which("node")
        self._runs = 0

    def client(
        self,
        argv: list[str],
        timeout: float = 300,
        before: bool = False,
        extra_env: dict[str, str] | None = None,
    ) -> JsonObject:
        """Run one client process; its last stdout line is its JSON result.

        ``before``: the server it starts is the ``--against`` tree's."""
        self._runs += 1
        log = self.log_dir / f"{self._runs:03d}-{Path(argv[1]).stem}.log"
        env = {**os.environ, "PYTHONPATH": str(ROOT), **(extra_env or {})}
        if before:
            assert self.against is not None
            env["BENCH_SERVER_ROOT"] = str(self.against)
        try:
            proc = subprocess.run(
                argv, cwd=CLIENTS, capture_output=True, text=True, timeout=timeout, env=env
            )
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout:g}s: {' '.join(argv[1:])}"}
        log.write_text(f"$ {' '.join(argv)}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            tail = proc.stderr.strip().splitlines()[-3:]
            return {"error": f"exit {proc.returncode}: {' | '.join(tail)} (log: {log})"}
        result: JsonObject = json.loads(lines[-1])
        return result

    def py(
        self, script: str, *args: object, before: bool = False, env: dict[str, str] | None = None
    ) -> JsonObject:
        argv = [self.python, str(CLIENTS / script), *map(str, args)]
        return self.client(argv, before=before, extra_env=env)

    def variants(self) -> list[bool]:
        """[False] — or [False, True] with --against: this tree, then the other one."""
        return [False, True] if self.against is not None else [False]

    def ts(self, *args: object, sdk: Path = TS_SDK) -> JsonObject:
        if self.node is None:
            return {"error": "node not found"}
        if not (sdk / "package.json").exists():
            return {"error": f"TypeScript SDK missing ({sdk}): run scripts/fetch-test-peers.sh"}
        return self.client(
            [
                self.node,
                str(CLIENTS / "ts_client.mjs"),
                str(sdk),
                self.python,
                str(FLOOD_AGENT),
                *map(str, args),
            ]
        )


def sdk_version(sdk: Path) -> str:
    try:
        return str(json.loads((sdk / "package.json").read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError):
        return "?"


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def fmt(value: float, digits: int = 0) -> str:
    if value != value:  # nan
        return "–"
    return f"{value:,.{digits}f}"


def errors_of(results: list[JsonObject]) -> list[str]:
    return sorted({r["error"] for r in results if "error" in r})


# -- the benchmarks --------------------------------------------------------------------------


def bench_streaming(r: Runner) -> Section:
    n, size = r.p.stream_n, CHUNK_SIZE
    want = expected_digest(n, size)
    clients: dict[str, Callable[[], JsonObject]] = {
        "a": lambda: r.py("raw_reader.py", "flood", n, size),
        "b": lambda: r.py("sdk_client.py", "flood", n, size),
        "b'": lambda: r.ts("flood", n, size),
        "b''": lambda: r.ts("flood", n, size, sdk=TS_SDK_2),
        "c": lambda: r.py("lsp_client.py", "flood", n, size),
    }
    if r.against is not None:
        clients["c0"] = lambda: r.py("lsp_client.py", "flood", n, size, before=True)
    names = list(clients)
    runs: dict[str, list[JsonObject]] = {k: [] for k in names}
    for rep in range(r.p.repeats):
        order = names[rep % len(names) :] + names[: rep % len(names)]  # rotate who goes first
        for key in order:
            runs[key].append(clients[key]())
    labels = {
        "a": "(a) raw NDJSON reader (the pipe's limit)",
        "b": "(b) ACP Python SDK 0.12.1 client (the newest on PyPI)",
        "b'": "(b') ACP TypeScript SDK 1.9.0 client (Node " + node_version(r) + ")",
        "b''": f"(b'') ACP TypeScript SDK {sdk_version(TS_SDK_2)} client (the newest)",
        "c": "(c) LSP editor through acp-lsp (two hops)",
        "c0": "(c) the same, acp-lsp before the changes (--against)",
    }
    sec = Section(
        f"Streaming throughput — {n:,} agent_message_chunks of {size} characters",
        ["client", "chunks/s (median)", "min – max", "all bytes in order", "messages received"],
        data={"n": n, "chunk_chars": size, "runs": runs},
    )
    rate: dict[str, float] = {}
    for key in names:
        good = [x for x in runs[key] if "error" not in x]
        rates = [n / x["seconds"] for x in good]
        rate[key] = median(rates)
        intact = bool(good) and all(x["sha256"] == want for x in good)
        frames = median([x["frames"] for x in good])
        sec.rows.append(
            [
                labels[key],
                fmt(rate[key]),
                f"{fmt(min(rates))} – {fmt(max(rates))}" if rates else "–",
                "yes" if intact else ("no" if good else "–"),
                fmt(frames),
            ]
        )
        sec.data[f"rate_{key}"] = rate[key]
        sec.data[f"intact_{key}"] = intact
        for err in errors_of(runs[key]):
            sec.notes.append(f"{labels[key]}: {err}")
    ratios = {
        "(c)/(a)": ("a", 0.5),
        "(c)/(b)": ("b", 1.0),
        "(c)/(b')": ("b'", 1.0),
        "(c)/(b'')": ("b''", 1.0),
    }
    for label, (key, target) in ratios.items():
        # The ratio of medians, and the median of per-repeat ratios (each from one round).
        per_round = [
            (n / c["seconds"]) / (n / o["seconds"])
            for c, o in zip(runs["c"], runs[key], strict=True)
            if "error" not in c and "error" not in o
        ]
        value = median(per_round)
        sec.data[f"ratio {label}"] = value
        sec.goal(
            f"streaming {label}",
            f"{value:.2f}× (per-round median; ratio of medians {rate['c'] / rate[key]:.2f}×)"
            if per_round
            else "–",
            f"≥ {target:.1f}×",
            value >= target if per_round else None,
        )
    sec.goal(
        "streaming: every byte arrives in order through acp-lsp",
        "yes" if sec.data["intact_c"] else "no",
        "yes",
        bool(sec.data["intact_c"]),
    )
    sec.notes.append(
        "chunks/s = chunks ÷ (time from sending the prompt to receiving the last chunk's "
        "text). Through acp-lsp the last text arrives up to one flush window "
        f"({FLUSH_MS} ms) after the bridge read it. 'messages received' counts the frames "
        "(or LSP notifications) that carried text."
    )
    return sec


def node_version(r: Runner) -> str:
    if r.node is None:
        return "missing"
    out = subprocess.run([r.node, "--version"], capture_output=True, text=True)
    return out.stdout.strip().lstrip("v")


def bench_latency(r: Runner) -> Section:
    """Added latency at paced rates (agent write → editor receive): the raw reader and the
    newest SDK clients side by side."""
    n = r.p.paced_n
    intervals = (1.0, 5.0, 50.0)
    keys = ["a", "b", "b''", "c", "cf"] + (["c0"] if r.against is not None else [])
    runs: dict[tuple[str, float], list[JsonObject]] = {
        (k, ms): [] for k in keys for ms in intervals
    }

    def client(key: str, count: int, ms: float) -> JsonObject:
        if key == "b''":
            return r.ts("paced", count, ms, sdk=TS_SDK_2)
        script = {"a": "raw_reader.py", "b": "sdk_client.py"}.get(key, "lsp_client.py")
        env = {"BENCH_MAX_RATE": str(FAST_CAP)} if key == "cf" else None
        return r.py(script, "paced", count, ms, before=key == "c0", env=env)

    for ms in intervals:
        count = n if ms < 50 else max(20, n // 10)  # slow paces: fewer chunks, same minutes
        for rep in range(r.p.latency_repeats):
            order = keys[rep % len(keys) :] + keys[: rep % len(keys)]
            for key in order:
                runs[(key, ms)].append(client(key, count, ms))
    sec = Section(
        f"Latency — paced chunks (agent write → editor receive), {n} per run at 1 and 5 ms",
        [
            "client",
            "interval",
            "first text ms",
            "p50 ms",
            "p99 ms",
            "added p50 / p99 ms",
            "in order",
        ],
        data={
            "n": n,
            "flush_ms": FLUSH_MS,
            "runs": {f"{k}@{ms}": v for (k, ms), v in runs.items()},
        },
    )
    labels = {
        "a": "(a) raw NDJSON reader",
        "b": "(b) ACP Python SDK 0.12.1 client",
        "b''": f"(b'') ACP TypeScript SDK {sdk_version(TS_SDK_2)} client",
        "c": "(c) LSP editor through acp-lsp",
        "cf": f"(c) the same, maxNotificationsPerSecond = {FAST_CAP}",
        "c0": "(c) the same, before the changes",
    }
    figures: dict[tuple[str, float], tuple[float, float, float]] = {}
    for ms in intervals:
        for key in keys:
            good = [x for x in runs[(key, ms)] if "error" not in x]
            first = median([x.get("first_ms", float("nan")) for x in good])
            p50 = median([x["p50_ms"] for x in good])
            p99 = median([x["p99_ms"] for x in good])
            figures[(key, ms)] = (first, p50, p99)
            in_order = bool(good) and all(x["in_order"] for x in good)
            added = ""
            if key != "a":
                base = figures[("a", ms)]
                added = f"{fmt(p50 - base[1], 2)} / {fmt(p99 - base[2], 2)}"
            sec.rows.append(
                [
                    labels[key],
                    f"{ms:g} ms",
                    fmt(first, 2),
                    fmt(p50, 2),
                    fmt(p99, 2),
                    added,
                    "yes" if in_order else "no",
                ]
            )
            for err in errors_of(runs[(key, ms)]):
                sec.notes.append(f"{labels[key]} @ {ms:g} ms: {err}")
    for ms in intervals:
        raw, ours = figures[("a", ms)], figures[("c", ms)]
        add50, add99, first = ours[1] - raw[1], ours[2] - raw[2], ours[0] - raw[0]
        sec.data[f"added_p50_ms@{ms:g}"] = add50
        sec.data[f"added_p99_ms@{ms:g}"] = add99
        sec.goal(
            f"latency @ {ms:g} ms: time to first text added",
            f"{fmt(first, 2)} ms",
            "≤ 2 ms",
            first <= 2 if first == first else None,
        )
        sec.goal(
            f"latency @ {ms:g} ms: p50 added",
            f"{fmt(add50, 2)} ms",
            "≤ 2 ms",
            add50 <= 2 if add50 == add50 else None,
        )
        sec.goal(
            f"latency @ {ms:g} ms: p99 added",
            f"{fmt(add99, 2)} ms",
            "≤ 5 ms",
            add99 <= 5 if add99 == add99 else None,
        )
    sec.notes.append(
        "Agent and clients share the machine's monotonic clock; the agent stamps each chunk "
        "just before writing it. 'first text' is the first chunk's latency (time to first "
        "text). The SDK clients read the agent directly (one hop, no editor): their 'added' is "
        "their own cost over the raw reader. Medians of each run's figures over "
        f"{r.p.latency_repeats} alternating runs. At 1 ms (and 5 ms) the agent sends faster "
        "than 100 notifications/s: there chunks wait for the next notification by design. "
        f"The goals are judged on the default cap (c); the row at {FAST_CAP}/s shows what an "
        "editor that can take more notifications gets."
    )
    return sec


def _agent_frame_bytes() -> int:
    """Size of one agent_message_chunk frame as the flood agent writes it."""
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": ""}}
    update["content"]["text"] = "x" * CHUNK_SIZE
    frame = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "bench-1", "update": update},
    }
    return len(json.dumps(frame, separators=(",", ":"))) + 1


def _flood_figures(runs: list[JsonObject]) -> JsonObject:
    good = [x for x in runs if "error" not in x]
    chunks = [x["chars"] / CHUNK_SIZE for x in good]
    return {
        "chunks": median(chunks),
        "rate": median([c / x["seconds"] for c, x in zip(chunks, good, strict=True)]),
        "per_s": median([x["notifications"] / x["seconds"] for x in good]),
        "peak": median([x["max_per_s"] for x in good]),
        "bytes_per_chunk": median(
            [x["update_bytes"] / c for c, x in zip(chunks, good, strict=True)]
        ),
        "cpu_us": median([x["bridge_cpu_s"] / c * 1e6 for c, x in zip(chunks, good, strict=True)]),
        "intact": bool(good)
        and all(
            x["chars"] % CHUNK_SIZE == 0
            and x["sha256"] == expected_digest(x["chars"] // CHUNK_SIZE, CHUNK_SIZE)
            for x in good
        ),
        "ok": bool(good),
    }


def bench_flood(r: Runner) -> Section:
    seconds = r.p.sustain_s
    variants = r.variants()
    runs: dict[bool, list[JsonObject]] = {v: [] for v in variants}
    for _ in range(1 if r.p.quick else 2):
        for before in variants:
            runs[before].append(
                r.py("lsp_client.py", "sustain", seconds, CHUNK_SIZE, before=before)
            )
    figs = {v: _flood_figures(runs[v]) for v in variants}
    headers = ["figure", "acp-lsp (median)"] + (["before the changes"] if len(variants) > 1 else [])
    sec = Section(
        f"Editor message rate — an agent flooding chunks for {seconds:g} s",
        headers,
        data={"seconds": seconds, "runs": {str(v): runs[v] for v in variants}},
    )

    def row(label: str, key: str, digits: int = 0) -> list[str]:
        return [label] + [fmt(figs[v][key], digits) for v in variants]

    sec.rows += [
        row("chunks streamed per run", "chunks"),
        row("chunk rate reaching the editor (chunks/s)", "rate"),
        row("bridge CPU per chunk (µs)", "cpu_us", 1),
        row("acp/sessionUpdate notifications per second (average)", "per_s", 1),
        row("most notifications in any 1 s", "peak"),
        row("bytes per chunk delivered to the editor", "bytes_per_chunk", 1),
        ["bytes per chunk the agent wrote (one NDJSON frame)"]
        + [fmt(_agent_frame_bytes()) for _ in variants],
        ["all text in order, nothing lost"]
        + ["yes" if figs[v]["intact"] else "no" for v in variants],
    ]
    mine = figs[False]
    sec.data.update(mine)
    sec.goal(
        "editor notifications per session under a flood",
        f"{fmt(mine['peak'])} in the busiest second ({fmt(mine['per_s'], 1)}/s average), "
        + ("nothing lost or reordered" if mine["intact"] else "TEXT DAMAGED"),
        "≤ 100/s, nothing lost or reordered",
        (mine["peak"] <= 100 and mine["intact"]) if mine["ok"] else None,
    )
    for v in variants:
        sec.notes += errors_of(runs[v])
    sec.notes.append(
        "The agent writes chunks as fast as the bridge reads them for the whole period; "
        "'bridge CPU per chunk' is the server's user + system time over the turn divided by "
        "the chunks."
    )
    return sec


def bench_tools(r: Runner) -> Section:
    n, term, limit = r.p.tools_n, r.p.term_bytes, r.p.term_limit
    sizes = [(n, term)] if r.p.quick else [(n // 2, term // 2), (n, term)]
    sec = Section(
        "Tool-call heavy turns — tool calls with streamed content, and a terminal",
        [
            "server",
            "tool calls",
            "terminal output",
            "bridge CPU s",
            "bridge peak RSS MB",
            "bytes to editor",
            "tool content sent / kept",
            "terminal data sent / kept",
        ],
        data={"limit": limit},
    )
    worst_ratio = 0.0
    ok = True
    for before in r.variants():
        for calls, out_bytes in sizes:
            x = r.py("lsp_client.py", "tools", calls, out_bytes, limit, before=before)
            sec.data[f"{'before ' if before else ''}{calls}x{out_bytes}"] = x
            if "error" in x:
                sec.notes.append(x["error"])
                ok = ok and before
                continue
            tool_ratio = x["tool_content_sent"] / max(x["tool_content_kept"], 1)
            term_ratio = x["terminal_sent"] / max(x["terminal_kept"], 1)
            if not before:
                worst_ratio = max(worst_ratio, tool_ratio, term_ratio)
                ok = ok and x["tool_merge_ok"] and x["terminal_copy_ok"]
            sec.rows.append(
                [
                    "before the changes" if before else "acp-lsp",
                    fmt(calls),
                    f"{out_bytes / 2**20:g} MB (limit {limit / 2**20:g} MB)",
                    fmt(x["bridge_cpu_s"], 2),
                    fmt(x["bridge_peak_rss_mb"], 1),
                    f"{x['bytes_to_editor'] / 2**20:.1f} MB",
                    f"{tool_ratio:.2f}×",
                    f"{term_ratio:.2f}×",
                ]
            )
    sec.goal(
        "tool-output bytes sent to the editor",
        f"at most {worst_ratio:.2f}× the output kept" + ("" if ok else " (EDITOR COPY DIFFERS)"),
        "≤ 2× the output kept",
        worst_ratio <= 2 and ok if sec.rows else None,
    )
    sec.notes.append(
        "Each tool call is created, gets 4 progress updates that resend the whole growing "
        "content array (as v1 agents do), then completes. The terminal runs "
        "`yes … | head -c SIZE` with outputByteLimit = limit. 'sent' counts content and "
        "contentAppend items (JSON) and terminal data the editor received; 'kept' is what "
        "the final snapshot holds (for the terminal: the last `limit` bytes of its output). "
        "The editor's own merge of what it received is checked against both. Two sizes show "
        "the growth is linear, not quadratic."
    )
    return sec


def bench_edits(r: Runner) -> Section:
    import bench_edits

    if r.p.quick:
        result = {"cases": [bench_edits.bench_case(1_000, c, 1) for c in (1, 20)], "repeats": 1}
    else:
        result = bench_edits.run(quick=True)  # 3 repeats: the ratios are steady, time is not
    sec = Section(
        "Edits — minimal TextEdits and the 3-way merge (bench/bench_edits.py)",
        ["lines", "changes", "edits", "minimal_edits ms", "difflib ms", "speedup", "merge3 ms"],
        data=result,
    )
    target = None
    for c in result["cases"]:
        sec.rows.append(
            [
                fmt(c["lines"]),
                str(c["changes"]),
                str(c["edits"]),
                fmt(c["minimal_edits_ms"], 2),
                fmt(c["difflib_ms"], 2),
                f"{c['speedup_vs_difflib']:.1f}×",
                fmt(c["merge3_ms"], 2),
            ]
        )
        if c["lines"] == 100_000 and c["changes"] == 20:
            target = c
    if target is not None:
        sec.goal(
            "edits: 100k lines, 20 changes vs a plain difflib line diff",
            f"{target['speedup_vs_difflib']:.1f}× faster",
            "≥ 2× faster",
            target["speedup_vs_difflib"] >= 2,
        )
    sec.notes.append(
        f"Median of {result['repeats']} repeat(s) each. difflib is given the lines already split "
        "(it does less work than minimal_edits, which starts from two strings)."
    )
    return sec


def bench_disk(r: Runner) -> Section:
    import bench_disk

    # the big sizes take minutes each: BENCH_DISK_SIZES=10000,100000,500000,1000000
    sizes = os.environ.get("BENCH_DISK_SIZES", "2000" if r.p.quick else "10000,100000")
    result = bench_disk.run(tuple(int(n) for n in sizes.split(",")), 2 if r.p.quick else None)
    sec = Section(
        "Disk tracking at any size — ours vs the anchors' whole `git add -A` + `write-tree` "
        "(bench/bench_disk.py)",
        [
            "files",
            "kind",
            "first snapshot ms: ours / anchors'",
            "unchanged ms: ours / anchors'",
            "one changed file ms: ours / anchors'",
            "changed: ours / anchors'",
            "prompt path after a change ms",
            "watches",
            "watcher RSS MB",
        ],
        data=result,
    )
    for c in result["cases"]:
        if "first_error" in c:
            sec.notes.append(f"{c['files']:,} files, {c['kind']}: {c['first_error']}")
        sec.rows.append(
            [
                fmt(c["files"]),
                c["kind"],
                f"{fmt(c['first_ms'], 1)} / {fmt(c['anchor_first_ms'], 1)}",
                f"{fmt(c['unchanged_ms'], 2)} / {fmt(c['anchor_unchanged_ms'], 1)}",
                f"{fmt(c['changed_ms'], 1)} / {fmt(c['anchor_changed_ms'], 1)}",
                f"{c['changed_ratio']:.2f}×",
                fmt(c["changed_snapshot_ms"], 1),
                fmt(c["watches"]),
                f"{c['watch_rss_mb']:.1f}",
            ]
        )
    for g in result["goals"]:
        sec.goal(g["goal"], g["measured"], g["target"], g["met"])
    sec.notes.append(
        "Medians of alternating rounds, ours and the anchors' way (a ShadowRepo with no watcher: "
        "a whole `git add -A` + `write-tree` per checkpoint, as Cline and Zed) on the same folder. "
        "'git': every file committed and clean, ours borrowing the user's objects and index; "
        "'plain': the same files, no .git (both first snapshots are then the same `git add -A`). "
        "'one changed file' is a tool call's scan: snapshot, deltas, both texts read; the prompt "
        "path is the snapshot alone. Watcher RSS: the process's growth for a DirtyWatch of the "
        "folder (the kernel's ~1 KB per watch not included)."
    )
    return sec


def bench_startup(r: Runner) -> Section:
    keys = ["acp", "bare"] + (["acp0"] if r.against is not None else [])
    runs: dict[str, list[JsonObject]] = {key: [] for key in keys}
    for rep in range(r.p.startup_repeats):
        for key in keys[rep % len(keys) :] + keys[: rep % len(keys)]:
            which = "bare" if key == "bare" else "acp"
            runs[key].append(r.py("startup.py", which, before=key == "acp0"))
    demo = [r.py("lsp_client.py", "demo-session") for _ in range(1 if r.p.quick else 2)]
    sec = Section("Startup", ["figure", "ms (median)"], data={"runs": runs, "demo": demo})

    def ms(key: str) -> float:
        return ms_of(key, "ms")

    def ms_of(key: str, field: str) -> float:
        return median([x[field] for x in runs[key] if "error" not in x and field in x])

    def ratio(key: str, field: str = "ms") -> float:
        pairs = zip(runs[key], runs["bare"], strict=True)
        return median(
            [a[field] / b[field] for a, b in pairs if "error" not in a and "error" not in b]
        )

    def cpu(key: str) -> float:
        return median([x["cpu_ms"] for x in runs[key] if "error" not in x])

    new_ms = median([x["new_session_s"] * 1000 for x in demo if "error" not in x])
    sec.rows += [
        ["acp-lsp: process start → initialize answered", fmt(ms("acp"))],
        ["bare pygls server (no features): the same", fmt(ms("bare"))],
        ["ratio acp-lsp / bare (per-round median)", f"{ratio('acp'):.2f}×"],
        [
            "server CPU time until answered: acp-lsp / bare",
            f"{fmt(cpu('acp'))} / {fmt(cpu('bare'))}",
        ],
        ["CPU ratio acp-lsp / bare (per-round median)", f"{ratio('acp', 'cpu_ms'):.2f}×"],
        [
            "acp-lsp: process start → first acp/listAgents answered (settings, hub built)",
            fmt(ms_of("acp", "first_request_ms")),
        ],
    ]
    if "acp0" in runs:
        sec.rows += [
            ["acp-lsp before the changes: initialize answered", fmt(ms("acp0"))],
            ["ratio before the changes / bare", f"{ratio('acp0'):.2f}×"],
            [
                "acp-lsp before the changes: first acp/listAgents answered",
                fmt(ms_of("acp0", "first_request_ms")),
            ],
        ]
    sec.rows.append(
        ["first acp/newSession with the demo agent (agent start included)", fmt(new_ms)]
    )
    value = ratio("acp")
    sec.data.update(acp_ms=ms("acp"), bare_ms=ms("bare"), ratio=value, new_session_ms=new_ms)
    sec.data["first_request_ms"] = ms_of("acp", "first_request_ms")
    sec.data["cpu_ratio"] = ratio("acp", "cpu_ms")
    sec.goal(
        "startup: initialize answered vs a bare pygls server",
        f"{value:.2f}× (server CPU time: {sec.data['cpu_ratio']:.2f}×)",
        "≤ 1.1×",
        value <= 1.1 if value == value else None,
    )
    sec.notes += errors_of([x for key in keys for x in runs[key]] + demo)
    sec.notes.append(
        "A raw LSP client starts the clock just before spawning the server and stops it when "
        f"the initialize response is read; {r.p.startup_repeats} alternating rounds."
    )
    return sec


def bench_memory(r: Runner) -> Section:
    items = r.p.memory_items
    variants = r.variants()
    sec = Section(
        f"Memory — live sessions of {items:,} messages / tool calls each",
        ["live sessions", "bridge RSS MB", "RSS after initialize MB"]
        + (["before the changes: RSS MB"] if len(variants) > 1 else []),
    )
    last: JsonObject = {}
    for count in r.p.memory_sessions:
        got = {v: r.py("lsp_client.py", "memory", count, items, before=v) for v in variants}
        sec.data[str(count)] = {str(v): x for v, x in got.items()}
        x = got[False]
        if "error" in x:
            sec.notes.append(x["error"])
            continue
        last = x
        row = [fmt(count), fmt(x["rss_mb"], 1), fmt(x["base_rss_mb"], 1)]
        if True in got:
            row.append(fmt(got[True].get("rss_mb", float("nan")), 1))
        sec.rows.append(row)
    if not r.p.quick:
        sec.goal(
            f"memory: {r.p.memory_sessions[-1]} sessions × {items:,} items",
            f"{fmt(last.get('rss_mb', float('nan')), 1)} MB RSS",
            "≤ 200 MB",
            last.get("rss_mb", 1e9) <= 200 if last else None,
        )
    sec.notes.append(
        "Each session's turn plays `history N`: alternately an agent message of 4 chunks "
        "and a tool call (created, then completed with a line of output); RSS of the server "
        "process once every turn has ended."
    )
    return sec


def bench_history(r: Runner) -> Section:
    import bench_history

    return bench_history.run(r, Section, median, fmt)  # type: ignore[no-any-return]


def bench_agent_turns(r: Runner) -> Section:
    import bench_agent_turns

    return bench_agent_turns.run(r, Section, median, fmt)  # type: ignore[no-any-return]


def bench_soak(r: Runner) -> Section:
    import bench_soak

    return bench_soak.run(r, Section, median, fmt)  # type: ignore[no-any-return]


def bench_editor_tools(r: Runner) -> Section:
    import bench_editor_tools

    return bench_editor_tools.run(r, Section, median, fmt)  # type: ignore[no-any-return]


def bench_checkpoints(r: Runner) -> Section:
    import bench_checkpoints

    result = bench_checkpoints.run(2_000 if r.p.quick else 50_000, 2 if r.p.quick else 5)
    sec = Section(
        "Checkpoints — restoring a turn's 100 changed files (bench/bench_checkpoints.py)",
        ["files", "restore ms", "in 100 files ms", "write floor ms", "× in 100", "× floor"],
        data=result,
    )
    sec.rows.append(
        [
            fmt(result["files"]),
            fmt(result["restore_big_ms"], 1),
            fmt(result["restore_small_ms"], 1),
            fmt(result["floor_ms"], 1),
            f"{result['big_vs_small']:.2f}×",
            f"{result['big_vs_floor']:.1f}×",
        ]
    )
    sec.goal(
        f"restore of 100 files in {result['files']:,} files vs in 100 files",
        f"{result['big_vs_small']:.2f}×",
        "≤ 1.5× (the cost follows the changed files)",
        result["big_vs_small"] <= 1.5,
    )
    sec.notes.append(
        "acp/restoreCheckpoint through the real server after a scripted turn wrote 100 files on "
        "disk; medians of alternating rounds in the two workspaces of one server. The floor "
        "writes the same old bytes straight from Python (what any restore must do)."
    )
    return sec


def bench_hunks(r: Runner) -> Section:
    import bench_hunks

    result = bench_hunks.run(2 if r.p.quick else 7)
    sec = Section(
        "Review by hunk — rejecting one hunk of an open buffer (bench/bench_hunks.py)",
        ["file lines", "one hunk ms", "whole change ms", "× whole"],
        data=result,
    )
    sec.rows.append(
        [
            fmt(result["lines"]),
            fmt(result["hunk_ms"], 1),
            fmt(result["whole_ms"], 1),
            f"{result['hunk_vs_whole']:.2f}×",
        ]
    )
    sec.goal(
        "one hunk rejected to the buffer showing it, vs the whole change",
        f"{result['hunk_vs_whole']:.2f}×",
        "≤ 1.5× (a hunk costs about what a whole file does)",
        result["hunk_vs_whole"] <= 1.5,
    )
    sec.notes.append(
        "acp/reviewEdit reject through the real server, timed until the tests' LSP editor's "
        "open document reads the undone text (the disk rewritten, the buffer following by a "
        "versioned applyEdit); a scripted turn changed two lines of a 2,000-line file on disk "
        "before each round; hunk and whole rounds alternate."
    )
    return sec


BENCHMARKS: dict[str, Callable[[Runner], Section]] = {
    "streaming": bench_streaming,
    "latency": bench_latency,
    "flood": bench_flood,
    "tools": bench_tools,
    "edits": bench_edits,
    "disk": bench_disk,
    "checkpoints": bench_checkpoints,
    "hunks": bench_hunks,
    "startup": bench_startup,
    "memory": bench_memory,
    "history": bench_history,
    "agent_turns": bench_agent_turns,
    "soak": bench_soak,
    "editor_tools": bench_editor_tools,
}


# -- output ----------------------------------------------------------------------------------


def machine() -> JsonObject:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_avg_start": os.getloadavg(),
    }


def markdown(sections: dict[str, Section], info: JsonObject) -> str:
    lines = [
        "# acp-lsp benchmark results",
        "",
        f"Run {info['date']} on {info['cpus']} CPUs, Python {info['python']}, "
        f"{info['platform']}; load average {info['load_avg_start'][0]:.2f} at the start, "
        f"{info['load_avg_end'][0]:.2f} at the end; {info['seconds']:.0f} s"
        + (" (--quick: tiny sizes, not for comparison)" if info["quick"] else "")
        + ". Regenerate with `./run bench`.",
        "",
        "## Goals",
        "",
        "| goal | measured | target | met |",
        "|---|---|---|---|",
    ]
    for sec in sections.values():
        for g in sec.goals:
            met = {True: "yes", False: "**no**", None: "–"}[g["met"]]
            lines.append(f"| {g['goal']} | {g['measured']} | {g['target']} | {met} |")
    for sec in sections.values():
        lines += ["", f"## {sec.title}", ""]
        lines.append("| " + " | ".join(sec.headers) + " |")
        lines.append("|" + "|".join("---" for _ in sec.headers) + "|")
        lines += ["| " + " | ".join(row) + " |" for row in sec.rows]
        if sec.notes:
            lines.append("")
            lines += [f"- {note}" for note in sec.notes]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["registry"]:  # its own run: it installs agents for about an hour
        import registry_probe

        return registry_probe.main(argv[1:])
    parser = argparse.ArgumentParser(description="acp-lsp benchmarks (medians, side by side)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one repeat (smoke)")
    parser.add_argument(
        "--only", default="", help=f"comma-separated subset of: {', '.join(BENCHMARKS)}"
    )
    parser.add_argument(
        "--out", type=Path, default=BENCH / "results", help="where latest.md/json go"
    )
    parser.add_argument(
        "--against",
        type=Path,
        help="a directory holding another acp_lsp/ (e.g. before a change): measured beside",
    )
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.only.split(",") if name.strip()] or list(BENCHMARKS)
    unknown = [name for name in chosen if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    args.out.mkdir(parents=True, exist_ok=True)
    log_dir = args.out / "run.tmp"
    shutil.rmtree(log_dir, ignore_errors=True)
    log_dir.mkdir()
    if args.against is not None and not (args.against / "acp_lsp" / "__main__.py").exists():
        parser.error(f"--against {args.against}: no acp_lsp/ package there")
    runner = Runner(QUICK if args.quick else FULL, log_dir, args.against)
    info = machine() | {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "quick": args.quick,
        "against": str(args.against) if args.against else None,
    }
    started = time.perf_counter()
    sections: dict[str, Section] = {}
    for name in chosen:
        t0 = time.perf_counter()
        print(f"[bench] {name} …", file=sys.stderr, flush=True)
        sections[name] = BENCHMARKS[name](runner)
        print(f"[bench] {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    info["seconds"] = time.perf_counter() - started
    info["load_avg_end"] = os.getloadavg()
    info["node"] = node_version(runner)
    report = markdown(sections, info)
    (args.out / "latest.md").write_text(report)
    payload = {
        "machine": info,
        "goals": [g for sec in sections.values() for g in sec.goals],
        "benchmarks": {name: sec.__dict__ for name, sec in sections.items()},
    }
    (args.out / "latest.json").write_text(json.dumps(payload, indent=1, default=str) + "\n")
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
