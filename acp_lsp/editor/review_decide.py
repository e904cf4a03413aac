"""Deciding reviewed changes: ``acp/reviewEdit`` by tool call, file or hunk (DESIGN §2).

``review`` records what each tool call changed; this module takes the user's decisions on
those changes: which changes a request names, keeping them, and undoing them (through
``review_undo``), whole or by hunk. It also finds the open hunks at a line, for editors that
review through code actions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError
from acp_lsp.editor.review_hunks import Hunk, file_status, where_now
from acp_lsp.editor.review_rules import made_by
from acp_lsp.editor.review_sources import resolve_named
from acp_lsp.editor.review_state import (
    OPEN_STATUSES,
    CallChanges,
    FileChange,
    SessionChanges,
)
from acp_lsp.editor.review_undo import Undoer
from acp_lsp.sandbox import Sandbox
from acp_lsp.session import Session

JsonObject = dict[str, Any]
_DONE = {"accept": "accepted", "reject": "rejected"}


class ReviewDecisions:
    """Carries out ``acp/reviewEdit`` on the changes ``ReviewManager`` recorded."""

    def __init__(
        self,
        sessions: dict[str, SessionChanges],
        undo: Undoer,
        publish: Callable[[Session, list[JsonObject]], None],
        sandbox: Callable[[Session], Sandbox],
        tell_agent: Callable[[], bool],
    ) -> None:
        self._sessions = sessions
        self.undo = undo
        self._publish = publish
        self._sandbox = sandbox
        self._tell_agent = tell_agent

    def hunks_at(self, real: str, line: int) -> Iterator[tuple[str, str, FileChange, Hunk]]:
        """The open hunks whose lines (0-based ``line``) the file shows now, with their
        session and tool call; a hunk that removed lines is at the lines around the gap."""
        current = self.undo.text(real)
        if not isinstance(current, str):
            return
        for session_id, changes in self._sessions.items():
            for call in changes.calls.values():
                change = call.files.get(real)
                if change is None or change.status not in OPEN_STATUSES:
                    continue
                hunks = [h for h in change.with_hunks() if h.status in OPEN_STATUSES]
                if change.texts is None or not hunks:
                    continue
                spans = where_now(change.texts[1], current, hunks)
                for hunk in hunks:
                    start, end = spans.get(hunk.index, (-2, -2))
                    if start <= line < end or (start == end and line in (start - 1, start)):
                        yield session_id, call.tool_call_id, change, hunk

    # -- acp/reviewEdit ----------------------------------------------------------------------
    async def review(
        self,
        session: Session,
        action: str,
        tool_call_id: str | None,
        path: str | None,
        hunk: int | None = None,
    ) -> JsonObject:
        if action not in _DONE:
            raise BackendError(
                p.INVALID_PARAMS, f"action: expected accept or reject, not {action!r}"
            )
        if hunk is not None and (tool_call_id is None or path is None):
            raise BackendError(
                p.INVALID_PARAMS,
                "hunk: name the tool call (toolCallId) and the file (path) it belongs to",
                {"hunk": hunk},
            )
        changes = self._sessions.setdefault(session.session_id, SessionChanges())
        async with changes.lock:
            targets = self._targets(session, changes, tool_call_id, path)
            groups: dict[str, list[tuple[CallChanges, FileChange]]] = {}
            for call, change in targets:
                groups.setdefault(change.key, []).append((call, change))
            results: list[tuple[JsonObject, bool]] = []
            touched: dict[str, CallChanges] = {}
            for items in groups.values():
                if hunk is None:
                    results.append(await self._decide(session, action, items))
                else:
                    results.append(await self._decide_hunk(session, action, items[-1][1], hunk))
                touched.update((call.tool_call_id, call) for call, _ in items)
            for call in touched.values():
                self._publish(session, session.set_review(call.tool_call_id, call.review_json()))
        applied = bool(results) and all(done for _, done in results)
        return {"applied": applied, "files": [result for result, _ in results]}

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
        real = resolve_named(self._sandbox(session), session, path)
        return real is not None and real == change.real

    async def _decide(
        self, session: Session, action: str, items: list[tuple[CallChanges, FileChange]]
    ) -> tuple[JsonObject, bool]:
        """Accept or reject one file's changes (one or more tool calls, in their order)."""
        display = items[0][1].path
        open_items = [change for _, change in items if change.status in OPEN_STATUSES]
        if not open_items:
            status = items[-1][1].status
            return {"path": display, "status": status, "message": f"already {status}"}, False
        made = made_by([session.tool_call(call.tool_call_id) for call, _ in items])
        by_hunk = any(change.hunks_decided() for change in open_items)
        try:
            if by_hunk:  # each change settles from its hunks
                await self._decide_rest(session, action, open_items, made)
            elif action == "reject":
                await self.undo.reject(session, self._sandbox(session), open_items, made)
        except BackendError as exc:
            _settle(open_items, "failed", exc.message)
            return {"path": display, "status": "failed", "message": exc.message}, False
        if not by_hunk:
            _settle(open_items, _DONE[action])
        if action == "reject":
            self._rejected(session, display)
        return {"path": display, "status": open_items[-1].status}, True

    async def _decide_rest(
        self, session: Session, action: str, changes: list[FileChange], made: bool | None
    ) -> None:
        """The hunks still open of ``changes``, where some are decided: each decided as the
        file is, the decided ones left as they are (a reject undoes the rest only)."""
        for change in reversed(changes):  # undone the last first
            hunks = change.with_hunks()
            if action == "reject" and not hunks:
                await self.undo.reject(session, self._sandbox(session), [change], made)
            elif action == "reject":
                # the rejected ones are undone already: the file holds them as a user's edit
                undone = [h for h in hunks if h.status in OPEN_STATUSES]
                await self.undo.reject_hunks(session, self._sandbox(session), change, undone)
            for hunk in hunks:
                if hunk.status in OPEN_STATUSES:
                    hunk.status = _DONE[action]
            change.settle(file_status(hunks) if hunks else _DONE[action])

    async def _decide_hunk(
        self, session: Session, action: str, change: FileChange, index: int
    ) -> tuple[JsonObject, bool]:
        """Accept or reject hunk ``index`` of ``change`` alone."""
        hunks = change.with_hunks()
        if not hunks:
            raise BackendError(
                p.INVALID_PARAMS,
                f"hunk: the change to {change.path} has no hunks (a created or deleted file, or "
                "its earlier text is not known); review the file whole",
                {"hunk": index},
            )
        if not 0 <= index < len(hunks):
            raise BackendError(
                p.INVALID_PARAMS,
                f"hunk: the change to {change.path} has {len(hunks)} hunks, numbered from 0; "
                f"there is no hunk {index}",
                {"hunk": index},
            )
        hunk = hunks[index]
        out: JsonObject = {"path": change.path, "hunk": index}
        if hunk.status not in OPEN_STATUSES or change.status not in OPEN_STATUSES:
            status = hunk.status if hunk.status not in OPEN_STATUSES else change.status
            out |= {"status": change.status, "hunkStatus": hunk.status}
            return out | {"message": f"already {status}"}, False
        if action == "reject":
            try:
                if change.texts is None:
                    raise BackendError(
                        p.INVALID_PARAMS,
                        f"the change to {change.path} is too old to undo by hunk; "
                        "review the file whole",
                    )
                await self.undo.reject_hunks(session, self._sandbox(session), change, [hunk])
                self._rejected(session, change.path, hunk.lines())
            except BackendError as exc:
                change.settle_hunk(hunk, "failed", exc.message)
                out |= {"status": change.status, "hunkStatus": "failed"}
                return out | {"message": exc.message}, False
        change.settle_hunk(hunk, _DONE[action])
        return out | {"status": change.status, "hunkStatus": hunk.status}, True

    def _rejected(self, session: Session, path: str, place: str | None = None) -> None:
        """Tell the agent at its next prompt what the user rejected (DESIGN §2): a text
        block before the prompt (``session.primer``), kept up to date until it is sent. A
        whole file's change is named alone, without its lines."""
        changes = self._sessions[session.session_id]
        if not self._tell_agent():
            return
        if place is None:
            changes.rejected[path] = []
        elif changes.rejected.get(path) != []:
            changes.rejected.setdefault(path, []).append(place)
        block = changes.told
        if block is None or block not in (session.primer or []):
            block = changes.told = {"type": "text", "text": ""}
            session.primer = [*(session.primer or []), block]
        block["text"] = changes.wording()


def _settle(changes: Iterable[FileChange], status: str, message: str | None = None) -> None:
    for change in changes:
        change.settle(status, message)
