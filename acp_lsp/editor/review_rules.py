"""How to undo a reported diff: the pure rules behind ``acp/reviewEdit reject`` (DESIGN §3).

Agents report changes as ``{type: "diff", path, oldText, newText}``, but ``oldText`` is not
always the file's old text: claude-agent-acp sends ``oldText: null`` for a Write over an
existing file and snippets for an Edit, and many agents write the disk first and report
afterwards. So the bridge keeps snapshots of a file's full text (``None``: the file did not
exist) and decides here, from the snapshots, the diffs and the file's current text, what a
reject writes:

1. A snapshot taken *before* the change (it does not already hold the reported
   ``newText``, or the change turns it into exactly the current text) is restored. Where
   the file now differs from what the change left (the user or a later change edited it),
   the undo is merged onto the current text (3-way), so their lines survive; overlapping
   edits refuse.
2. Otherwise the diffs are undone on the current text, last first: a ``newText`` equal to
   the whole text gives back ``oldText``; a ``newText`` found exactly once is replaced back;
   an ``oldText: null`` (a created file) whose text is still ``newText`` deletes the file,
   unless it is known to have existed before.
3. Anything else is refused with a message naming the file ("changed since").

A file that still reads exactly as a snapshot is judged by the tool call's status where the
text cannot tell (a snippet insertion whose new text was already there reads the same from
both sides): a completed call made its change, a failed one did not.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from acp_lsp.textedits import merge3

Snapshot = str | None
"""A file's full text, or None for a file that did not exist."""


@dataclass(frozen=True)
class Diff:
    """One reported ``diff`` item: ``old`` None means the agent gave no old text."""

    old: str | None
    new: str


@dataclass(frozen=True)
class Plan:
    """What a reject does to one file.

    ``write``: make the file's text ``text``; ``delete``: remove the file; ``none``: it is
    already as it was (a missing file that stays missing); ``refuse``: leave it, ``reason``.
    """

    action: Literal["write", "delete", "none", "refuse"]
    text: str | None = None
    reason: str | None = None


def replace_once(text: str, old: str, new: str) -> str | None:
    """``text`` with its one occurrence of ``old`` replaced; None unless ``old`` occurs exactly
    once (overlapping occurrences count: either could be the one the agent meant)."""
    if not old:
        return None
    at = text.find(old)
    if at < 0 or text.find(old, at + 1) >= 0:
        return None
    return text[:at] + new + text[at + len(old) :]


def holds_change(snapshot: Snapshot, diff: Diff) -> bool:
    """Whether ``snapshot`` already shows ``diff`` applied (it was taken after the change)."""
    if snapshot is None:
        # Nothing existed: a creation came later. A snippet edit of a missing file cannot be
        # placed, so such a snapshot is of no use either.
        return diff.old is not None
    if diff.old is None:
        return snapshot == diff.new
    if snapshot == diff.old:
        return snapshot == diff.new
    if snapshot == diff.new:
        return True
    if diff.new in diff.old:
        # A deletion-like edit: the new snippet is part of the old one, so the old text
        # contains it too; only the old snippet's absence shows the change was made.
        return diff.old not in snapshot
    return diff.new in snapshot


def apply_diffs(snapshot: Snapshot, diffs: Sequence[Diff]) -> Snapshot | Literal[False]:
    """The text the diffs leave when made to ``snapshot``; False when they cannot be placed."""
    text = snapshot
    for diff in diffs:
        if diff.old is None:
            text = diff.new
        elif text is None:
            return False
        elif text == diff.old:
            text = diff.new
        else:
            replaced = replace_once(text, diff.old, diff.new)
            if replaced is None:
                return False
            text = replaced
    return text


def changed_since(path: str) -> Plan:
    return Plan(
        "refuse",
        reason=f"{path} changed since the agent's edit; it was left as it is "
        "(undo your own changes to it first, or accept the edit)",
    )


def restore_snapshot(
    path: str, snapshot: Snapshot, diffs: Sequence[Diff], current: Snapshot
) -> Plan:
    """Rule 1: give back ``snapshot``, taken before ``diffs`` were made."""
    if current == snapshot:
        return Plan("none") if snapshot is None else Plan("write", snapshot)
    left = apply_diffs(snapshot, diffs)
    if left is False:
        return undo_diffs(path, diffs, current, existed_before=snapshot is not None)
    if current == left:
        return Plan("delete") if snapshot is None else Plan("write", snapshot)
    if snapshot is None or left is None or current is None:
        return changed_since(path)
    merged = merge3(left, current, snapshot)
    if merged.text is None:
        return changed_since(path)
    return Plan("write", merged.text)


def undo_diffs(
    path: str, diffs: Sequence[Diff], current: Snapshot, *, existed_before: bool
) -> Plan:
    """Rule 2: take the diffs back out of the current text, the last one first."""
    text = current
    for index in range(len(diffs) - 1, -1, -1):
        diff = diffs[index]
        if text is None:
            return changed_since(path)
        if diff.old is None:
            if text != diff.new:
                return changed_since(path)
            if index > 0 or existed_before:
                return Plan(
                    "refuse",
                    reason=f"cannot restore {path}: the agent did not report its previous "
                    "text and the file existed before; it was left as it is",
                )
            return Plan("delete")
        if text == diff.new:
            text = diff.old
            continue
        replaced = replace_once(text, diff.new, diff.old)
        if replaced is None:
            return changed_since(path)
        text = replaced
    return Plan("write", text)


def plan_reject(
    path: str,
    diffs: Sequence[Diff],
    snapshots: Sequence[Snapshot],
    current: Snapshot,
    *,
    existed_before: bool = False,
    made: bool | None = None,
) -> Plan:
    """What rejecting ``diffs`` (in the order they were made) does to ``path``.

    ``snapshots`` are the file's texts seen before or around the change, the most precise
    first; the first one taken before the change is restored. ``existed_before`` says the
    file is known to have existed before the change (so a creation-shaped diff must not
    delete it). ``made`` is what the tool call's status says (completed: True; failed or
    cancelled: False; else None); it only settles a snapshot that could be either side.
    """
    if not diffs:
        return Plan("none")
    for snapshot in snapshots:
        if current == snapshot:
            side = unchanged_side(snapshot, diffs, made)
            if side == "before":  # the change was never made (or is undone already)
                return Plan("none") if snapshot is None else Plan("write", snapshot)
            if side == "unknown":
                return Plan(
                    "refuse",
                    reason=f"cannot tell whether the agent's change to {path} was made; "
                    "it was left as it is",
                )
            continue
        # A snapshot the change turns into exactly the current text predates it too, even
        # when it happens to contain the new snippet already.
        if not holds_change(snapshot, diffs[0]) or apply_diffs(snapshot, diffs) == current:
            return restore_snapshot(path, snapshot, diffs, current)
    return undo_diffs(path, diffs, current, existed_before=existed_before)


def unchanged_side(
    text: Snapshot, diffs: Sequence[Diff], made: bool | None
) -> Literal["before", "after", "unknown"]:
    """Which side of the change ``text`` is on, when the file still reads as this snapshot.

    A completed tool call made its change, so the snapshot shows it (if it does not, the
    undo refuses). Otherwise the text decides, and snippets can leave it ambiguous: an
    insertion whose new text was already there, or a deletion whose old text forms again,
    reads the same from both sides; a failed call then counts as never made.
    """
    if made:
        return "after"
    placed = apply_diffs(text, diffs)
    could_be_before = placed is not False and placed != text
    undone = undo_diffs("", diffs, text, existed_before=False)
    earlier: Snapshot | Literal[False] = False
    if undone.action == "write":
        earlier = undone.text
    elif undone.action == "delete":
        earlier = None
    could_be_after = earlier is not False and apply_diffs(earlier, diffs) == text
    if could_be_before and could_be_after:
        return "before" if made is False else "unknown"
    if could_be_before or could_be_after:
        return "before" if could_be_before else "after"
    return "after" if holds_change(text, diffs[0]) else "before"


FileStatus = Literal["pending", "accepted", "rejected", "failed"]


def overall_status(statuses: Sequence[str]) -> str:
    """A tool call's review status from its files': pending while any file is unreviewed."""
    if not statuses:
        return "pending"
    if "pending" in statuses:
        return "pending"
    if "failed" in statuses:
        return "failed"
    first = statuses[0]
    return first if all(s == first for s in statuses) else "mixed"


def made_by(states: Iterable[dict[str, Any] | None]) -> bool | None:
    """Whether the tool calls made their changes, as far as their statuses tell."""
    statuses = {state.get("status") if state else None for state in states}
    if statuses == {"completed"}:
        return True
    if statuses and statuses <= {"failed", "cancelled"}:
        return False
    return None
