"""3-way line merge of an agent's write onto the user's concurrent edits.

`base` is the text the agent read, `ours` the user's current text, `theirs` the agent's
new content. Each side's changes are line hunks against `base`. Hunks from the two sides
that overlap in `base` (or insert at the very same point) form a cluster: a cluster
changed by one side only takes that side; one both sides changed identically takes that
text; anything else is a conflict, and a conflict yields no text at all, so a caller can
never write a result that lost the user's lines. Changes to neighbouring lines do not
overlap and are combined.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from acp_lsp.text.linediff import Block, diff_lines, unchanged_head_and_tail
from acp_lsp.text.lines import count_line_breaks, split_lines

_OURS, _THEIRS = 0, 1


@dataclass
class MergeResult:
    """The merged text, or None on conflict with the conflicting line ranges."""

    text: str | None
    conflicts: list[tuple[int, int]] = field(default_factory=list)
    """1-based inclusive line ranges in `ours` that conflict. Where the user deleted the
    lines the agent changed, the range names the line just after the deletion."""


@dataclass
class _Cluster:
    start: int  # base line range [start, end)
    end: int
    hunks: list[list[Block]]  # per side, in order


def merge3(base: str, ours: str, theirs: str) -> MergeResult:
    """Merge `theirs` (the agent's write) onto `ours` (the user's text), both made from
    `base`. Non-overlapping changes combine; the same change on both sides is taken once;
    different changes to the same lines are a conflict (text None)."""
    if ours == theirs or theirs == base:
        return MergeResult(ours)
    if ours == base:
        return MergeResult(theirs)
    first, (base_stop, ours_stop, theirs_stop) = unchanged_head_and_tail(base, ours, theirs)
    base_lines = split_lines(base[first:base_stop])
    sides = (split_lines(ours[first:ours_stop]), split_lines(theirs[first:theirs_stop]))
    clusters = _clusters(
        diff_lines(base_lines, sides[_OURS]), diff_lines(base_lines, sides[_THEIRS])
    )

    out = [base[:first]]
    conflicts: list[tuple[int, int]] = []
    head_lines = count_line_breaks(ours, 0, first)
    done = 0  # base lines up to here are emitted
    for cluster in clusters:
        out += base_lines[done : cluster.start]
        done = cluster.end
        ours_part = _side_range(cluster, _OURS)
        theirs_part = _side_range(cluster, _THEIRS)
        if theirs_part is None:
            assert ours_part is not None
            out += sides[_OURS][ours_part[0] : ours_part[1]]
        elif ours_part is None:
            out += sides[_THEIRS][theirs_part[0] : theirs_part[1]]
        else:
            mine = sides[_OURS][ours_part[0] : ours_part[1]]
            if mine == sides[_THEIRS][theirs_part[0] : theirs_part[1]]:
                out += mine
            else:
                line = head_lines + ours_part[0] + 1
                conflicts.append((line, max(line, head_lines + ours_part[1])))
    if conflicts:
        return MergeResult(None, conflicts)
    out += base_lines[done:]
    out.append(base[base_stop:])
    return MergeResult("".join(out))


def _clusters(ours: list[Block], theirs: list[Block]) -> list[_Cluster]:
    """Group both sides' hunks into clusters of transitively overlapping ones.

    Hunks of one side never overlap or touch each other (an equal line separates them),
    so a hunk that overlaps a cluster's span overlaps a hunk of the other side."""
    tagged = sorted(
        [(h[0], h[1], _OURS, h) for h in ours] + [(h[0], h[1], _THEIRS, h) for h in theirs]
    )
    clusters: list[_Cluster] = []
    for start, end, side, hunk in tagged:
        if clusters:
            last = clusters[-1]
            same_insert_point = start == end == last.start == last.end
            if start < last.end or same_insert_point:
                last.end = max(last.end, end)
                last.hunks[side].append(hunk)
                continue
        cluster = _Cluster(start, end, [[], []])
        cluster.hunks[side].append(hunk)
        clusters.append(cluster)
    return clusters


def _side_range(cluster: _Cluster, side: int) -> tuple[int, int] | None:
    """The lines [first, last) of `side` that stand for the cluster's base lines, or None
    when that side left them unchanged. Base lines of the cluster outside the side's hunks
    are unchanged on that side, so the range extends over them one for one."""
    hunks = cluster.hunks[side]
    if not hunks:
        return None
    first, last = hunks[0], hunks[-1]
    return first[2] - (first[0] - cluster.start), last[3] + (cluster.end - last[1])
