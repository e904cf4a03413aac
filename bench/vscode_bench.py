"""VS Code front end under load, measured in a real VS Code (code-server + Chromium).

    .venv/bin/python bench/vscode_bench.py            20,000-chunk turn, 1 MiB answer, 2,000 tools
    .venv/bin/python bench/vscode_bench.py --quick    tiny sizes (a smoke run)

Needs the tools of scripts/setup-vscode.sh. The extension is packaged once (the .vsix, as
users install it, or --vsix FILE); every VS Code run is a fresh isolated code-server with it
installed, driven by bench/vscode/driver.mjs through playwright-core (see there for exactly
what is timed). For each scenario, in the same run and alternately: the bridge alone
(bench/clients/lsp_client.py: prompt sent -> last text received, or the turn's answer for the
tool scenario) and VS Code (prompt sent from the chat -> last text in the chat webview's DOM,
then painted). While the turn streams, Playwright types `x` every 20 ms into a normal text
editor; a key's latency is measured three ways (see the driver): from when it was due to when
the editor's rendered lines hold it (mostly the driver's delays), the browser's Event Timing
duration (input -> next paint: what the user feels, INP's figure) and keydown -> the rendered
lines hold it. After the turn: the resident memory of the extension host
and of Chromium's renderer processes (the workbench and the webview share one: code-server
serves webviews from its own origin), and the webview's JS heap. Results:
bench/results/vscode.md and vscode.json. Nothing here is a test assertion; the goals are
marked met or missed in the table.
BENCH_KEY_MS=0 in the environment types no keys (to see what the typing costs a turn).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH / "clients"))
sys.path.insert(0, str(BENCH / "agents"))
sys.path.insert(0, str(ROOT))

from common import agent_argv, proc_status  # noqa: E402
from frontend import (  # noqa: E402
    KEY_EVERY_MS,
    alternate,
    fill_marathon,
    goal_rows,
    key_goal,
    marathon_id,
    marathon_sizes,
    median_of,
    ratio_row,
    scenarios,
    table,
    write_results,
)

from tests.vscode import tools  # noqa: E402

DRIVER = BENCH / "vscode" / "driver.mjs"
JsonObject = dict[str, Any]
MARATHON_TYPE_MS = 3000  # typing into the chat's prompt input: 150 keys


def children() -> dict[int, list[int]]:
    """Parent pid -> child pids, of every process."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(")") + 2 :].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of every process below `pid`."""
    tree = children()
    out: list[tuple[int, str]] = []
    todo = list(tree.get(pid, []))
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        out.append((p, cmd))
        todo += tree.get(p, [])
    return out


def processes(server_pid: int, driver_pid: int) -> dict[str, list[int]]:
    """The processes measured: extension host, acp-lsp server, Chromium's renderers."""
    found: dict[str, list[int]] = {"exthost": [], "acp_lsp": [], "renderer": [], "browser": []}
    for pid, cmd in descendants(server_pid):
        if "--type=extensionHost" in cmd:
            found["exthost"].append(pid)
        elif "-m acp_lsp" in cmd:
            found["acp_lsp"].append(pid)
    for pid, cmd in descendants(driver_pid):
        if "--type=renderer" in cmd:
            found["renderer"].append(pid)
        elif "chrom" in cmd and "--type=" not in cmd:
            found["browser"].append(pid)
    return found


def sample(found: dict[str, list[int]]) -> dict[str, dict[str, float]]:
    """RSS and CPU time of each group of processes (summed), each process read once."""
    out: dict[str, dict[str, float]] = {}
    for name, pids in found.items():
        statuses = []
        for pid in pids:
            with contextlib.suppress(OSError):
                statuses.append(proc_status(pid))
        out[name] = {
            "rss_mb": sum(s["rss_mb"] for s in statuses),
            "cpu_s": sum(s["cpu_s"] for s in statuses),
        }
        if name == "renderer":
            # The workbench's renderer, which runs the chat webview too (same origin, process).
            rss = max((s["rss_mb"] for s in statuses), default=0.0)
            out["main_renderer"] = {"rss_mb": rss, "cpu_s": 0.0}
    return out


def settings(prompt: str) -> JsonObject:
    words = prompt.split()
    prebuild = (int(words[1]), int(words[2])) if words[0] == "flood" else None
    argv = agent_argv(prebuild)
    return {
        **tools.SETTINGS,
        "acpLsp.agents": {"flood": {"command": argv[0], "args": argv[1:]}},
        "acpLsp.defaultAgent": "flood",
        "acpLsp.followAlong": False,
    }


class Driver:
    """bench/vscode/driver.mjs in its own process: its JSON lines read by a thread (so waits
    can time out), a line on its stdin lets it go on."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        with log.open("w") as err:
            self.proc = subprocess.Popen(
                [str(tools.node()), str(DRIVER)],
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                start_new_session=True,
            )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put("")

    def phase(self, timeout_s: float) -> JsonObject:
        """The driver's next JSON line (it says which phase it reached)."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return {"phase": "measured", "error": "driver timed out"}
            if not line:
                return {"phase": "measured", "error": f"driver exited {self.proc.wait()}"}
            if line.startswith("{"):
                msg: JsonObject = json.loads(line)
                return msg

    def go(self) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write("go\n")
            self.proc.stdin.flush()
        except OSError:
            pass


def kill_leftovers(marker: str) -> None:
    """Every process whose command line names this run's directory (Chromium's helpers leave
    their process group), by pid."""
    for pid, cmd in descendants(0):
        if marker in cmd and pid != os.getpid():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def complete(prompt: str, r: JsonObject) -> bool:
    """Whether the chat showed all of the turn: every character, or every tool call."""
    kind, n, size = prompt.split()[:3]
    if kind == "flood":
        return bool(r.get("chat_last_chars") == int(n) * int(size))
    return bool(r.get("chat_tools_completed") == int(n) + 1 and r.get("chat_last_tool_completed"))


def run_vscode(
    vsix: Path, prompt: str, marker: str | None, tail: int, marathon: tuple[Path, int] | None = None
) -> JsonObject:
    """One fresh VS Code: a turn of `prompt` (or "idle": keys only), or with `marathon` =
    (history data folder, items) the stored session of that many items resumed, typed into
    and scrolled (the driver's BENCH_MODE=marathon)."""
    with tempfile.TemporaryDirectory(prefix="acp-lsp-vbench-") as tmp:
        root = Path(tmp)
        workspace = root / "ws"
        workspace.mkdir()
        (workspace / "notes.txt").write_text("")
        # The agent in the workspace's acp-lsp.toml too: with VS Code's settings alone the
        # chat's picker sometimes lacked "flood" (2 runs of ~10; cause not found).
        user = settings(prompt)
        agent = user["acpLsp.agents"]["flood"]
        (workspace / "acp-lsp.toml").write_text(
            f'defaultAgent = "flood"\n\n[agents.flood]\ncommand = {json.dumps(agent["command"])}\n'
            f"args = {json.dumps(agent['args'])}\n"
        )
        try:
            extra = {"PYTHONPATH": str(ROOT)}
            if marathon:
                extra["ACP_LSP_DATA_DIR"] = str(marathon[0])
            server = tools.start_code_server(root, vsix, user, extra)
        except RuntimeError as exc:
            return {"error": str(exc)[-500:]}
        env = {
            **server.env,
            "ACP_LSP_VSCODE_TOOLS": str(tools.TOOLS),
            "CODE_SERVER_URL": server.url,
            "ACP_LSP_WORKSPACE": str(workspace),
            "CHROMIUM": str(tools.CHROMIUM),
            "BENCH_MODE": "idle" if prompt == "idle" else "turn",
            "BENCH_PROMPT": prompt,
            "BENCH_MARKER": marker or "",
            "BENCH_TAIL": str(tail),
            "BENCH_KEY_MS": os.environ.get("BENCH_KEY_MS", str(KEY_EVERY_MS)),
        }
        if marathon:
            env["BENCH_MODE"] = "marathon"
            env["BENCH_SESSION"] = marathon_id(marathon[1])
            env["BENCH_ITEMS"] = str(marathon[1])
            env["BENCH_TYPE_MS"] = str(MARATHON_TYPE_MS)
        driver = Driver(env, root / "driver.log")
        try:
            r: JsonObject = {}
            msg = driver.phase(180)
            if msg["phase"] == "ready":
                found = processes(server.proc.pid, driver.proc.pid)
                before = sample(found)
                driver.go()
                msg = driver.phase(660)
                after = sample(processes(server.proc.pid, driver.proc.pid))
                for name, figures in after.items():
                    r[f"{name}_rss_mb"] = figures["rss_mb"]
                    r[f"{name}_cpu_s"] = figures["cpu_s"] - before[name]["cpu_s"]
                r["renderers"] = len(found["renderer"])
            r.update({k: v for k, v in msg.items() if k != "phase"})
            if "error" not in r and not marathon and prompt != "idle" and not complete(prompt, r):
                r["error"] = "the chat does not show the whole turn"
            driver.go()
            with contextlib.suppress(subprocess.TimeoutExpired):
                driver.proc.wait(timeout=30)
            if "error" in r:
                r["log"] = (root / "driver.log").read_text()[-1500:]
            return r
        finally:
            tools.kill_group(driver.proc)  # type: ignore[arg-type]
            tools.kill_group(server.proc)
            kill_leftovers(tmp)


def ms(value: float) -> str:
    """A key latency; Event Timing's unreported keys are 0: under its 16 ms threshold."""
    return "<16" if value < 16 else f"{value:.0f}"


def key_cell(r: JsonObject, prefix: str) -> str:
    """p50 / p99 / max of one key measure, from a run's figures (or medians of them)."""
    show = ms if prefix == "key_event" else (lambda v: f"{v:.1f}")
    return " / ".join(show(r.get(f"{prefix}_{q}", 0) or 0) for q in ("p50", "p99", "max"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--only", type=int, nargs="*", help="scenario numbers (0-based)")
    ap.add_argument("--tool-repeats", type=int, help="rounds of the tool scenario (slow)")
    ap.add_argument("--vsix", type=Path, help="a packaged extension (default: package this tree)")
    ap.add_argument(
        "--against", type=Path, help="another .vsix (before a change): measured alternately too"
    )
    ap.add_argument("--out", type=Path, default=BENCH / "results")
    ap.add_argument(
        "--marathon",
        action="store_true",
        help="only the marathon: a 10,000-item stored session beside a 20-item one",
    )
    args = ap.parse_args()
    # SIGTERM (a timeout) ends the run through the finally blocks: code-server and Chromium
    # are stopped, not orphaned.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    missing = tools.code_server_missing()
    if missing:
        sys.exit(missing)
    repeats = args.repeats or (1 if args.quick else 3)
    t_start = time.time()
    with tempfile.TemporaryDirectory(prefix="acp-lsp-vsix-") as tmp:
        vsix = args.vsix or tools.package_vsix(Path(tmp))
        if args.marathon:
            return marathon(vsix, args.quick, repeats, args.out)
        builds = [("", vsix)]
        if args.against:
            builds.append((" (before)", args.against))
        tool_repeats = args.tool_repeats or repeats
        rows, raw, goals = measure(builds, args.quick, (repeats, tool_repeats), args.only)
        floor = run_vscode(vsix, "idle", None, 0)
    print(f"no turn: {floor}", file=sys.stderr)
    head = [
        "scenario",
        "VS Code runs complete",
        "bridge alone: last text (ms)",
        "VS Code: last text in the webview DOM (ms)",
        "VS Code: painted (ms)",
        "ratio (painted / bridge)",
        "keys, driver: due → in the editor's DOM, p50 / p99 / max (ms)",
        "keys, Event Timing: input → next paint, p50 / p99 / max (ms; keys ≥ 16 ms)",
        "keys: keydown → in the editor's DOM, p50 / p99 / max (ms)",
        "extension host RSS / CPU in the turn (MB / s)",
        "renderer RSS (MB) / all renderers CPU in the turn (s)",
        "renderer JS heap (MB)",
    ]
    floor_note = (
        "Keystroke latency with no turn running: driver (due → in the DOM; mostly the driver's"
        f" own delays) p50 {floor.get('key_p50', 0):.1f} ms, p99 {floor.get('key_p99', 0):.1f}"
        f" ms over {floor.get('keys', 0)} keys; Event Timing (input → next paint, the user's)"
        f" {key_cell(floor, 'key_event')} ms, {floor.get('key_events_reported', 0)} of"
        f" {floor.get('key_downs', 0)} keys at 16 ms or more; keydown → in the DOM"
        f" {key_cell(floor, 'key_dom')} ms. Event Timing reports no event under 16 ms: a key"
        ' without an entry counts as under 16 ("<16").'
    )
    data = {"floor": floor, "raw": raw}
    write_results(args.out, "vscode", t_start, repeats, head, rows, floor_note, goals, data)


def measure(
    builds: list[tuple[str, Path]],
    quick: bool,
    rounds: tuple[int, int],
    only: list[int] | None,
) -> tuple[list[list[str]], list[JsonObject], list[JsonObject]]:
    """Rows (one per scenario and build), raw runs and goals (of the first build). `rounds`:
    of the text scenarios, of the tool scenario."""
    rows: list[list[str]] = []
    raw: list[JsonObject] = []
    goals: list[JsonObject] = []
    for i, (label, prompt, marker, tail) in enumerate(scenarios(quick)):
        if only is not None and i not in only:
            continue
        repeats = rounds[1] if prompt.startswith("tools") else rounds[0]
        bridge, vs, b_s = alternate(
            label,
            prompt,
            repeats,
            {name: partial(run_vscode, vsix, prompt, marker, tail) for name, vsix in builds},
        )
        raw.append({"scenario": label, "bridge": bridge, "vscode": vs})
        for name, _ in builds:
            ok = [v for v in vs[name] if "error" not in v]

            def m(key: str, runs: list[JsonObject] = ok) -> float:
                return median_of(runs, key)

            ratio = m("visible_ms") / b_s if b_s else float("nan")
            keys = {
                f"{p}_{q}": m(f"{p}_{q}")
                for p in ("key", "key_event", "key_dom")
                for q in ("p50", "p99", "max")
            }
            rows.append(
                [
                    f"{label}{name}",
                    f"{len(ok)}/{repeats}",
                    f"{b_s:,.0f}",
                    f"{m('dom_ms'):,.0f}",
                    f"{m('visible_ms'):,.0f}",
                    f"{ratio:.2f}×",
                    key_cell(keys, "key"),
                    key_cell(keys, "key_event"),
                    key_cell(keys, "key_dom"),
                    f"{m('exthost_rss_mb'):,.0f} / {m('exthost_cpu_s'):.2f}",
                    f"{m('main_renderer_rss_mb'):,.0f} / {m('renderer_cpu_s'):.2f}",
                    f"{m('chat_heap_mb'):,.0f}",
                ]
            )
            if name == builds[0][0]:
                goals += goal_rows(label, ratio, m("key_p99"), " (driver: due → in the DOM)")
                p99 = keys["key_event_p99"]
                user = " (Event Timing: input → next paint, the user's)"
                goals.append(key_goal(label, p99, user, f"{ms(p99)} ms"))
    return rows, raw, goals


def marathon(vsix: Path, quick: bool, repeats: int, out: Path) -> None:
    """Issue 35: the small and the big stored session, resumed alternately in fresh VS Codes;
    keypress to screen in the chat's prompt input and scrolling the chat, big / small."""
    t_start = time.time()
    small, big = marathon_sizes(quick)
    runs: dict[int, list[JsonObject]] = {small: [], big: []}
    with tempfile.TemporaryDirectory(prefix="acp-lsp-marathon-") as data:
        fill_marathon(Path(data) / "history.sqlite3", (small, big))
        for k in range(repeats):
            for size in (small, big) if k % 2 == 0 else (big, small):
                r = run_vscode(vsix, "marathon", None, 0, (Path(data), size))
                runs[size].append(r)
                print(f"marathon {size}: {r}", file=sys.stderr)
    ok = {size: [r for r in rs if "error" not in r] for size, rs in runs.items()}

    def m(size: int, key: str) -> float:
        return median_of(ok[size], key)

    rows = [
        ["runs complete", f"{len(ok[small])}/{repeats}", f"{len(ok[big])}/{repeats}", ""],
        [
            "entries: in the session / in the DOM after",
            f"{m(small, 'chat_entries'):,.0f} / {m(small, 'chat_dom_entries'):,.0f}",
            f"{m(big, 'chat_entries'):,.0f} / {m(big, 'chat_dom_entries'):,.0f}",
            "",
        ],
        ratio_row(
            "resume (click in the history list → drawn)", m(small, "open_ms"), m(big, "open_ms")
        ),
        *(
            ratio_row(
                f"key in the prompt input: {what}, {q}", m(small, f"{p}_{q}"), m(big, f"{p}_{q}")
            )
            for what, p in (
                ("Event Timing, input → next paint (the user's)", "key_event"),
                ("keydown → the next frame after its input event", "key_frame"),
                ("due → its input event handled (driver)", "key"),
            )
            for q in ("p50", "p99", "max")
        ),
        ratio_row("scroll to the top (→ 2nd frame)", m(small, "top_ms"), m(big, "top_ms")),
        ratio_row("scroll to the bottom (→ 2nd frame)", m(small, "bottom_ms"), m(big, "bottom_ms")),
        ratio_row(
            "renderer JS heap (workbench + chat)",
            m(small, "workbench_heap_mb"),
            m(big, "workbench_heap_mb"),
            "MB",
        ),
        ratio_row(
            "renderer RSS", m(small, "main_renderer_rss_mb"), m(big, "main_renderer_rss_mb"), "MB"
        ),
    ]
    goals = []
    for what, p in (("Event Timing", "key_event"), ("keydown → frame", "key_frame")):
        for q in ("p50", "p99"):
            a, b = m(small, f"{p}_{q}"), m(big, f"{p}_{q}")
            # Event Timing reports nothing under 16 ms: both under it is no difference.
            ratio = b / a if a >= 16 or p != "key_event" else (1.0 if b < 16 else b / 16)
            goals.append(
                {
                    "goal": f"key → screen ({what}) {q}, {big:,} ÷ {small} items ≤ 1.2×",
                    "measured": f"{ratio:.2f}× ({a:.0f} → {b:.0f} ms)",
                    "met": ratio <= 1.2,
                }
            )
    head = ["measure", f"{small} items", f"{big:,} items", f"{big:,} ÷ {small}"]
    lines = [
        f"Run {time.strftime('%Y-%m-%d %H:%M', time.gmtime(t_start))} UTC, {repeats} round(s)"
        f" of each session, alternating, medians; load average {os.getloadavg()[0]:.1f};"
        f" {time.time() - t_start:.0f} s.",
        "",
        *table(head, rows),
        "",
        "| goal | measured | met |",
        "|---|---|---|",
        *(f"| {g['goal']} | {g['measured']} | {'yes' if g['met'] else '**no**'} |" for g in goals),
    ]
    out.mkdir(parents=True, exist_ok=True)
    (out / "vscode.marathon.md").write_text("\n".join(lines) + "\n")
    raw = {"rows": rows, "goals": goals, "raw": {str(k): v for k, v in runs.items()}}
    (out / "vscode.marathon.json").write_text(json.dumps(raw, indent=1))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
