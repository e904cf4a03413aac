"""Disk tracking at any size: what following a session folder costs (acp_lsp/disk/shadow.py).

For each size N and two kinds of folder — a git checkout with every file committed and clean,
and the same files as a plain folder — side by side in one run:

- ours: ``ShadowRepo`` as the bridge runs it (an inotify dirty set names the paths a snapshot
  adds; an unchanged folder runs no git; a checkout's first snapshot borrows the user's
  objects and index);
- the anchors' way (Cline's and Zed's checkpoints): a whole ``git add -A`` + ``write-tree`` per
  checkpoint: the same ``ShadowRepo`` with no watcher (``watch=False``), whose first snapshot
  in a checkout hashes every file (nothing borrowed).

Timed, rounds alternating ours and theirs: (a) the first snapshot; (b) a snapshot of an
unchanged folder; (c) one changed file: snapshot + deltas + both texts read (a tool call's
scan); (f) the prompt path: the snapshot ``DiskSync.turn_started`` waits for, unchanged or
right after a change; (e) the watcher's memory: process RSS before/after a ``DirtyWatch`` of
the folder, and its count of watches. Every round checks that our tree is the anchors' tree.

Files spread as in a real repository: 100 per folder, 100 folders per package
(``src/p*/m*/f*.py``), every file's text its own. The checkout is made fast: each text goes to
its file and to one ``git fast-import`` stream at once (no ``git add``, no per-file hashing in
git's add path), then ``read-tree`` + ``update-index --refresh`` give the index its stat data.

    .venv/bin/python bench/bench_disk.py [--sizes 10000,100000,500000,1000000] [--rounds R]
        [--out FILE.json]; --markdown FILE.json prints its tables (docs/performance.md)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_lsp.disk import shadow
from acp_lsp.disk.shadow import ShadowRepo
from acp_lsp.disk.watch import DirtyWatch
from tests.support.big_repo import GIT_ENV, git

ROOT = Path(__file__).resolve().parents[1]

JsonObject = dict[str, Any]
QUIET: Any = {"capture_output": True, "text": True, "check": False}

PER_FOLDER = 100
PER_PACKAGE = PER_FOLDER * 100
SMALL = 12  # a small project's folder: what the prompt path costs there


def make_workspace(root: Path, files: int) -> list[Path]:
    """A plain folder of ``files`` Python files written one by one (bench_checkpoints uses it)."""
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


def rel_path(n: int) -> str:
    return f"src/p{n // PER_PACKAGE}/m{n // PER_FOLDER % 100}/f{n % PER_FOLDER}.py"


def source_text(n: int) -> bytes:
    """A small module of its own (0.1-1.1 KB, 0.6 on average): every file a distinct blob."""
    body = "".join(f"def f{i}(x):\n    return x * {n + i}\n\n" for i in range(3 + n % 29))
    return f'"""Module {n}."""\n\n{body}'.encode()


def make_checkout(root: Path, files: int) -> JsonObject:
    """``root``: a git checkout whose HEAD commits ``files`` files, all on disk and clean. Each
    text is written to its file and to one ``git fast-import`` stream at once (git packs them
    on the other core); then ``read-tree`` and ``update-index --refresh`` record the stat data
    a user's index holds."""
    started = time.perf_counter()
    root.mkdir(parents=True)
    git(root, "init", "-q")
    proc = subprocess.Popen(
        ["git", "-C", str(root), "fast-import", "--quiet", "--depth=0"],
        stdin=subprocess.PIPE,
        env={**os.environ, **GIT_ENV},
    )
    assert proc.stdin is not None
    proc.stdin.write(b"commit refs/heads/main\ncommitter user <user@example.com> 0 +0000\n")
    proc.stdin.write(b"data 6\nfirst\n")
    batch: list[bytes] = []
    for n in range(files):
        data = source_text(n)
        rel = rel_path(n)
        path = root / rel
        if n % PER_FOLDER == 0:
            path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)
        batch.append(b"M 100644 inline %s\ndata %d\n%s\n" % (rel.encode(), len(data), data))
        if len(batch) == 1_000:
            proc.stdin.write(b"".join(batch))
            batch.clear()
    proc.stdin.write(b"".join(batch) + b"\n")
    proc.stdin.close()
    if proc.wait() != 0:
        raise RuntimeError("git fast-import failed")
    written = time.perf_counter() - started
    git(root, "symbolic-ref", "HEAD", "refs/heads/main")
    git(root, "read-tree", "HEAD")
    # a file written in the index's own second stays "racily clean" (hashed again by every
    # git that reads the index) until the index is written a second later
    time.sleep(max(0.0, 1.05 - (time.perf_counter() - started - written)))
    git(root, "update-index", "-q", "--refresh")  # hashes each file once, as a clone's does
    if git(root, "status", "--porcelain"):
        raise RuntimeError("the generated checkout is not clean")
    return {
        "write_s": written,
        "generate_s": time.perf_counter() - started,
        "index_mb": (root / ".git" / "index").stat().st_size / 1e6,
    }


@contextlib.contextmanager
def nothing_borrowed() -> Iterator[None]:
    """The anchors hash every file of a checkout into their own store; and they wait for it
    (no 120 s limit, which would stop the measurement)."""

    async def none(root: str, git_dir: Path) -> str | None:
        return None

    with (
        mock.patch.object(shadow, "borrow_checkout", none),
        mock.patch.object(shadow, "GIT_TIMEOUT_S", 3600.0),
    ):
        yield


def rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def watcher_cost(root: Path) -> JsonObject:
    """What following the folder costs this process: RSS before/after a DirtyWatch of it
    (inotify_simple imported beforehand), and the Python heap it holds (tracemalloc, a second
    DirtyWatch). The kernel's side, about 1 KB per watch on 64-bit (inotify(7)), is not in
    either."""
    with tempfile.TemporaryDirectory() as empty:
        DirtyWatch(empty).close()  # the import and the first inotify instance: not the folder's
    gc.collect()
    before = rss_mb()
    started = time.perf_counter()
    watch = DirtyWatch(str(root))
    took = (time.perf_counter() - started) * 1000
    gc.collect()
    after = rss_mb()
    watched = watch.watched
    watch.close()
    del watch
    tracemalloc.start()
    watch = DirtyWatch(str(root))
    heap = tracemalloc.get_traced_memory()[0] / 1e6
    tracemalloc.stop()
    watch.close()
    return {
        "watch_ms": took,
        "watches": watched,
        "watch_rss_mb": after - before,
        "watch_heap_mb": heap,
        "mb_per_1000_folders": (after - before) / watched * 1000 if watched else 0.0,
        "heap_mb_per_1000_folders": heap / watched * 1000 if watched else 0.0,
    }


def ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


async def scan(repo: ShadowRepo, old: str) -> tuple[str, float, float, int]:
    """A tool call's scan: snapshot, deltas, both texts read. Returns the new tree, the
    snapshot's ms (the prompt path's), the whole scan's ms, and the delta count."""
    started = time.perf_counter()
    new = await repo.snapshot()
    snap = ms_since(started)
    deltas = await repo.deltas(old, new)
    for delta in deltas:
        for blob in (delta.before, delta.after):
            if blob is not None:
                await repo.blob(blob)
    return new, snap, ms_since(started), len(deltas)


async def measure_kind(
    root: Path, work: Path, kind: str, rounds: int, targets: list[Path]
) -> JsonObject:
    """Ours and the anchors' way on the same folder, rounds alternating."""
    out: JsonObject = {"kind": kind}
    out |= watcher_cost(root)
    ours = ShadowRepo(str(root), work / f"ours-{kind}")
    # the anchors' way: no watcher (the watchFiles = false switch), so every snapshot is a
    # whole `git add -A` + `write-tree`
    anchor = ShadowRepo(str(root), work / f"anchor-{kind}", watch=False)
    started = time.perf_counter()
    try:
        ours_tree = await ours.snapshot()
    except shadow.ShadowError as exc:
        # as shipped the folder is then not tracked at all (and a killed `git add` leaves
        # index.lock behind, failing every later snapshot): the figures below come from a
        # second first snapshot, from scratch, without the time limit
        out["first_error"] = str(exc)
        out["first_failed_ms"] = ms_since(started)
        say(f"{kind}: our first snapshot failed ({exc}); again without the limit")
        ours.close()  # a fresh repository beside it (deleting 1M loose objects takes minutes)
        ours = ShadowRepo(str(root), work / f"ours-{kind}-unlimited")
        started = time.perf_counter()
        with mock.patch.object(shadow, "GIT_TIMEOUT_S", 3600.0):
            ours_tree = await ours.snapshot()
    out["first_ms"] = ms_since(started)
    out["borrowed"] = ours.borrowed is not None
    out["watch_note"] = ours.watch_note
    if kind == "git":
        started = time.perf_counter()
        with nothing_borrowed():
            anchor_tree = await anchor.snapshot()
        out["anchor_first_ms"] = ms_since(started)
    else:
        # in a plain folder both first snapshots are the same `git add -A` into an empty
        # index (ours adds the watcher, timed above): the anchor starts from a copy of ours
        await anchor._prepare()
        alternates = anchor.git_dir / "objects" / "info" / "alternates"
        alternates.write_text(f"{ours.git_dir / 'objects'}\n", encoding="utf-8")
        shutil.copy2(ours.git_dir / "index", anchor.git_dir / "index")
        anchor_tree = await anchor.snapshot()
        out["anchor_first_ms"] = out["first_ms"]
    same = [anchor_tree == ours_tree]
    figures: dict[str, list[float]] = {
        k: []
        for k in (
            "unchanged",
            "anchor_unchanged",
            "changed_snapshot",
            "changed",
            "anchor_changed_snapshot",
            "anchor_changed",
            "prompt",
            "prompt_stored",
            "anchor_prompt",
        )
    }
    captured = 0
    deltas: list[int] = []
    for r in range(rounds):
        pair = [("", ours), ("anchor_", anchor)]
        if r % 2:
            pair.reverse()
        trees: dict[str, str] = {}
        for prefix, repo in pair:
            started = time.perf_counter()
            trees[prefix] = await repo.snapshot()
            figures[prefix + "unchanged"].append(ms_since(started))
        same.append(trees[""] == trees["anchor_"] == ours_tree)
        target = targets[r % len(targets)]
        with target.open("ab") as fh:  # an agent's edit: one file, a line appended
            fh.write(b"# round %d\n" % r)
        for prefix, repo in pair:
            tree, snap, whole, count = await scan(repo, ours_tree)
            trees[prefix] = tree
            figures[prefix + "changed_snapshot"].append(snap)
            figures[prefix + "changed"].append(whole)
            deltas.append(count)
        same.append(trees[""] == trees["anchor_"])
        # the prompt path after a user's save between turns: ours reads the change before the
        # prompt goes out (capture) and stores it after; the anchors' way waits for a snapshot
        with targets[(r + 1) % len(targets)].open("ab") as fh:
            fh.write(b"# saved before round %d's prompt\n" % r)
        for prefix, repo in pair:
            started = time.perf_counter()
            if prefix:
                trees[prefix] = await repo.snapshot()
            else:
                changes = repo.capture()
                figures["prompt"].append(ms_since(started))
                captured += changes is not None
                trees[prefix] = await repo.snapshot(changes)
            figures[prefix + ("prompt_stored" if not prefix else "prompt")].append(
                ms_since(started)
            )
        same.append(trees[""] == trees["anchor_"])
        ours_tree = trees[""]
    ours.close()
    anchor.close()
    for key, values in figures.items():
        out[key + "_ms"] = statistics.median(values)
    out["deltas"] = sorted(set(deltas))
    out["same_trees"] = all(same)
    out["unchanged_ratio"] = out["unchanged_ms"] / out["anchor_unchanged_ms"]
    out["changed_ratio"] = out["changed_ms"] / out["anchor_changed_ms"]
    out["first_ratio"] = out["first_ms"] / out["anchor_first_ms"]
    out["prompt_unchanged_ms"] = out["unchanged_ms"]
    out["prompt_changed_ms"] = out["prompt_ms"]
    out["prompt_captured"] = f"{captured} of {rounds}"
    out["shadow_index_mb"] = (ours.git_dir / "index").stat().st_size / 1e6
    return out


def say(message: str) -> None:
    print(f"[bench_disk {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


async def measure(files: int, rounds: int) -> list[JsonObject]:
    """Both kinds at one size: the checkout first, then the same files with .git removed."""
    base = os.environ.get("BENCH_DISK_TMP") or None
    with tempfile.TemporaryDirectory(prefix="acp-lsp-bench-disk-", dir=base) as tmp:
        work = Path(tmp)
        root = work / "ws"
        say(f"{files:,} files: generating")
        made = make_checkout(root, files)
        say(f"{files:,} files: generated in {made['generate_s']:.1f} s")
        folders = sum(1 for _ in os.walk(root)) - sum(1 for _ in os.walk(root / ".git"))
        spread = max(1, files // rounds)
        targets = [root / rel_path((r * spread + r * 7919) % files) for r in range(rounds)]
        cases: list[JsonObject] = []
        for kind in ("git", "plain"):
            if kind == "plain":
                shutil.rmtree(root / ".git")
            started = time.perf_counter()
            case = await measure_kind(root, work, kind, rounds, targets)
            case |= {"files": files, "folders": folders, "rounds": rounds, **made}
            case["seconds"] = time.perf_counter() - started
            say(f"{files:,} files, {kind}: {case['seconds']:.1f} s")
            cases.append(case)
        started = time.perf_counter()
        subprocess.run(["rm", "-rf", tmp], check=False)  # far quicker than rmtree
        for case in cases:
            case["cleanup_s"] = time.perf_counter() - started
        return cases


def run(
    sizes: tuple[int, ...] = (10_000, 100_000), rounds: int | None = None, out: Path | None = None
) -> JsonObject:
    """Every size, both kinds, and a small project's folder (12 files). ``rounds`` defaults
    to 7 (5 from 500,000 files, 3 from 1,000,000). With ``out``, the result so far is written
    there after each size (a long run stopped keeps what it measured)."""
    began, load = time.perf_counter(), os.getloadavg()
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], **QUIET)
    edited = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "acp_lsp"], **QUIET)
    result: JsonObject = {
        "sizes": [],
        "cases": [],
        "goals": [],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "seconds": 0.0,
        "load_avg_start": load,
        "load_avg_end": load,
        "cpus": os.cpu_count(),
        "git": subprocess.run(["git", "--version"], **QUIET).stdout.strip(),
        "commit": head.stdout.strip(),
        "acp_lsp_edited": edited.stdout.splitlines(),
    }
    for files in (SMALL, *sizes):
        n = rounds if rounds is not None else 7 if files < 500_000 else 5 if files < 1e6 else 3
        result["cases"] += asyncio.run(measure(files, n))
        result["sizes"].append(files)
        result["goals"] = goals(result["cases"])
        result["seconds"] = time.perf_counter() - began
        result["load_avg_end"] = os.getloadavg()
        if out is not None:
            out.write_text(json.dumps(result, indent=1) + "\n")
    return result


# -- reading the figures ---------------------------------------------------------------------


def _ms(value: float) -> str:
    return f"{value:,.2f}" if value < 10 else f"{value:,.0f}"


def _ratio(value: float) -> str:
    return f"{value:.3f}×" if value < 0.1 else f"{value:.2f}×"


ROWS: list[tuple[str, str]] = [
    ("first snapshot (a), ms", "first"),
    ("unchanged folder (b), ms", "unchanged"),
    ("one changed file: snapshot + deltas + both texts (c), ms", "changed"),
    ("a tool call's snapshot alone, one changed file, ms", "changed_snapshot"),
    ("prompt path after a user's save (f): what the prompt waits for, ms", "prompt"),
]


def table(cases: list[JsonObject], files: int) -> list[str]:
    """One size: each figure for both kinds, ours beside the anchors' way."""
    by_kind = {c["kind"]: c for c in cases if c["files"] == files}
    kinds = [k for k in ("git", "plain") if k in by_kind]
    head = "| figure | " + " | ".join(
        f"{k}: ours | {k}: anchors' | {k}: ours / anchors'" for k in kinds
    )
    lines = [head + " |", "|---" * (1 + 3 * len(kinds)) + "|"]
    for label, key in ROWS:
        cells = []
        for k in kinds:
            c = by_kind[k]
            ours, theirs = c[f"{key}_ms"], c[f"anchor_{key}_ms"]
            same = key == "first" and k == "plain"
            if key == "first" and "first_error" in c:
                cells += [f"**not tracked** ({c['first_error']}); {_ms(ours)} unlimited"]
                cells += ["(the same command)" if same else _ms(theirs), _ratio(ours / theirs)]
                continue
            cells += [
                _ms(ours),
                "(the same command)" if same else _ms(theirs),
                _ratio(ours / theirs),
            ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    cells = []
    for k in kinds:
        c = by_kind[k]
        cells += [
            f"{c['watches']:,} watches: RSS +{c['watch_rss_mb']:.1f} MB, "
            f"heap {c['watch_heap_mb']:.2f} MB, set up in {_ms(c['watch_ms'])} ms",
            "none",
            "",
        ]
    lines.append("| tracker memory (e) | " + " | ".join(cells) + " |")
    return lines


def goals(cases: list[JsonObject]) -> list[JsonObject]:
    """Issue 35's goals, each measured on every size and kind of this run."""
    ok = cases
    big = [c for c in ok if c["files"] == max(x["files"] for x in cases)]
    small = [c for c in ok if c["files"] == SMALL]
    out: list[JsonObject] = []

    def goal(name: str, measured: str, target: str, met: bool | None) -> None:
        out.append({"goal": name, "measured": measured, "target": target, "met": met})

    worst = max(c["unchanged_ms"] for c in ok)
    goal(
        "disk: an unchanged folder costs nothing (every size, both kinds)",
        f"{_ms(worst)} ms at most",
        "≤ 1 ms (no git run)",
        worst <= 1,
    )
    growth = [
        b["changed_ms"] / s["changed_ms"] for b in big for s in small if s["kind"] == b["kind"]
    ]
    files = big[0]["files"] if big else 0
    goal(
        f"disk: one changed file's scan, {files:,} files vs {SMALL} (work follows the change)",
        " / ".join(_ratio(g) for g in growth),
        "≤ 2× (git / plain)",
        bool(growth) and max(growth) <= 2,
    )
    failed = [c for c in cases if "first_error" in c or not c.get("same_trees")]
    goal(
        "disk: no size cap: every folder tracked, trees equal to the anchors'",
        f"{len(cases) - len(failed)} of {len(cases)} folders (up to {files:,} files)",
        "all",
        not failed,
    )
    prompt = max((c["prompt_ms"] for c in ok), default=float("nan"))
    goal(
        "disk: prompt path after one change, what the prompt waits for (every size, both kinds)",
        f"{_ms(prompt)} ms at most (unchanged: {_ms(worst)} ms)",
        "≤ 2 ms added",
        prompt <= 2,
    )
    per = [c["mb_per_1000_folders"] for c in big]
    heap = {c["files"]: c["heap_mb_per_1000_folders"] for c in ok if c["kind"] == "git"}
    top = [heap[n] for n in sorted(heap)[-2:] if n > SMALL]
    goal(
        f"disk: tracker memory per 1,000 folders watched ({files:,} files, git / plain)",
        " / ".join(f"{m:.2f} MB" for m in per)
        + " RSS; Python heap "
        + ", ".join(f"{heap[n]:.2f} MB at {n:,} files" for n in sorted(heap) if n > SMALL),
        "bounded: per folder, the same at every size (heap within 2×)",
        max(top) <= 2 * min(top) if len(top) == 2 else None,
    )
    return out


def markdown(result: JsonObject) -> str:
    edited = f", acp_lsp/ edited: {len(result['acp_lsp_edited'])} file(s)"
    lines = [
        f"Run {result['date']} at {result['commit']}"
        + (edited if result["acp_lsp_edited"] else "")
        + f", {result['git']}, {result['cpus']} CPUs; load average "
        f"{result['load_avg_start'][0]:.2f} at the start, {result['load_avg_end'][0]:.2f} at "
        f"the end; {result['seconds'] / 60:.1f} min. Medians of "
        + ", ".join(f"{c['rounds']}" for c in result["cases"] if c["kind"] == "git")
        + " alternating rounds (by size). `.venv/bin/python bench/bench_disk.py --sizes "
        + ",".join(str(n) for n in result["sizes"][1:])
        + "`."
    ]
    for files in result["sizes"]:
        lines += ["", f"**{files:,} files**", "", *table(result["cases"], files)]
    lines += ["", "| goal | measured | target | met |", "|---|---|---|---|"]
    for g in result["goals"]:
        met = {True: "met", False: "**missed**", None: "–"}[g["met"]]
        lines.append(f"| {g['goal']} | {g['measured']} | {g['target']} | {met} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default="10000,100000",
        help="comma-separated folder sizes in files (e.g. 10000,100000,500000,1000000)",
    )
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument(
        "--out", type=Path, help="also write the result there, after each size (JSON)"
    )
    parser.add_argument(
        "--markdown", type=Path, help="print the tables of a saved result (JSON) and stop"
    )
    args = parser.parse_args()
    if args.markdown is not None:
        print(markdown(json.loads(args.markdown.read_text())), end="")
        return 0
    sizes = tuple(int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip())
    print(json.dumps(run(sizes, args.rounds, args.out), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
