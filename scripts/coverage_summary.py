"""Line and branch coverage of acp_lsp per package, from the .coverage file of `./run tests`
(the tests and every server and Python agent they started). Prints a table; with --out FILE
also writes it as Markdown.

Usage: python scripts/coverage_summary.py [--data .coverage] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import coverage


def per_package(report: dict[str, dict[str, dict[str, int]]]) -> dict[str, list[int]]:
    """Package (acp_lsp/editor, …; the top-level modules as `acp_lsp`) -> [statements,
    covered, branches, covered branches]."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for name, data in report.items():
        parts = Path(name).parts
        package = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
        summary = data["summary"]
        row = totals[package]
        row[0] += summary["num_statements"]
        row[1] += summary["covered_lines"]
        row[2] += summary.get("num_branches", 0)
        row[3] += summary.get("covered_branches", 0)
    return dict(sorted(totals.items()))


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "n/a"


def table(totals: dict[str, list[int]]) -> list[str]:
    lines = [
        "| package | lines | line coverage | branches | branch coverage |",
        "|---|---:|---:|---:|---:|",
    ]
    overall = [0, 0, 0, 0]
    for package, (stmts, covered, branches, covered_branches) in totals.items():
        lines.append(
            f"| {package} | {stmts:,} | {percent(covered, stmts)} | {branches:,} | "
            f"{percent(covered_branches, branches)} |"
        )
        for i, value in enumerate((stmts, covered, branches, covered_branches)):
            overall[i] += value
    lines.append(
        f"| **all** | {overall[0]:,} | {percent(overall[1], overall[0])} | {overall[2]:,} | "
        f"{percent(overall[3], overall[2])} |"
    )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=".coverage")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if not Path(args.data).exists():
        sys.stderr.write(f"no coverage data in {args.data}\n")
        return 1
    cov = coverage.Coverage(data_file=args.data)
    cov.load()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "coverage.json"
        cov.json_report(outfile=str(out))
        report = json.loads(out.read_text(encoding="utf-8"))["files"]
    lines = table(per_package(report))
    sys.stdout.write("coverage of acp_lsp by package (tests, servers and Python agents):\n")
    sys.stdout.write("\n".join(lines) + "\n")
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
