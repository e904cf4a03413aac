"""Checkpoints: what `acp/restoreCheckpoint` costs when a turn changed 100 files.

Through the real server (``python -m acp_lsp``) and the scripted agent (tests/agents), which
writes 100 files on disk in its turn as Claude Code or Codex would. Two sessions of one server,
side by side in one run, alternating: one in a generated workspace of N files (50,000 by
default) and one in a workspace of the 100 files alone. Each round: a turn that changes the
100 files, then the restore of its checkpoint, timed from the request to its answer (every
file back on disk). The floor beside them: writing the same 100 files' old bytes in Python,
the least any restore must do. The ratios say whether the restore follows the files that
changed (about 1 between the workspaces) or the files that exist.

    .venv/bin/python bench/bench_checkpoints.py [--files N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH / "clients"))
sys.path.insert(0, str(BENCH))

from bench_disk import make_workspace  # noqa: E402
from lsp_client import request, start, stop  # noqa: E402

from tests.agents import scripted_command  # noqa: E402

JsonObject = dict[str, Any]
CHANGED = 100


async def measure(files: int, rounds: int) -> JsonObject:
    with tempfile.TemporaryDirectory(prefix="acp-lsp-bench-checkpoints-") as tmp_name:
        tmp = Path(tmp_name)
        big, small = tmp / "big", tmp / "small"
        big_paths = make_workspace(big, files)
        small_paths = make_workspace(small, CHANGED)
        chosen = {
            "big": [p.relative_to(big).as_posix() for p in big_paths[:: max(1, files // CHANGED)]][
                :CHANGED
            ],
            "small": [p.relative_to(small).as_posix() for p in small_paths],
        }
        originals = {
            name: {rel: (root / rel).read_bytes() for rel in chosen[name]}
            for name, root in (("big", big), ("small", small))
        }
        # prompts 1 and 2 warm the sessions up (the first snapshot of a folder hashes every
        # file); from prompt 3 on, the rounds alternate: big, small, big, …
        order = ["big", "small"] * rounds
        on: JsonObject = {"session/prompt": []}
        for n, name in enumerate(order, start=3):
            on[f"session/prompt#{n}"] = [
                {"write_file": {"path": rel, "content": f"changed {rel}\n"}} for rel in chosen[name]
            ]
        argv = scripted_command({"on": on}, tmp_dir=tmp)
        options = {
            "agents": {"scripted": {"command": argv[0], "args": argv[1:]}},
            "defaultAgent": "scripted",
            "followAlong": False,
        }
        os.environ["ACP_LSP_DATA_DIR"] = str(
            tmp / "data"
        )  # the bridge's own files: not in the workspace
        editor, _pid, _ = await start(big, options)
        try:
            sessions = {}
            for name, root in (("big", big), ("small", small)):
                snapshot = await request(editor, "acp/newSession", {"cwd": str(root)})
                sessions[name] = snapshot["sessionId"]
            for name in ("big", "small"):
                await request(
                    editor, "acp/prompt", {"sessionId": sessions[name], "prompt": "warm up"}
                )
            await asyncio.sleep(8 if files > 10_000 else 1)  # the first snapshots finish
            times: dict[str, list[float]] = {"big": [], "small": [], "floor": []}
            for name in order:
                sid = sessions[name]
                await request(editor, "acp/prompt", {"sessionId": sid, "prompt": f"change {name}"})
                snapshot = await request(editor, "acp/getSession", {"sessionId": sid})
                index = [i for i, m in enumerate(snapshot["messages"]) if m["role"] == "user"][-1]
                started = time.perf_counter()
                result = await request(
                    editor, "acp/restoreCheckpoint", {"sessionId": sid, "messageIndex": index}
                )
                times[name].append((time.perf_counter() - started) * 1000)
                restored = [f for f in result["files"] if f["status"] == "restored"]
                assert len(restored) == CHANGED, result
                root = big if name == "big" else small
                assert all((root / rel).read_bytes() == old for rel, old in originals[name].items())
                if name == "small":  # the floor: the same writes, done directly
                    started = time.perf_counter()
                    for rel, old in originals[name].items():
                        (root / rel).write_bytes(old)
                    times["floor"].append((time.perf_counter() - started) * 1000)
        finally:
            await stop(editor)
    big_ms, small_ms = statistics.median(times["big"]), statistics.median(times["small"])
    floor_ms = statistics.median(times["floor"])
    return {
        "files": files,
        "changed": CHANGED,
        "rounds": rounds,
        "restore_big_ms": big_ms,
        "restore_small_ms": small_ms,
        "floor_ms": floor_ms,
        "big_vs_small": big_ms / small_ms,
        "big_vs_floor": big_ms / floor_ms,
    }


def run(files: int = 50_000, rounds: int = 5) -> JsonObject:
    return asyncio.run(measure(files, rounds))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(json.dumps(run(args.files, args.rounds), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
