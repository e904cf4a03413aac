"""Benchmark section "soak": concurrent sessions of a real agent through the bridge for 10
minutes (issue 26).

8 sessions of claude-agent-acp (one agent process, shared by the sessions; one Claude Code
under it per session) against the scripted model server, round after round: every session a
turn of 50 tool calls (reads, edits, whole-file writes of its own files, on disk) and an
answer in 20 pieces, all sessions at once. The files are open in the editor, with an unsaved
line of the user's in two of each session's four. tests/support/soak.py drives it and checks
after every round; this reports what it counted: lost or reordered updates, buffers that
left the disk, the bridge's RSS and open fds at the start and the end, leftover children and
zombies. tests/e2e/test_production_soak.py runs the same for a minute and asserts.

    ./run bench --only soak                              # 10 minutes, 8 sessions
    BENCH_SOAK_SECONDS=120 BENCH_SOAK_SESSIONS=4 ./run bench --only soak
    python bench/bench_soak.py run SPEC.json             # one run (what the section calls)
    python bench/bench_soak.py memory [TURNS] [CALLS]    # bytes a session keeps per tool call

``memory`` is the unit-level part of the soak's memory figure, in one process and without an
agent: one Session, recorded into a real history store as the bridge does, takes TURNS turns
of CALLS tool calls shaped like claude-agent-acp's whole-file Writes (rawInput with the file,
a diff item with the old and new text), and tracemalloc tells what it still holds after each
turn, with old calls' large fields left to the store and with them kept (no loader).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

JsonObject = dict[str, Any]
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FULL = {"sessions": 8, "seconds": 600.0, "tool_calls": 50, "reuse_rounds": 2}
QUICK = {"sessions": 2, "seconds": 0.0, "tool_calls": 10, "reuse_rounds": 1}  # one round each


async def one_run(spec: JsonObject) -> JsonObject:
    from tests.support.soak import Soak

    soak = Soak(
        Path(spec["base"]),
        spec["sessions"],
        spec["seconds"],
        tool_calls=spec["tool_calls"],
        reuse_rounds=spec["reuse_rounds"],
    )
    result = await soak.run()
    return result.as_json()


def run(r: Any, section: Any, median: Callable[[list[float]], float], fmt: Any) -> Any:
    from bench_agent_turns import _installed

    params = dict(QUICK if r.p.quick else FULL)
    casts = (("sessions", int), ("seconds", float), ("tool_calls", int), ("reuse_rounds", int))
    for key, cast in casts:
        if value := os.environ.get(f"BENCH_SOAK_{key.upper()}"):
            params[key] = cast(value)
    sec = section(
        f"Soak — {params['sessions']} Claude sessions at once, turns of "
        f"{params['tool_calls']} tool calls, {params['seconds']:g} s (issue 26)",
        ["figure", "measured"],
        data={"params": params},
    )
    why = _installed("claude")
    if why is not None:
        sec.notes.append(f"not measured — {why}")
        sec.rows.append(["–", "agent not installed"])
        return sec
    base = Path(tempfile.mkdtemp(prefix="bench-soak-"))
    spec_file = base / "spec.json"
    spec_file.write_text(json.dumps({**params, "base": str(base / "run")}))
    (base / "run").mkdir()
    x: JsonObject = r.client(
        [r.python, str(Path(__file__).resolve()), "run", str(spec_file)],
        timeout=params["seconds"] + 1800,
    )
    shutil.rmtree(base, ignore_errors=True)
    sec.data["result"] = x
    if "error" in x:
        sec.notes.append(x["error"])
        sec.rows.append(["–", "the run failed"])
        return sec
    _report(sec, x, params, median, fmt)
    return sec


def _report(
    sec: Any, x: JsonObject, params: JsonObject, median: Callable[[list[float]], float], fmt: Any
) -> None:
    first, last = x["samples"][0], x["samples"][-1]
    warm = x["samples"][1] if len(x["samples"]) > 1 else first
    turn_s = x["turn_s"]
    load = x["load_avg"]
    problems = x["problems"]
    rows = [
        (
            "sessions × rounds = turns (the last rounds: new sessions)",
            f"{x['sessions']} × {x['rounds']} = {x['turns']} ({len(x['reuse_rss_mb'])})",
        ),
        ("time (rounds)", f"{x['seconds']:.0f} s"),
        ("turn (median, min–max)", f"{median(turn_s):.1f} s ({min(turn_s):.1f}–{max(turn_s):.1f})"),
        ("tool calls shown, the model's order", f"{fmt(x['tool_calls'])}"),
        ("bridge-added 'Files changed on disk' calls", fmt(x["disk_calls"])),
        (
            "acp/sessionUpdate notifications (updates)",
            f"{fmt(x['notifications'])} ({fmt(x['updates'])})",
        ),
        ("acp/documentsSynced notifications", fmt(x["documents_synced"])),
        ("lost / reordered / mismatched (problems)", str(len(problems))),
        ("buffer ≠ disk + user's line (checks after each round)", str(x["divergences"])),
        (
            "bridge RSS start → after round 1 → end",
            f"{first['rss_mb']:.1f} → {warm['rss_mb']:.1f} → {last['rss_mb']:.1f} MB",
        ),
        (
            "what the sessions hold: acp/getSession JSON start → end",
            f"{first['snapshots_kb'] / 1024:.1f} → {last['snapshots_kb'] / 1024:.1f} MB",
        ),
        (
            "bridge RSS: the sessions closed → after rounds of as many new ones",
            f"{x['closed_rss_mb']:.1f} → "
            + (" → ".join(f"{v:.1f}" for v in x["reuse_rss_mb"]) or "–")
            + " MB",
        ),
        ("bridge open fds start → end", f"{first['fds']} → {last['fds']}"),
        (
            "agent processes (Claude Code per session) start → end",
            f"1 + {first['agent_children']} → 1 + {last['agent_children']}",
        ),
        (
            "agent processes' RSS start → end",
            f"{first['agent_rss_mb']:,.0f} → {last['agent_rss_mb']:,.0f} MB",
        ),
        ("zombies; processes left after exit", f"{x['zombies']}; {len(x['leftovers'])}"),
        ("load average (1 min) start → end", f"{load[0]:.2f} → {load[3]:.2f}"),
    ]
    sec.rows += [[a, b] for a, b in rows]
    sec.notes += problems[:10]
    rss = ", ".join(f"{s['rss_mb']:.1f}" for s in x["samples"])
    sec.notes.append(f"Bridge RSS MB after each round: {rss}.")
    sec.notes.append(
        "One bridge (`python -m acp_lsp`), one claude-agent-acp 0.101.0 (mode acceptEdits), one "
        "scripted model server telling the sessions apart by a tag in their prompts "
        "(tests/model_server/soak.py). A round: every session one turn, all at once; after "
        "it the disk and every open buffer are compared with what the model asked for, and "
        "the bridge's children must settle to the agent alone (no git run, no zombie). At "
        "the end each session's answers, tool calls (rawInput, status, order) and `seq` are "
        "checked, and its editor model against `acp/getSession`; after shutdown/exit no "
        "process of the run may be left."
    )
    calls_ok = not problems and x["tool_calls"] == params["tool_calls"] * x["turns"]
    sec.goal(
        "soak: no lost or reordered update",
        f"{fmt(x['tool_calls'])} tool calls, {x['turns']} answers, "
        f"{fmt(x['notifications'])} notifications; {len(problems)} problems",
        "0",
        calls_ok,
    )
    sec.goal(
        "soak: buffers never leave the disk",
        f"{x['divergences']} divergences",
        "0",
        x["divergences"] == 0,
    )
    growth = last["rss_mb"] - warm["rss_mb"]
    held = (last["snapshots_kb"] - warm["snapshots_kb"]) / 1024
    sec.goal(
        "soak: bridge memory and fds flat",
        f"RSS {first['rss_mb']:.1f} → {last['rss_mb']:.1f} MB ({growth:+.1f} after round 1, "
        f"while the sessions' transcripts grew {held:+.1f} MB as JSON), "
        f"fds {first['fds']} → {last['fds']}",
        "≤ +16 MB after round 1, fds ≤ +2",
        growth <= 16 and last["fds"] - first["fds"] <= 2,
    )
    reused = x["reuse_rss_mb"]
    if reused:
        sec.goal(
            "soak: the memory of closed sessions is used again (growth was what they held)",
            f"RSS {last['rss_mb']:.1f} MB at the end, {x['closed_rss_mb']:.1f} with them "
            f"closed, {reused[-1]:.1f} after {len(reused)} round(s) of {x['sessions']} new ones",
            "≤ +2 MB over the end of the soak",
            reused[-1] <= last["rss_mb"] + 2,
        )
    sec.goal(
        "soak: no zombie, nothing left",
        f"{x['zombies']} zombies, {len(x['leftovers'])} left",
        "0",
        x["zombies"] == 0 and not x["leftovers"],
    )


def _write_call(turn: int, n: int, size: int) -> tuple[JsonObject, JsonObject]:
    """A whole-file Write as claude-agent-acp reports it: the call, then its completion."""
    path = f"/w/src/file_{n % 40}.py"
    old = f"# turn {turn - 1} file {n}\n" + "x = 1\n" * (size // 6)
    new = f"# turn {turn} file {n}\n" + "y = 2\n" * (size // 6)
    call_id = f"toolu_{turn:04d}_{n:03d}"
    start = {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": f"Write {path}",
        "kind": "edit",
        "status": "pending",
        "rawInput": {"file_path": path, "content": new},
        "content": [{"type": "diff", "path": path, "oldText": old, "newText": new}],
        "locations": [{"path": path}],
    }
    done = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": "completed",
        "rawOutput": {"type": "update", "filePath": path, "content": new},
    }
    return start, done


async def memory(turns: int, calls: int, size: int = 4096) -> JsonObject:
    """Bytes one recorded session holds per tool call, evicting and not (tracemalloc)."""
    import tracemalloc

    from acp_lsp.history.recorder import Recorder
    from acp_lsp.history.store import HistoryStore
    from acp_lsp.session import Session

    out: JsonObject = {"turns": turns, "calls_per_turn": calls, "file_bytes": size}
    for mode in ("evict", "keep"):
        with tempfile.TemporaryDirectory() as tmp:
            recorder = Recorder(
                lambda tmp=tmp: HistoryStore(Path(tmp) / "h.sqlite3"),
                redact=lambda value: value,
                on_error=lambda message: None,
                spawn=lambda coro, name: asyncio.ensure_future(coro),
            )
            tracemalloc.start()
            base = tracemalloc.get_traced_memory()[0]
            session = Session("soak", "claude", "/w")
            recorder.track(session, None, "acp")
            if mode == "keep":
                session.set_tool_call_loader(None)
            await recorder.flush()
            held: list[int] = []
            for turn in range(1, turns + 1):
                session.begin_turn()
                session.add_user_prompt([{"type": "text", "text": f"turn {turn}"}])
                for n in range(calls):
                    for update in _write_call(turn, n, size):
                        recorder.observe(session, session.apply_update(update))
                    await recorder.flush()
                session.finish_turn("cancelled")
                await recorder.flush()
                held.append(tracemalloc.get_traced_memory()[0] - base)
            tracemalloc.stop()
            whole = session.tool_calls()  # everything read back: what the store gives
            await recorder.close()
        per_call = (held[-1] - held[0]) / (calls * (turns - 1)) if turns > 1 else 0.0
        out[mode] = {
            "held_kb_after_each_turn": [round(b / 1024) for b in held],
            "bytes_per_call": round(per_call),
            "evicted": session.evicted_tool_calls(),
            "calls": len(whole),
            "whole_content_bytes": sum(len(json.dumps(c)) for c in whole),
        }
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["memory"]:
        numbers = [int(a) for a in argv[1:3]]
        result = asyncio.run(memory(*(numbers or [20, 50])))
        sys.stdout.write(json.dumps(result) + "\n")
        return 0
    if len(argv) != 2 or argv[0] != "run":
        sys.stderr.write(__doc__ or "")
        return 2
    spec = json.loads(Path(argv[1]).read_text())
    result = asyncio.run(one_run(spec))
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
