"""Summarise py-spy collapsed stacks: where the samples of a process went.

    python bench/profile_summary.py FILE [--top 30] [--thread MainThread]

Prints, per function, its share of samples as the innermost frame ("self") and anywhere
on the stack ("total"). Used to decide what to make fast (docs/performance.md).
"""

from __future__ import annotations

import argparse
import collections
import re

_FRAME = re.compile(r"^(?P<func>[^ ]+) \((?P<file>[^:]+)(?::\d+)?\)$")


def short(frame: str) -> str:
    m = _FRAME.match(frame.strip())
    if not m:
        return frame.strip()
    path = m.group("file")
    for marker in ("site-packages/", "lib/python3.11/", "/work/main/"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return f"{m.group('func')} ({path})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--grep", default="", help="only stacks containing this text")
    args = parser.parse_args()
    own: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    samples = 0
    with open(args.file) as fh:
        for line in fh:
            stack, _, count = line.rstrip().rpartition(" ")
            if args.grep and args.grep not in stack:
                continue
            n = int(count)
            frames = [short(f) for f in stack.split(";")]
            if "idle" in stack.lower() or frames[-1].startswith("select ("):
                key = "<idle: waiting in select>"
                own[key] += n
                total[key] += n
                samples += n
                continue
            samples += n
            own[frames[-1]] += n
            for f in set(frames):
                total[f] += n
    print(f"{samples} samples")
    print("\n-- self --")
    for f, n in own.most_common(args.top):
        print(f"{100 * n / samples:5.1f}%  {f}")
    print("\n-- total --")
    for f, n in total.most_common(args.top):
        print(f"{100 * n / samples:5.1f}%  {f}")


if __name__ == "__main__":
    main()
