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


# -- a marathon session: the history's stored session the front ends open -----------------

MARATHON_SMALL = 20


def marathon_sizes(quick: bool) -> tuple[int, int]:
    """Timeline items of the small and the big stored session (issue 35: 10,000)."""
    return MARATHON_SMALL, (500 if quick else 10_000)


def marathon_id(n: int) -> str:
    return f"marathon-{n}"


def _marathon_diff(i: int) -> JsonObject:
    old = [f"def step_{i}_{k}(x):\n    return x + {k}\n" for k in range(4)]
    new = list(old)
    new[1] = f"def step_{i}_1(x):\n    # checked in turn {i}\n    return x * 2 + 1\n"
    return {
        "type": "diff",
        "path": f"/w/src/module_{i % 50}.py",
        "oldText": "".join(old),
        "newText": "".join(new),
    }


def fill_marathon(path: Path, sizes: tuple[int, ...], agent: str = "flood") -> None:
    """Stored sessions of the history (written with the store's own code, as the recorder
    would), one per size, id ``marathon_id(size)``: `size` timeline items in turns of five
    (a user prompt, an agent answer, an edit whose content is a diff, a command with its
    output, a closing answer), so 10,000 items = 2,000 turns, 6,000 messages, 4,000 tool
    calls (2,000 with diffs)."""
    sys.path.insert(0, str(ROOT))
    from acp_lsp.history.store import Batch, HistoryStore, SessionRow

    store = HistoryStore(path)
    store.open()
    for n in sizes:
        sid = marathon_id(n)
        batch = Batch()
        stamp = f"2026-11-29T00:00:{len(sizes) and sizes.index(n):02d}.000000Z"
        messages = 0
        for pos in range(n):
            turn, kind = divmod(pos, 5)
            if kind in (0, 1, 4):
                if kind == 0:
                    role = "user"
                    text = f"Turn {turn}: please make step {turn} handle the empty case too."
                elif kind == 1:
                    role = "agent"
                    text = (
                        f"I'll look at `module_{turn % 50}.py` first. Step {turn} adds one to"
                        " its input; the empty case falls through to the default branch, so"
                        " it needs its own check.\n\n- read the module\n- change the step\n"
                        "- run the checks"
                    )
                else:
                    role = "agent"
                    text = (
                        f"Done: step {turn} now doubles its input and adds one, and the checks"
                        " pass. **One thing to note:** callers that relied on the old value"
                        " need the new one.\n\n```python\nassert step(2) == 5\n```"
                    )
                content = json.dumps([{"type": "text", "text": text}])
                batch.messages.append((sid, messages, pos, role, None, content, text.casefold()))
                messages += 1
            else:
                tid = f"m{turn}-{kind}"
                if kind == 2:
                    call: JsonObject = {
                        "toolCallId": tid,
                        "title": f"Edit src/module_{turn % 50}.py",
                        "kind": "edit",
                        "status": "completed",
                        "content": [_marathon_diff(turn)],
                        "locations": [{"path": f"/w/src/module_{turn % 50}.py", "line": 4}],
                    }
                else:
                    out = "".join(f"check {turn}.{k} ... ok\n" for k in range(6))
                    call = {
                        "toolCallId": tid,
                        "title": f"Run pytest -k step_{turn}",
                        "kind": "execute",
                        "status": "completed",
                        "rawInput": {"command": f"pytest -k step_{turn}"},
                        "content": [{"type": "content", "content": {"type": "text", "text": out}}],
                    }
                batch.tool_calls.append((sid, tid, pos, json.dumps(call)))
        batch.sessions.append(
            SessionRow(
                sid,
                agent,
                stamp,
                stamp,
                cwd=str(path.parent),  # a real folder: a resume starts the agent there
                title=f"Marathon of {n:,} messages",
                status="idle",
                message_count=messages,
            )
        )
        store.write(batch)
    store.close()


def ratio_row(label: str, small: float, big: float, unit: str = "ms") -> list[str]:
    ratio = big / small if small else float("nan")
    return [label, f"{small:,.1f} {unit}", f"{big:,.1f} {unit}", f"{ratio:.2f}×"]
