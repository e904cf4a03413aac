"""Hunks of a reviewed change: its runs of changed lines, kept or undone one at a time.

A file's change has a hunk list once its text before and after the change are known exactly
(a change seen on disk, or reported diffs that place onto a snapshot taken before them). The
hunks are those of a zero-context diff of the two texts, numbered in file order; they stay
the same while the review lasts, whatever is decided, so an editor can name one by its index.
Undoing one hunk is a 3-way merge: from the text the change left, onto the file's current
text, of the change's text with that hunk put back — so the other hunks and the user's later
edits stay, and an edit of the user's over the same lines refuses, naming them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from acp_lsp.editor.review_rules import Diff, Plan, Snapshot, apply_diffs, holds_change
from acp_lsp.textedits import diff_lines, split_lines

JsonObject = dict[str, Any]


@dataclass
class Hunk:
    """One run of changed lines: ``old_lines`` lines from ``old_start`` became ``new_lines``
    lines from ``new_start`` (1-based as in a unified diff; an empty side names the line
    before it)."""

    index: int
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    status: str = "pending"
    old_text: str | None = None
    """The lines the change removed or replaced (None when too long to send along)."""

    def json(self) -> JsonObject:
        out: JsonObject = {
            "index": self.index,
            "oldStart": self.old_start,
            "oldLines": self.old_lines,
            "newStart": self.new_start,
            "newLines": self.new_lines,
            "status": self.status,
        }
        if self.old_text is not None:
            out["oldText"] = self.old_text  # an editor shows removed lines where they were
        return out

    def lines(self) -> str:
        """The lines the change left, as a person names them ("lines 4-6", "after line 3")."""
        if self.new_lines == 0:
            return f"after line {self.new_start}" if self.new_start else "at the top"
        if self.new_lines == 1:
            return f"line {self.new_start}"
        return f"lines {self.new_start}-{self.new_start + self.new_lines - 1}"


def exact_texts(snapshots: Sequence[Snapshot], diffs: Sequence[Diff]) -> tuple[str, str] | None:
    """The file's text before and after ``diffs``, when a snapshot taken before them places
    them (both texts exact); None for a created or deleted file, or snippets that do not
    place."""
    if not diffs:
        return None
    for snapshot in snapshots:
        if snapshot is None or holds_change(snapshot, diffs[0]):
            continue
        after = apply_diffs(snapshot, diffs)
        if isinstance(after, str) and after != snapshot:
            return snapshot, after
    return None


OLD_TEXT_MAX = 4096
"""A hunk's removed lines go along (``oldText``) up to this many characters."""


def hunks_of(before: str, after: str) -> list[Hunk]:
    """The hunks that turn ``before`` into ``after``, in file order."""
    hunks = []
    old = split_lines(before)
    for index, (i1, i2, j1, j2) in enumerate(diff_lines(old, split_lines(after))):
        removed = "".join(old[i1:i2])
        hunks.append(
            Hunk(
                index,
                old_start=i1 + 1 if i2 > i1 else i1,
                old_lines=i2 - i1,
                new_start=j1 + 1 if j2 > j1 else j1,
                new_lines=j2 - j1,
                old_text=removed if len(removed) <= OLD_TEXT_MAX else None,
            )
        )
    return hunks


def put_back(before: str, after: str, hunks: Iterable[Hunk]) -> str:
    """``after`` with the lines of ``hunks`` as they were in ``before``."""
    text = put_back_onto(before, after, hunks, after)
    assert isinstance(text, str)
    return text


def put_back_onto(before: str, after: str, hunks: Iterable[Hunk], current: str) -> str | list[Hunk]:
    """``current`` (``after`` as the user has edited it since) with the lines of ``hunks``
    as they were in ``before``, the user's edits kept; the hunks whose lines the user edited
    too when there are any. The hunks are placed by their own line ranges, not found again by
    a diff (a diff of repeated lines can pair them otherwise and misplace the undo)."""
    old, new, now = split_lines(before), split_lines(after), split_lines(current)
    users = diff_lines(new, now) if current != after else []
    wanted = sorted(hunks, key=lambda h: h.index, reverse=True)  # the last first
    clashes = [h for h in wanted if any(_overlap(h, block) for block in users)]
    if clashes:
        return sorted(clashes, key=lambda h: h.index)
    for hunk in wanted:
        at = _now_at(users, hunk)
        old_from = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
        now[at : at + hunk.new_lines] = old[old_from : old_from + hunk.old_lines]
    return "".join(now)


def where_now(after: str, current: str, hunks: Iterable[Hunk]) -> dict[int, tuple[int, int]]:
    """Where the lines of each of ``hunks`` are in ``current`` (``after`` as edited since):
    0-based ``[start, end)`` by hunk index, for the hunks the edits left alone."""
    users = diff_lines(split_lines(after), split_lines(current)) if current != after else []
    return {
        hunk.index: (_now_at(users, hunk), _now_at(users, hunk) + hunk.new_lines)
        for hunk in hunks
        if not any(_overlap(hunk, block) for block in users)
    }


def _now_at(users: Sequence[tuple[int, int, int, int]], hunk: Hunk) -> int:
    """The line (0-based) where ``hunk``'s lines start in the edited text: its place in
    ``after`` moved by the lines the edits before it added or removed."""
    start = hunk.new_start - 1 if hunk.new_lines else hunk.new_start
    shift = sum((j2 - j1) - (i2 - i1) for i1, i2, j1, j2 in users if i2 <= start and i1 < i2)
    shift += sum(j2 - j1 for i1, i2, j1, j2 in users if i1 == i2 <= start)
    return start + shift


def _overlap(hunk: Hunk, block: tuple[int, int, int, int]) -> bool:
    """Whether the user's change ``block`` (after's lines i1:i2 → theirs) touches the lines
    of ``hunk`` in after: shares a line with them, or inserts inside them or at the very
    point the hunk inserts."""
    start = hunk.new_start - 1 if hunk.new_lines else hunk.new_start
    end = start + hunk.new_lines
    i1, i2 = block[0], block[1]
    if start == end:  # the hunk removed lines: its place is a point between two lines
        return i1 < start < i2 or i1 == i2 == start
    if i1 == i2:
        return start < i1 < end
    return i1 < end and start < i2


def plan_hunks_reject(
    path: str, before: str, after: str, hunks: Sequence[Hunk], current: Snapshot
) -> Plan:
    """What undoing ``hunks`` of the change ``before`` → ``after`` does to ``path``, whose
    text is now ``current``."""
    if current is None:
        return Plan("refuse", reason=f"{path} was deleted since; it was left as it is")
    text = put_back_onto(before, after, hunks, current)
    if isinstance(text, list):
        places = ", ".join(h.lines() for h in text)
        return Plan(
            "refuse",
            reason=f"{path} changed at {places} since the agent's edit; it was left as it is "
            "(undo your own changes there first, or keep the change)",
        )
    return Plan("write", text)


def file_status(hunks: Sequence[Hunk]) -> str:
    """A file's review status from its hunks': pending while any is, then the one status they
    share, else ``mixed`` (some kept, some undone)."""
    statuses = {h.status for h in hunks}
    if "pending" in statuses:
        return "pending"
    if "failed" in statuses:
        return "failed"
    return statuses.pop() if len(statuses) == 1 else "mixed"
