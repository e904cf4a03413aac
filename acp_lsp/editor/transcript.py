"""The transcript document: a session as Markdown that a plain LSP editor can open.

Editors without an acp/* front end read the conversation here. The file lives in the data
dir (``transcripts/<session>.md``, so no workspace gets a stray file); it is created on disk
once, shown with ``window/showDocument`` where the client supports that, and from then on
kept up to date only through ``workspace/applyEdit`` (minimal edits: appends while a turn
streams), throttled, and flushed at once when a turn ends. The server never writes the file
behind the editor's back after it was created: the editor's buffer is the copy that counts.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.uris import from_fs_path

from acp_lsp.editor.workspace_edits import build_workspace_edit
from acp_lsp.history.export import to_markdown, tool_call_markdown
from acp_lsp.session import Session
from acp_lsp.textedits import minimal_edits

if TYPE_CHECKING:
    from acp_lsp.server import AcpLanguageServer

log = logging.getLogger(__name__)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_NOTICE_TYPES = {"warning": types.MessageType.Warning, "error": types.MessageType.Error}


class Transcripts:
    def __init__(self, server: AcpLanguageServer, directory: Path, interval: float = 0.3) -> None:
        self.server = server
        self.directory = directory
        self.interval = interval
        self._pushed: dict[str, str] = {}  # session id -> the text the editor got last
        # session id -> tool call id -> (its revision, its Markdown): a finished call is not
        # read back from the history store at every render
        self._calls: dict[str, dict[str, tuple[int, str]]] = {}
        self._sessions: dict[str, Session] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._lock = asyncio.Lock()

    def path(self, session_id: str) -> Path:
        return self.directory / f"{_UNSAFE.sub('_', session_id)}.md"

    def uri(self, session_id: str) -> str:
        return from_fs_path(str(self.path(session_id))) or ""

    def has(self, session_id: str) -> bool:
        return session_id in self._sessions

    async def start(self, session: Session, show: bool = True) -> str:
        """Make the session's transcript and show it (where the client can); its URI."""
        sid = session.session_id
        text = self._render(session)
        if sid not in self._sessions:
            path = self.path(sid)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            self._sessions[sid] = session
            self._pushed[sid] = text
        if show:
            await self.show(sid)
        return self.uri(sid)

    async def show(self, session_id: str) -> bool:
        if not get_capability(
            self.server.client_capabilities, "window.show_document.support", False
        ):
            return False
        try:
            result = await asyncio.wait_for(
                self.server.window_show_document_async(
                    types.ShowDocumentParams(uri=self.uri(session_id), take_focus=True)
                ),
                timeout=10,
            )
        except Exception as exc:
            log.info("transcript not shown: %s", exc)
            return False
        return bool(result.success)

    def observe(self, session: Session, updates: list[Any]) -> None:
        sid = session.session_id
        for update in updates:
            if update.get("sessionUpdate") == "notice" and sid in self._sessions:
                self._notice(session, update)
        if sid in self._sessions and sid not in self._timers:
            loop = asyncio.get_running_loop()
            self._timers[sid] = loop.call_later(self.interval, self._due(sid))

    def _notice(self, session: Session, notice: dict[str, Any]) -> None:
        """ACP's session notice (RFD "Session Notices"): a plain editor shows it as a message,
        a warning or an error as the agent rates it."""
        level = _NOTICE_TYPES.get(str(notice.get("severity")), types.MessageType.Info)
        text = " — ".join(
            str(notice[key]) for key in ("title", "description") if isinstance(notice.get(key), str)
        )
        if text:
            self.server.window_show_message(
                types.ShowMessageParams(type=level, message=f"{session.agent}: {text}")
            )

    def _due(self, sid: str) -> Callable[[], None]:
        def run() -> None:
            self._timers.pop(sid, None)
            self.server.tasks.spawn(self.flush(sid), name="transcript")

        return run

    async def flush(self, session_id: str) -> None:
        """Bring the editor's copy up to date now."""
        session = self._sessions.get(session_id)
        if session is None:
            return
        timer = self._timers.pop(session_id, None)
        if timer is not None:
            timer.cancel()
        async with self._lock:  # one edit at a time, each against the text before it
            new = self._render(session)
            old = self._pushed[session_id]
            if old == new:
                return
            # Against the text we pushed last, unversioned: editors send didChange after an
            # idle delay (eglot: 0.5 s), so the version we know lags the editor's own.
            encoding = self.server.workspace.position_encoding or "utf-16"
            edits = minimal_edits(old, new, str(getattr(encoding, "value", encoding)))
            uri = self.uri(session_id)
            edit = build_workspace_edit(self.server.client_capabilities, uri, None, False, edits)
            try:
                result = await asyncio.wait_for(
                    self.server.workspace_apply_edit_async(
                        types.ApplyWorkspaceEditParams(edit=edit, label="acp transcript")
                    ),
                    timeout=10,
                )
            except Exception as exc:
                log.info("transcript update failed: %s", exc)
                return
            if result.applied:
                self._pushed[session_id] = new

    def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)
        self._pushed.pop(session_id, None)
        self._calls.pop(session_id, None)
        timer = self._timers.pop(session_id, None)
        if timer is not None:
            timer.cancel()

    def _render(self, session: Session) -> str:
        snapshot = session.snapshot(tool_calls=False)
        known = self._calls.setdefault(session.session_id, {})

        def tool_call(tool_call_id: str) -> str | None:
            revision = session.tool_call_revision(tool_call_id)
            cached = known.get(tool_call_id)
            if cached is None or cached[0] != revision:
                state = session.tool_call(tool_call_id)
                if state is None:
                    return None
                cached = known[tool_call_id] = (revision, tool_call_markdown(state))
            return cached[1]

        header = (
            f"<!-- acp-lsp transcript of session {session.session_id} ({session.agent}); "
            "updated by the server, edits here are overwritten -->\n"
        )
        status = f"\n_status: {session.status}_\n"
        return header + to_markdown(snapshot, tool_call) + status
