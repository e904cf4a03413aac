"""Line diff: which lines of `a` survive into `b`.

Fast on the shape agent writes have (a large file, a few scattered changes):
1. the common prefix and suffix are cut with slice comparisons (C speed, galloping);
2. Myers' O(ND) greedy algorithm, whose diagonal snakes also gallop in C, is tried with a
   small edit budget: a few changes cost next to nothing, not even hashing every line;
3. past that budget, lines found on one side only are set aside (they can never match,
   so the LCS is unchanged — git's xdiff does the same), which makes replaced lines free,
   and Myers runs again on the rest with a larger budget;
4. past that too, the problem is split on lines unique to both sides (patience anchors)
   and the gaps recurse; a gap with no anchor at all is reported changed as a whole.
Myers gives a shortest edit script; only step 4 gives up minimality (never correctness),
and only for big rewrites.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Hashable, Sequence
from itertools import compress, islice, pairwise, repeat
from math import isqrt
from operator import and_, eq, lt, not_, sub
from typing import TypeVar

T = TypeVar("T")
H = TypeVar("H", bound=Hashable)

Run = tuple[int, int, int]
"""A matching run: a[i : i + n] == b[j : j + n], as (i, j, n)."""
Block = tuple[int, int, int, int]
"""A changed block: a[i1:i2] becomes b[j1:j2], as (i1, i2, j1, j2)."""

# Myers' cost grows as D²/2 Python steps (snakes run in C). First it gets a quick try with
# up to this many edits (fewer on short ranges, where hashing the lines is cheaper)…
MYERS_QUICK_D = 64
# …then, with one-sided lines set aside, as many steps as there are lines (about what
# patience costs), at least MYERS_QUICK_D and at most MYERS_MAX_D edits.
MYERS_MAX_D = 1000
# Patience splits recurse into gaps; this deep and the gap is reported changed whole.
_MAX_DEPTH = 32


def common_prefix_len(a: Sequence[T], ai: int, b: Sequence[T], bi: int, limit: int) -> int:
    """Length of the common prefix of a[ai : ai + limit] and b[bi : bi + limit].

    Gallops with slice comparisons, so the work runs in C and is linear in the answer.
    Works for `str` and `list` alike."""
    lo = 0  # a[ai : ai + lo] == b[bi : bi + lo] is known
    step = 1
    while True:
        hi = min(lo + step, limit)
        if hi == lo:
            return lo
        if a[ai + lo : ai + hi] != b[bi + lo : bi + hi]:
            break
        lo = hi
        step *= 2
    while hi - lo > 1:  # the first difference lies in [lo, hi)
        mid = (lo + hi) // 2
        if a[ai + lo : ai + mid] == b[bi + lo : bi + mid]:
            lo = mid
        else:
            hi = mid
    return lo


def common_suffix_len(a: Sequence[T], ae: int, b: Sequence[T], be: int, limit: int) -> int:
    """Length of the common suffix of a[ae - limit : ae] and b[be - limit : be]."""
    lo = 0
    step = 1
    while True:
        hi = min(lo + step, limit)
        if hi == lo:
            return lo
        if a[ae - hi : ae - lo] != b[be - hi : be - lo]:
            break
        lo = hi
        step *= 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[ae - mid : ae - lo] == b[be - mid : be - lo]:
            lo = mid
        else:
            hi = mid
    return lo


def unchanged_head_and_tail(base: str, *others: str) -> tuple[int, list[int]]:
    """(first, stops): every text equals `base` before `first`, and text k from
    `stops[k]` on (k = 0 is `base`) equals the end of `base`; all are line starts.
    Found by comparing characters (in C), so unchanged head and tail are never split
    into lines."""
    texts = (base, *others)
    limit = min(map(len, texts))
    head = min(common_prefix_len(base, 0, t, 0, limit) for t in others)
    # just after a "\n" is a line start in every text, and never inside a "\r\n"
    first = base.rfind("\n", 0, head) + 1
    tail = min(common_suffix_len(base, len(base), t, len(t), limit - head) for t in others)
    newline = base.find("\n", len(base) - tail)
    kept = 0 if newline < 0 else len(base) - newline - 1
    return first, [len(t) - kept for t in texts]


def diff_lines(a: Sequence[str], b: Sequence[str]) -> list[Block]:
    """The changed blocks turning lines `a` into lines `b`, in order, each separated from
    the next by at least one equal line. [] when a == b."""
    a, b = list(a), list(b)
    return blocks_from_runs(_matches(a, b, 0, False), len(a), len(b))


def blocks_from_runs(runs: Sequence[Run], n: int, m: int) -> list[Block]:
    """Changed blocks between ordered, non-crossing matching runs."""
    blocks: list[Block] = []
    pi = pj = 0
    for i, j, k in runs:
        if i > pi or j > pj:
            blocks.append((pi, i, pj, j))
        pi, pj = i + k, j + k
    if pi < n or pj < m:
        blocks.append((pi, n, pj, m))
    return blocks


def _matches(a: list[H], b: list[H], depth: int, filtered: bool) -> list[Run]:
    """Matching runs of two sequences, in order. `filtered`: every element of each side
    is known to occur on the other side."""
    n, m = len(a), len(b)
    if not n or not m:
        return []
    pre = common_prefix_len(a, 0, b, 0, min(n, m))
    if pre == n == m:
        return [(0, 0, n)]
    suf = common_suffix_len(a, n, b, m, min(n, m) - pre)
    runs = [(0, 0, pre)] if pre else []
    if pre + suf < n and pre + suf < m:
        inner = _align(a[pre : n - suf], b[pre : m - suf], depth, filtered)
        runs += [(i + pre, j + pre, k) for i, j, k in inner]
    if suf:
        runs.append((n - suf, m - suf, suf))
    return runs


def _align(a: list[H], b: list[H], depth: int, filtered: bool) -> list[Run]:
    size = len(a) + len(b)
    if not filtered:
        # A few edits (the common case) cost Myers less than hashing every line.
        runs = _myers(a, b, min(MYERS_QUICK_D, max(8, isqrt(size))))
        if runs is not None:
            return runs
        in_a, in_b = set(a), set(b)
        keep_a = list(compress(range(len(a)), map(in_b.__contains__, a)))
        keep_b = list(compress(range(len(b)), map(in_a.__contains__, b)))
        if len(keep_a) < len(a) or len(keep_b) < len(b):
            # Lines found on one side only can never match: align the rest, map back.
            reduced_a = list(map(a.__getitem__, keep_a))
            reduced_b = list(map(b.__getitem__, keep_b))
            return _expand(_matches(reduced_a, reduced_b, depth, True), keep_a, keep_b)
    runs = _myers(a, b, min(MYERS_MAX_D, max(MYERS_QUICK_D, isqrt(2 * size))))
    if runs is not None:
        return runs
    return _patience(a, b, depth)


def _expand(runs: list[Run], keep_a: list[int], keep_b: list[int]) -> list[Run]:
    """Map runs over the kept lines back to full indices, splitting a run wherever
    set-aside lines fell inside it."""
    out: list[Run] = []
    for x0, y0, k0 in runs:
        x, y, k = x0, y0, k0
        while k:
            i, j = keep_a[x], keep_b[y]
            if keep_a[x + k - 1] - i == k - 1 and keep_b[y + k - 1] - j == k - 1:
                out.append((i, j, k))
                break
            lo, hi = 1, k  # the first lo kept lines are contiguous, the first hi are not
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if keep_a[x + mid - 1] - i == mid - 1 and keep_b[y + mid - 1] - j == mid - 1:
                    lo = mid
                else:
                    hi = mid
            out.append((i, j, lo))
            x, y, k = x + lo, y + lo, k - lo
    return out


def _myers(a: list[H], b: list[H], max_d: int) -> list[Run] | None:
    """Shortest edit script (Myers 1986, greedy forward with a trace), as matching runs;
    None when it needs more than `max_d` edits."""
    n, m = len(a), len(b)
    max_d = min(max_d, n + m)
    off = max_d + 1
    v = [0] * (2 * max_d + 3)
    trace: list[list[int]] = []
    for d in range(max_d + 1):
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[off + k - 1] < v[off + k + 1]):
                x = v[off + k + 1]  # step down: insert b[y - 1]
            else:
                x = v[off + k - 1] + 1  # step right: delete a[x - 1]
            y = x - k
            if x < n and y < m and a[x] == b[y]:
                x += 1  # most snakes are short: only gallop past a second match
                if x < n and y + 1 < m and a[x] == b[y + 1]:
                    x += common_prefix_len(a, x, b, y + 1, min(n - x, m - y - 1))
            v[off + k] = x
            if x >= n and x - k >= m:
                trace.append(v[off - d : off + d + 1])
                return _myers_runs(trace, x, x - k)
        trace.append(v[off - d : off + d + 1])
    return None


def _myers_runs(trace: list[list[int]], end_x: int, end_y: int) -> list[Run]:
    """Walk the trace back from the end point, collecting the diagonal snakes."""
    runs: list[Run] = []
    x, y = end_x, end_y
    for d in range(len(trace) - 1, 0, -1):
        prev = trace[d - 1]  # index k + (d - 1)
        k = x - y
        if k == -d or (k != d and prev[k - 1 + d - 1] < prev[k + 1 + d - 1]):
            pk = k + 1
            px = prev[pk + d - 1]
            sx, sy = px, px - pk + 1
        else:
            pk = k - 1
            px = prev[pk + d - 1]
            sx, sy = px + 1, px - pk
        if x > sx:
            runs.append((sx, sy, x - sx))
        x, y = px, px - pk
    if x > 0:
        runs.append((0, 0, x))
    runs.reverse()
    return runs


def _patience(a: list[H], b: list[H], depth: int) -> list[Run]:
    """Split on lines unique to both sides (their longest increasing chain), recurse
    into the gaps. No anchor (or too deep): the whole range is one change."""
    if depth >= _MAX_DEPTH:
        return []
    count_a, count_b = Counter(a), Counter(b)
    unique = {x for x, k in count_a.items() if k == 1 and count_b.get(x) == 1}
    if not unique:
        return []
    is_unique = list(map(unique.__contains__, a))
    where_b = {y: j for j, y in enumerate(b) if y in unique}
    anchor_i = list(compress(range(len(a)), is_unique))
    anchor_j = list(map(where_b.__getitem__, compress(a, is_unique)))
    if not all(map(lt, anchor_j, islice(anchor_j, 1, None))):
        anchor_i, anchor_j = _longest_increasing(anchor_i, anchor_j)
    # Anchors next to each other in both sequences form one run; only between runs is
    # there a gap to recurse into. Found with map/compress, as there can be many anchors.
    diagonal = list(map(sub, anchor_i, anchor_j))
    joined = map(
        and_,
        map(eq, map(sub, islice(anchor_i, 1, None), anchor_i), repeat(1)),
        map(eq, islice(diagonal, 1, None), diagonal),
    )
    run_starts = [0, *compress(range(1, len(anchor_i)), map(not_, joined)), len(anchor_i)]
    runs: list[Run] = []
    pi = pj = 0
    for first, stop in pairwise(run_starts):
        i, j = anchor_i[first], anchor_j[first]
        if i > pi and j > pj:
            gap = _matches(a[pi:i], b[pj:j], depth + 1, False)
            runs += [(x + pi, y + pj, k) for x, y, k in gap]
        runs.append((i, j, stop - first))
        pi, pj = i + stop - first, j + stop - first
    if pi < len(a) and pj < len(b):
        runs += [(x + pi, y + pj, k) for x, y, k in _matches(a[pi:], b[pj:], depth + 1, False)]
    return runs


def _longest_increasing(firsts: list[int], seconds: list[int]) -> tuple[list[int], list[int]]:
    """The longest chain of pairs (firsts[k], seconds[k]), `firsts` increasing, that also
    increases in `seconds` (patience sorting)."""
    tails: list[int] = []  # smallest second element ending a chain of each length
    tail_at: list[int] = []  # its index k
    back: list[int] = []
    for k, j in enumerate(seconds):
        pos = bisect_left(tails, j)
        back.append(tail_at[pos - 1] if pos else -1)
        if pos == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[pos] = j
            tail_at[pos] = k
    chain: list[int] = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        chain.append(k)
        k = back[k]
    chain.reverse()
    return [firsts[k] for k in chain], [seconds[k] for k in chain]
