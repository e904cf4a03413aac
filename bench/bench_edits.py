"""Benchmark: minimal TextEdits and 3-way merge against a plain difflib line diff.

    python bench/bench_edits.py [--quick] [--json OUT]

For files of 1k/10k/100k code-like lines (blank lines, braces and repeated statements
included, some non-ASCII) with 1/20/500 scattered changed lines (modified, inserted and
deleted), it times, side by side in one run, the median of several rounds of:

- `minimal_edits(old, new, "utf-16")`: the whole job, from two strings to LSP TextEdits;
- the baseline `difflib.SequenceMatcher(None, a_lines, b_lines).get_opcodes()`, given
  the lines already split (so the baseline does strictly less work than ours);
- `merge3(base, ours, theirs)`: the agent's changes (as above) merged onto a tenth as many
  user changes (at least one) elsewhere in the file.

It prints a Markdown table; `--json OUT` also writes the figures. The team's benchmark
runner imports `run(quick) -> dict`.
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from acp_lsp.textedits import apply_edits, merge3, minimal_edits

SIZES = (1_000, 10_000, 100_000)
CHANGES = (1, 20, 500)
_COMMON_LINES = ("\n", "\n", "\n", "    }\n", "        return result\n", "    else:\n", "}\n")


def make_file(lines: int, seed: int) -> list[str]:
    """Code-like lines: a quarter repeat (blank lines, braces, returns), the rest unique."""
    rng = random.Random(seed)
    out: list[str] = []
    for i in range(lines):
        if rng.random() < 0.25:
            out.append(rng.choice(_COMMON_LINES))
        elif i % 50 == 0:
            out.append(f"    label_{i} = tr('Größe {i} — 文字 🙂')\n")
        else:
            out.append(f"    value_{i} = compute(value_{i - 1}, {rng.randrange(1000)})\n")
    return out


def change(lines: list[str], positions: list[int], tag: str) -> list[str]:
    """Modify, insert before, or delete the line at each position (cycling)."""
    out = list(lines)
    for n, pos in enumerate(sorted(positions, reverse=True)):
        kind = n % 3
        if kind == 0:
            out[pos] = out[pos].rstrip("\n") + f"  # {tag} {n}\n"
        elif kind == 1:
            out.insert(pos, "\n" if n % 2 else f"    {tag}_{n} = {n}\n")
        else:
            del out[pos]
    return out


def scattered(lines: int, count: int, rng: random.Random) -> list[int]:
    """`count` positions spread evenly over the file (neighbours when the changes are
    dense: 1k lines with 500 agent changes plus 50 user changes is every other line)."""
    stride = lines // count
    return [k * stride + rng.randrange(max(stride - 2, 1)) for k in range(count)]


def median_ms(fns: dict[str, Callable[[], object]], repeats: int) -> tuple[dict[str, float], int]:
    """Median wall time of each function, in ms. The functions take turns within each
    round, so a busy machine slows them alike and the ratios stay fair. Quick cases get
    more rounds (up to about 0.3 s each), so their medians are not one unlucky moment."""
    t0 = time.perf_counter()
    for fn in fns.values():
        fn()  # warm-up, and a measure of how many rounds fit
    one_round = time.perf_counter() - t0
    rounds = max(repeats, min(200, int(0.3 / max(one_round, 1e-9))))
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) * 1000 for name, ts in times.items()}, rounds


def bench_case(lines: int, changes: int, repeats: int) -> dict[str, Any]:
    rng = random.Random(lines * 1000 + changes)
    base_lines = make_file(lines, seed=lines)
    user_changes = max(1, changes // 10)
    spots = scattered(lines, changes + user_changes, rng)
    user_spots = spots[changes // user_changes // 2 :: len(spots) // user_changes][:user_changes]
    agent_spots = [s for s in spots if s not in set(user_spots)]
    theirs_lines = change(base_lines, agent_spots, "agent")
    ours_lines = change(base_lines, user_spots, "user")
    old, new = "".join(base_lines), "".join(theirs_lines)
    ours = "".join(ours_lines)

    edits = minimal_edits(old, new)
    assert apply_edits(old, edits) == new
    merged = merge3(old, ours, new)

    a_lines, b_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    ms, rounds = median_ms(
        {
            "minimal_edits": lambda: minimal_edits(old, new),
            "difflib": lambda: difflib.SequenceMatcher(None, a_lines, b_lines).get_opcodes(),
            "merge3": lambda: merge3(old, ours, new),
        },
        repeats,
    )
    ours_ms, difflib_ms, merge_ms = ms["minimal_edits"], ms["difflib"], ms["merge3"]
    return {
        "lines": lines,
        "changes": changes,
        "edits": len(edits),
        "rounds": rounds,
        "minimal_edits_ms": round(ours_ms, 3),
        "difflib_ms": round(difflib_ms, 3),
        "speedup_vs_difflib": round(difflib_ms / ours_ms, 2),
        "merge3_user_changes": user_changes,
        "merge3_conflicts": len(merged.conflicts),
        "merge3_ms": round(merge_ms, 3),
    }


def run(quick: bool = False) -> dict[str, Any]:
    """Measure every size and change count; `quick` takes fewer repeats."""
    repeats = 3 if quick else 7
    cases = [bench_case(n, c, repeats) for n in SIZES for c in CHANGES]
    return {
        "benchmark": "edits",
        "python": sys.version.split()[0],
        "repeats": repeats,  # at least; each case reports its rounds
        "unit": "ms (median)",
        "cases": cases,
    }


def markdown(result: dict[str, Any]) -> str:
    rows = [
        "| lines | changes | edits | minimal_edits ms | difflib ms | speedup | merge3 ms "
        "| merge3 conflicts |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in result["cases"]:
        rows.append(
            f"| {c['lines']:,} | {c['changes']} | {c['edits']} | {c['minimal_edits_ms']:.2f} "
            f"| {c['difflib_ms']:.2f} | {c['speedup_vs_difflib']:.1f}x | {c['merge3_ms']:.2f} "
            f"| {c['merge3_conflicts']} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the figures here")
    args = parser.parse_args(argv)
    result = run(args.quick)
    print(f"Python {result['python']}, medians of at least {result['repeats']} rounds\n")
    print(markdown(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
