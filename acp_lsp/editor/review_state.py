"""What the bridge remembers per session for review: snapshots and reported changes.

Kept apart from the manager so the bookkeeping (which snapshot belongs to which change) can be
read on its own. Nothing here talks to the editor.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from acp_lsp.editor.review_hunks import Hunk, exact_texts, file_status, hunks_of
from acp_lsp.editor.review_rules import Diff, Snapshot, overall_status

JsonObject = dict[str, Any]

OPEN_STATUSES = frozenset({"pending", "failed"})
"""A file in one of these states still awaits a decision (a failed reject may be retried)."""


@dataclass
class FileChange:
    """The changes one tool call reported for one file."""

    path: str
    """As the agent reported it (what the editor is shown)."""
    real: str | None
    """Sandbox-resolved; None when the sandbox refused the path."""
    diffs: list[Diff]
    snapshots: list[Snapshot]
    """The file's text before (or around) the change, the most precise first."""
    existed_before: bool
    """The file was seen existing in an earlier turn (a creation-shaped diff must not delete)."""
    status: str = "pending"
    message: str | None = None
    deleted: bool = False
    """The change deleted the file (seen on disk): an undo writes the text back."""
    change: str | None = None
    """Seen on disk by the bridge (not only reported): "created", "modified" or "deleted"."""
    texts: tuple[str, str] | None = None
    """The exact text before and after the change, once known (review_hunks.exact_texts)."""
    hunks: list[Hunk] | None = None
    """Its hunks, once ``texts`` are known; their statuses, once any is decided."""

    @property
    def key(self) -> str:
        return self.real or self.path

    def reported(self, diffs: list[Diff]) -> None:
        """The agent reported the change anew (content replaces whole arrays)."""
        self.diffs = diffs
        self.forget_hunks()

    def forget_hunks(self) -> None:
        """The change's texts may differ now: its hunks are worked out again, unless some
        are decided already (their indices must stay what the editor was shown)."""
        if self.hunks is None or all(h.status == "pending" for h in self.hunks):
            self.texts = self.hunks = None

    def with_hunks(self) -> list[Hunk]:
        """The change's hunks ([] while its exact texts are unknown)."""
        if self.hunks is None and self.status == "pending" and not self.deleted:
            self.texts = exact_texts(self.snapshots, self.diffs)
            if self.texts is not None:
                self.hunks = hunks_of(*self.texts)
        return self.hunks or []

    def hunks_decided(self) -> bool:
        return any(h.status != "pending" for h in self.hunks or ())

    def settle(self, status: str, message: str | None = None) -> None:
        self.status, self.message = status, message
        for hunk in self.hunks or ():
            if hunk.status in OPEN_STATUSES:
                hunk.status = status
        if status not in OPEN_STATUSES:
            self.snapshots = []  # decided for good: the texts are no longer needed
            self.texts = None

    def settle_hunk(self, hunk: Hunk, status: str, message: str | None = None) -> None:
        """``hunk`` decided; the file is when all its hunks are (``mixed`` where they differ)."""
        hunk.status = status
        overall = file_status(self.hunks or [hunk])
        if overall == "pending":
            self.message = message
        else:
            self.settle(overall, message)

    def result(self) -> JsonObject:
        out: JsonObject = {"path": self.path, "status": self.status}
        if self.change:
            out["change"] = self.change
        if self.message:
            out["message"] = self.message
        hunks = self.with_hunks()
        if hunks:
            out["hunks"] = [hunk.json() for hunk in hunks]
        return out


@dataclass
class CallChanges:
    """One tool call as review sees it: the files it named and the changes it reported."""

    tool_call_id: str
    turn: int
    sights: dict[str, Snapshot] = field(default_factory=dict)
    """Real path -> the file's text when this call first named it."""
    files: dict[str, FileChange] = field(default_factory=dict)
    """By ``FileChange.key``, in the order the call reported them."""

    def review_json(self) -> JsonObject:
        files = [change.result() for change in self.files.values()]
        return {"status": overall_status([f["status"] for f in files]), "files": files}


@dataclass
class SessionChanges:
    """Review bookkeeping of one session."""

    turn: int = 0
    """Turns started so far; 0 means none (replayed history is not reviewable)."""
    snapshots: dict[str, Snapshot] = field(default_factory=dict)
    """This turn: real path -> the text when the turn first named it."""
    first_diff_call: dict[str, str] = field(default_factory=dict)
    """This turn: real path -> the first tool call that reported a change to it."""
    seen_existing: set[str] = field(default_factory=set)
    """Real paths seen existing in an earlier turn."""
    calls: dict[str, CallChanges] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    rejected: dict[str, list[str]] = field(default_factory=dict)
    """Rejected since the last prompt: path -> the lines ([] for the whole change)."""
    told: dict[str, Any] | None = None
    """The text block that tells the agent so, waiting in the session's primer."""

    def wording(self) -> str:
        named = [
            f"{path} ({', '.join(places)})" if places else path
            for path, places in self.rejected.items()
        ]
        return (
            "[The user reviewed your earlier changes and rejected these, which are undone "
            f"now; do not make them again unless asked: {'; '.join(named)}.]"
        )

    def start_turn(self, keep_turns: int) -> None:
        self.rejected, self.told = {}, None  # the prompt just sent carried them
        self.seen_existing.update(path for path, text in self.snapshots.items() if text is not None)
        self.turn += 1
        self.snapshots = {}
        self.first_diff_call = {}
        for tool_call_id in [i for i, c in self.calls.items() if not c.files]:
            del self.calls[tool_call_id]  # read-only calls: their sightings served their turn
        for call in self.calls.values():
            call.sights = {}
            if call.turn <= self.turn - keep_turns:
                # Bounded memory: very old changes are undone from their diffs alone.
                for change in call.files.values():
                    change.snapshots = []
                    change.texts = None

    def last_turn_files(self) -> Iterator[tuple[CallChanges, FileChange]]:
        for call in self.calls.values():
            if call.turn == self.turn:
                for change in call.files.values():
                    yield call, change
