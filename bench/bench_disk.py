"""Disk tracking: what a shadow snapshot of a session folder costs (acp_lsp/disk/shadow.py).

On a generated workspace of N files (50,000 by default, in 500 folders), side by side in one
run, alternating: the shadow repository's snapshot of an unchanged folder, of a folder where
one file changed (with the diff and both texts read back), and the least any scan of the
folder must do — a plain Python walk that stats every file. The first snapshot of a folder
(which hashes every file once) is timed on its own. The numbers go to docs/performance.md.

    .venv/bin/python bench/bench_disk.py [--files N] [--rounds R]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_lsp.disk.shadow import ShadowRepo

JsonObject = dict[str, Any]


def make_workspace(root: Path, files: int) -> list[Path]:
    paths: list[Path] = []
    per_dir = 100
    for n in range(files):
        folder = root / f"pkg{n // (per_dir * 50)}" / f"mod{n // per_dir}"
        if n % per_dir == 0:
            folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"f{n % per_dir}.py"
        path.write_text(f"x = {n}\n" * (5 + n % 40))
        paths.append(path)
    return paths


def stat_walk(root: Path) -> int:
    count = 0
    for folder, dirs, names in os.walk(root):
        if ".git" in dirs:
            dirs.remove(".git")
        for name in names:
            os.stat(os.path.join(folder, name))
            count += 1
    return count


async def timed(coro: Any) -> float:
    started = time.perf_counter()
    await coro
    return (time.perf_counter() - started) * 1000


async def measure(files: int, rounds: int) -> JsonObject:
    with tempfile.TemporaryDirectory(prefix="acp-lsp-bench-disk-") as tmp:
        root = Path(tmp) / "ws"
        paths = make_workspace(root, files)
        repo = ShadowRepo(str(root), Path(tmp) / "shadow")
        first_ms = await timed(repo.snapshot())
        tree = await repo.snapshot()
        unchanged: list[float] = []
        changed: list[float] = []
        walk: list[float] = []
        for r in range(rounds):
            unchanged.append(await timed(repo.snapshot()))
            started = time.perf_counter()
            stat_walk(root)
            walk.append((time.perf_counter() - started) * 1000)
            target = paths[(r * 7919) % len(paths)]
            target.write_text(target.read_text() + f"# round {r}\n")

            async def scan(old: str) -> str:
                new = await repo.snapshot()
                for delta in await repo.deltas(old, new):
                    for blob in (delta.before, delta.after):
                        if blob is not None:
                            await repo.blob(blob)
                return new

            started = time.perf_counter()
            tree = await scan(tree)
            changed.append((time.perf_counter() - started) * 1000)
        return {
            "files": files,
            "rounds": rounds,
            "first_snapshot_ms": first_ms,
            "unchanged_ms": statistics.median(unchanged),
            "one_changed_ms": statistics.median(changed),
            "stat_walk_ms": statistics.median(walk),
            "unchanged_vs_walk": statistics.median(unchanged) / statistics.median(walk),
            "changed_vs_walk": statistics.median(changed) / statistics.median(walk),
        }


def run(files: int = 50_000, rounds: int = 7, small: int = 12) -> JsonObject:
    return {
        "large": asyncio.run(measure(files, rounds)),
        "small": asyncio.run(measure(small, rounds)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print(json.dumps(run(args.files, args.rounds), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
