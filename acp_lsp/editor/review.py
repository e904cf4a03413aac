"""Reviewable edits: ``toolCall.review`` and ``acp/reviewEdit`` (DESIGN §2, §3).

Agents mostly write files themselves and report ``diff`` items in tool calls, whose
``oldText`` may be a snippet or null. So the bridge snapshots a file's full text (or its
absence) the first time a turn names its path, and again the first time each tool call names
it; a tool call with diffs becomes reviewable (``toolCall.review``), and a reject restores
the file by the rules in ``review_rules`` through the editor (``DocumentFiles``), saving as
writes do. ``accept`` marks the change kept.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from acp_lsp.editor.files import DocumentFiles
from acp_lsp.editor.review_decide import ReviewDecisions
from acp_lsp.editor.review_rules import Diff, Snapshot
from acp_lsp.editor.review_sources import diff_items, location_paths, raw_input_paths, resolve_named
from acp_lsp.editor.review_state import (
    OPEN_STATUSES,
    CallChanges,
    FileChange,
    SessionChanges,
)
from acp_lsp.editor.review_undo import Undoer, Unreadable
from acp_lsp.sandbox import Sandbox
from acp_lsp.session import Session

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]
KEEP_SNAPSHOT_TURNS = 20
"""Snapshots of unreviewed changes are kept this many turns; older ones undo from diffs."""


_DONE = {"accept": "accepted", "reject": "rejected"}


class ReviewManager:
    """Tracks reported changes per session and carries out ``acp/reviewEdit``."""

    def __init__(
        self,
        files: DocumentFiles,
        publish: Callable[[Session, list[JsonObject]], None],
        sandbox: Callable[[Session], Sandbox],
        tell_agent: Callable[[], bool] = lambda: True,
    ) -> None:
        self.undo = Undoer(files)
        self._publish = publish
        self._sandbox = sandbox
        self._sessions: dict[str, SessionChanges] = {}
        self.decide = ReviewDecisions(self._sessions, self.undo, publish, sandbox, tell_agent)
        """``acp/reviewEdit`` and the plain-LSP review code actions."""

    # -- what the session names --------------------------------------------------------------
    def turn_started(self, session: Session) -> None:
        state = self._sessions.setdefault(session.session_id, SessionChanges())
        state.start_turn(KEEP_SNAPSHOT_TURNS)

    def note_path(self, session: Session, path: str, real: str) -> None:
        """A tool call, permission request or fs call names ``real``: snapshot it once a turn."""
        state = self._sessions.get(session.session_id)
        if state is None or state.turn == 0 or real in state.snapshots:
            return
        text = self.undo.text(real)
        if not isinstance(text, Unreadable):
            state.snapshots[real] = text

    def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def on_tool_call(self, session: Session, state: JsonObject) -> None:
        """Every tool-call state published: record sightings and diffs, set ``review``.

        ``state`` is the outgoing update's own copy: the review is set on it in place (and in
        the session), so the update the editor gets already carries it, in order.
        """
        changes = self._sessions.get(session.session_id)
        tool_call_id = state.get("toolCallId")
        if changes is None or changes.turn == 0 or not isinstance(tool_call_id, str):
            return
        content = state.get("content")
        if not isinstance(content, list):  # an append-only update omits content
            full = session.tool_call(tool_call_id) or {}
            content = full.get("content")
        diffs = diff_items(content)
        named = [
            *location_paths(state.get("locations")),
            *raw_input_paths(state.get("rawInput")),
            *(path for path, _ in diffs),
        ]
        call = changes.calls.get(tool_call_id)
        if call is None:
            if not named:
                return
            call = changes.calls[tool_call_id] = CallChanges(tool_call_id, changes.turn)
        sandbox = self._sandbox(session)
        for path in named:
            real = resolve_named(sandbox, session, path)
            if real is not None and real not in call.sights:
                text = self.undo.text(real)
                if not isinstance(text, Unreadable):
                    call.sights[real] = text
                    changes.snapshots.setdefault(real, text)
        if not diffs:
            return
        self._record_diffs(session, changes, call, sandbox, diffs)
        review = call.review_json()
        if state.get("review") != review:
            session.set_review(tool_call_id, review)
            state["review"] = review

    def _record_diffs(
        self,
        session: Session,
        changes: SessionChanges,
        call: CallChanges,
        sandbox: Sandbox,
        diffs: list[tuple[str, Diff]],
    ) -> None:
        grouped: dict[str, tuple[str, str | None, list[Diff]]] = {}
        for path, diff in diffs:
            real = resolve_named(sandbox, session, path)
            key = real or path
            grouped.setdefault(key, (path, real, []))[2].append(diff)
        for key, (path, real, file_diffs) in grouped.items():
            change = call.files.get(key)
            if change is not None:
                change.reported(file_diffs)  # content replaces whole arrays: the latest
                continue
            snapshots: list[Snapshot] = []
            if real is not None:
                if real in call.sights:
                    snapshots.append(call.sights[real])
                first = changes.first_diff_call.setdefault(real, call.tool_call_id)
                if (
                    first == call.tool_call_id
                    and call.turn == changes.turn
                    and real in changes.snapshots
                    and changes.snapshots[real] not in snapshots
                ):
                    snapshots.append(changes.snapshots[real])
            change = FileChange(
                path=path,
                real=real,
                diffs=file_diffs,
                snapshots=snapshots,
                existed_before=real is not None and real in changes.seen_existing,
            )
            if real is None:
                change.settle("failed", f"{path} is outside the workspace; it cannot be reviewed")
            call.files[key] = change

    def record_disk_change(
        self, session: Session, tool_call_id: str, real: str, before: str | None, after: str | None
    ) -> bool:
        """A change the bridge saw on disk (``before``/``after``: exact texts, None = absent),
        made while ``tool_call_id`` ran: it joins that call's review, whatever the agent
        reported. The exact ``before`` makes the undo byte for byte. False when the session
        has no turn to review (replayed history)."""
        changes = self._sessions.get(session.session_id)
        if changes is None or changes.turn == 0:
            return False
        call = changes.calls.get(tool_call_id)
        if call is None:
            call = changes.calls[tool_call_id] = CallChanges(tool_call_id, changes.turn)
        kind = "created" if before is None else "deleted" if after is None else "modified"
        change = call.files.get(real)
        if change is not None and change.status in OPEN_STATUSES:
            # reported by the agent too (a diff): keep its diffs, undo from the exact text
            if after is not None and not change.deleted:
                change.snapshots = [before, *(t for t in change.snapshots if t != before)]
                change.forget_hunks()
            change.change = change.change or kind
        else:
            call.files[real] = FileChange(
                path=real,
                real=real,
                diffs=[Diff(before, after)] if after is not None else [],
                snapshots=[before],
                existed_before=before is not None,
                change=kind,
                deleted=after is None,
            )
        changes.snapshots.setdefault(real, before)
        self._publish(session, session.set_review(tool_call_id, call.review_json()))
        return True

    async def fs_write(self, session: Session, real: str, write: Awaitable[None]) -> None:
        """The agent writes ``real`` through the client (``write``: fs/write_text_file). The
        write joins the review of the latest tool call of the turn naming the file, unless
        that call reported a diff for it (the diff decides): agents that report no diff stay
        reviewable, by hunk too, as both texts are exact (``after``: merged into the buffer)."""
        before = self.undo.text(real)
        await write
        after = self.undo.text(real)
        changes = self._sessions.get(session.session_id)
        if changes is None or changes.turn == 0 or not isinstance(after, str) or before == after:
            return
        calls = [c for c in changes.calls.values() if c.turn == changes.turn and real in c.sights]
        if isinstance(before, Unreadable) or not calls or real in calls[-1].files:
            return
        call = calls[-1]
        exists = before is not None
        change = FileChange(real, real, [Diff(before, after)], [before], existed_before=exists)
        call.files[real] = change
        changes.snapshots.setdefault(real, before)
        self._publish(session, session.set_review(call.tool_call_id, call.review_json()))
