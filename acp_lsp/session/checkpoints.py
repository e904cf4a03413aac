"""Checkpoints of one session (DESIGN §2 "Review by hunk, checkpoints, rewind…").

The shadow snapshot of the session's folder taken before a prompt goes to the agent is that
prompt's checkpoint; the one taken when its turn ended tells which files the turn changed (by
any route). Both are shadow-repository tree ids (``acp_lsp.disk.shadow``), kept by git refs so
that they outlive the process as long as the stored session does.

A checkpoint belongs to a user message, counted among the session's user messages (its
ordinal) rather than by its index in ``messages``: an agent that replays a resumed session
may number its other messages differently, but it replays each prompt as one user message.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from acp_lsp.session.jsonish import JSON

if TYPE_CHECKING:
    from acp_lsp.session.model import Session


@dataclass(frozen=True, slots=True)
class Checkpoint:
    root: str
    """The folder snapshotted (the session's cwd, real path)."""
    before: str
    """The folder before the prompt reached the agent."""
    after: str | None = None
    """The folder when the turn ended; None while it runs (or when it never ended)."""

    def json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"root": self.root, "before": self.before}
        if self.after is not None:
            out["after"] = self.after
        return out


class Checkpoints:
    """User message ordinal -> its checkpoint."""

    def __init__(self) -> None:
        self._by_ordinal: dict[int, Checkpoint] = {}

    def begin(self, ordinal: int, root: str, tree: str) -> None:
        self._by_ordinal[ordinal] = Checkpoint(root, tree)

    def end(self, ordinal: int, tree: str) -> None:
        found = self._by_ordinal.get(ordinal)
        if found is not None:
            self._by_ordinal[ordinal] = replace(found, after=tree)

    def get(self, ordinal: int) -> Checkpoint | None:
        return self._by_ordinal.get(ordinal)

    def since(self, ordinal: int) -> Iterator[tuple[int, Checkpoint]]:
        """The checkpoints of that user message and the later ones, oldest first."""
        for key in sorted(self._by_ordinal):
            if key >= ordinal:
                yield key, self._by_ordinal[key]

    def until(self, ordinal: int) -> Checkpoints:
        """A copy holding those of the user messages before ``ordinal`` (a rewound session)."""
        out = Checkpoints()
        out._by_ordinal = {k: v for k, v in self._by_ordinal.items() if k < ordinal}
        return out

    def json(self) -> dict[str, JSON] | None:
        """For the stored session (its extras); None when there is none."""
        if not self._by_ordinal:
            return None
        return {str(k): v.json() for k, v in sorted(self._by_ordinal.items())}

    def load(self, stored: JSON) -> None:
        """Those of a stored session (``json``'s output); malformed entries are skipped."""
        if not isinstance(stored, dict):
            return
        for key, value in stored.items():
            if not (key.isdigit() and isinstance(value, dict)):
                continue
            root, before, after = value.get("root"), value.get("before"), value.get("after")
            if isinstance(root, str) and isinstance(before, str):
                after = after if isinstance(after, str) else None
                self._by_ordinal[int(key)] = Checkpoint(root, before, after)

    def mark(self, messages: list[dict[str, JSON]]) -> list[dict[str, JSON]]:
        """``messages`` (a snapshot's) with ``checkpoint: true`` on each user message that has
        one it can go back to (its turn ended)."""
        return mark_messages(messages, {k for k, v in self._by_ordinal.items() if v.after})


def mark_messages(messages: list[dict[str, JSON]], ordinals: set[int]) -> list[dict[str, JSON]]:
    if not ordinals:
        return messages
    out = []
    ordinal = 0
    for message in messages:
        if message.get("role") == "user":
            if ordinal in ordinals:
                message = {**message, "checkpoint": True}
            ordinal += 1
        out.append(message)
    return out


def user_ordinal(session: Session, index: int) -> int | None:
    """The ordinal among user messages of ``session``'s message ``index``; None when that is
    not a user message."""
    if not 0 <= index < session.message_count() or session.message(index).role != "user":
        return None
    return sum(1 for i in range(index) if session.message(i).role == "user")


def stored_ordinals(stored: JSON) -> set[int]:
    """The user messages of a stored session (its extras' ``checkpoints``) that can be gone
    back to."""
    if not isinstance(stored, dict):
        return set()
    return {
        int(k) for k, v in stored.items() if k.isdigit() and isinstance(v, dict) and v.get("after")
    }
