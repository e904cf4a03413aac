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
import os
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError
from acp_lsp.editor.file_text import read_disk
from acp_lsp.editor.files import DocumentFiles
from acp_lsp.editor.review_rules import Diff, Snapshot, plan_reject
from acp_lsp.editor.review_sources import diff_items, location_paths, raw_input_paths
from acp_lsp.editor.review_state import (
    OPEN_STATUSES,
    CallChanges,
    FileChange,
    SessionChanges,
)
from acp_lsp.sandbox import Sandbox, SandboxError
from acp_lsp.session import Session

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]
DiskWritten = Callable[[Session, str, str | None, str], Awaitable[None]]
KEEP_SNAPSHOT_TURNS = 20
"""Snapshots of unreviewed changes are kept this many turns; older ones undo from diffs."""


class _Unreadable:
    """current_text failed (a directory, not UTF-8): no snapshot."""


_UNREADABLE = _Unreadable()
_DONE = {"accept": "accepted", "reject": "rejected"}


class ReviewManager:
    """Tracks reported changes per session and carries out ``acp/reviewEdit``."""

    def __init__(
        self,
        files: DocumentFiles,
        publish: Callable[[Session, list[JsonObject]], None],
        sandbox: Callable[[Session], Sandbox],
    ) -> None:
        self._files = files
        self._publish = publish
        self._sandbox = sandbox
        self._sessions: dict[str, SessionChanges] = {}
        self.disk_written: DiskWritten | None = None
        """Told when a reject rewrote a file on disk (disk sync brings open buffers along)."""

    # -- what the session names --------------------------------------------------------------
    def turn_started(self, session: Session) -> None:
        state = self._sessions.setdefault(session.session_id, SessionChanges())
        state.start_turn(KEEP_SNAPSHOT_TURNS)

    def note_path(self, session: Session, path: str, real: str) -> None:
        """A tool call, permission request or fs call names ``real``: snapshot it once a turn."""
        state = self._sessions.get(session.session_id)
        if state is None or state.turn == 0 or real in state.snapshots:
            return
        text = self._text(real)
        if not isinstance(text, _Unreadable):
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
            real = _resolve(sandbox, session, path)
            if real is not None and real not in call.sights:
                text = self._text(real)
                if not isinstance(text, _Unreadable):
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
            real = _resolve(sandbox, session, path)
            key = real or path
            grouped.setdefault(key, (path, real, []))[2].append(diff)
        for key, (path, real, file_diffs) in grouped.items():
            change = call.files.get(key)
            if change is not None:
                change.diffs = file_diffs  # content replaces whole arrays: the latest report
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

    # -- acp/reviewEdit ----------------------------------------------------------------------
    async def review(
        self, session: Session, action: str, tool_call_id: str | None, path: str | None
    ) -> JsonObject:
        if action not in _DONE:
            raise BackendError(
                p.INVALID_PARAMS, f"action: expected accept or reject, not {action!r}"
            )
        changes = self._sessions.setdefault(session.session_id, SessionChanges())
        async with changes.lock:
            targets = self._targets(session, changes, tool_call_id, path)
            groups: dict[str, list[tuple[CallChanges, FileChange]]] = {}
            for call, change in targets:
                groups.setdefault(change.key, []).append((call, change))
            results: list[JsonObject] = []
            touched: dict[str, CallChanges] = {}
            for items in groups.values():
                results.append(await self._decide(session, action, items))
                touched.update((call.tool_call_id, call) for call, _ in items)
            for call in touched.values():
                self._publish(session, session.set_review(call.tool_call_id, call.review_json()))
        wanted = _DONE[action]
        applied = bool(results) and all(r["status"] == wanted for r in results)
        return {"applied": applied, "files": results}

    def _targets(
        self,
        session: Session,
        changes: SessionChanges,
        tool_call_id: str | None,
        path: str | None,
    ) -> list[tuple[CallChanges, FileChange]]:
        if tool_call_id is not None:
            call = changes.calls.get(tool_call_id)
            if call is None and session.tool_call(tool_call_id) is None:
                raise BackendError(
                    p.INVALID_PARAMS,
                    f"toolCallId: no tool call {tool_call_id!r} in session {session.session_id!r}",
                    {"toolCallId": tool_call_id},
                )
            pairs = [(call, change) for change in call.files.values()] if call else []
            if path is not None:
                pairs = [pair for pair in pairs if self._matches(session, pair[1], path)]
                if not pairs:
                    raise BackendError(
                        p.INVALID_PARAMS,
                        f"path: tool call {tool_call_id!r} reported no change to {path}",
                        {"path": path},
                    )
            return pairs
        pairs = list(changes.last_turn_files())
        if path is not None:
            pairs = [pair for pair in pairs if self._matches(session, pair[1], path)]
            if not pairs:
                raise BackendError(
                    p.INVALID_PARAMS,
                    f"path: the last turn reported no change to {path}",
                    {"path": path},
                )
        return [(call, change) for call, change in pairs if change.status in OPEN_STATUSES]

    def _matches(self, session: Session, change: FileChange, path: str) -> bool:
        if change.path == path:
            return True
        real = _resolve(self._sandbox(session), session, path)
        return real is not None and real == change.real

    async def _decide(
        self, session: Session, action: str, items: list[tuple[CallChanges, FileChange]]
    ) -> JsonObject:
        """Accept or reject one file's changes (one or more tool calls, in their order)."""
        display = items[0][1].path
        open_items = [change for _, change in items if change.status in OPEN_STATUSES]
        if not open_items:
            status = items[-1][1].status
            return {"path": display, "status": status, "message": f"already {status}"}
        if action == "accept":
            _settle(open_items, "accepted")
            return {"path": display, "status": "accepted"}
        made = _made([session.tool_call(call.tool_call_id) for call, _ in items])
        try:
            await self._reject(session, open_items, made)
        except BackendError as exc:
            _settle(open_items, "failed", exc.message)
            return {"path": display, "status": "failed", "message": exc.message}
        _settle(open_items, "rejected")
        return {"path": display, "status": "rejected"}

    async def _reject(self, session: Session, changes: list[FileChange], made: bool | None) -> None:
        first = changes[0]
        path = first.path if os.path.isabs(first.path) else os.path.join(session.cwd, first.path)
        try:
            real = self._sandbox(session).resolve(path)
        except SandboxError as exc:
            raise BackendError(p.INVALID_PARAMS, str(exc)) from None
        # A change seen on disk is undone on disk, byte for byte; an open buffer then gets the
        # undo like any disk change (the user's unsaved edits stay unsaved). Reported-only
        # changes are undone in what the user sees, through the editor.
        on_disk = all(change.change for change in changes)
        current = self._disk_text(real) if on_disk else self._text(real)
        if isinstance(current, _Unreadable):
            raise BackendError(p.INVALID_PARAMS, f"{first.path} is not a readable text file now")
        label = f"acp-lsp: undo {session.agent}'s edit of {os.path.basename(first.path)}"
        if changes[-1].deleted:
            # the last change deleted the file: bring back the text it had before the first
            if os.path.lexists(real):
                raise BackendError(
                    p.INVALID_PARAMS, f"{first.path} was created again since; left as it is"
                )
            before = first.snapshots[0] if first.snapshots else None
            if before is not None:
                self._files.write_disk(real, before)  # nothing on disk to clobber
            return
        plan = plan_reject(
            first.path,
            [diff for change in changes for diff in change.diffs],
            first.snapshots,
            current,
            existed_before=first.existed_before,
            made=made,
        )
        if plan.action == "refuse":
            raise BackendError(p.INVALID_PARAMS, plan.reason or f"{first.path} changed since")
        if plan.action == "write" and plan.text is not None:
            if on_disk:
                self._files.write_disk(real, plan.text)
                if self.disk_written is not None:
                    await self.disk_written(session, real, current, plan.text)
            else:
                await self._files.restore(real, plan.text, label)
        elif plan.action == "delete":
            await self._files.delete(real, label)
        log.info("review: rejected %s (%s)", first.path, plan.action)

    @staticmethod
    def _disk_text(real: str) -> Snapshot | _Unreadable:
        try:
            return read_disk(real)
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError):
            return _UNREADABLE

    def _text(self, real: str) -> Snapshot | _Unreadable:
        try:
            return self._files.current_text(real)
        except BackendError:
            return _UNREADABLE


def _made(states: Iterable[JsonObject | None]) -> bool | None:
    """Whether the tool calls made their changes, as far as their statuses tell."""
    statuses = {state.get("status") if state else None for state in states}
    if statuses == {"completed"}:
        return True
    if statuses and statuses <= {"failed", "cancelled"}:
        return False
    return None


def _settle(changes: Iterable[FileChange], status: str, message: str | None = None) -> None:
    for change in changes:
        change.settle(status, message)


def _resolve(sandbox: Sandbox, session: Session, path: str) -> str | None:
    if not os.path.isabs(path):
        path = os.path.join(session.cwd, path)
    try:
        return sandbox.resolve(path)
    except SandboxError:
        return None
