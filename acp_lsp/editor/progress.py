"""Work-done progress while a turn runs, with the running tool call's title as message."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)

# A turn of thousands of quick tool calls would send a report per call; every one is a round
# trip through the editor's progress UI. The title a user can read changes at most this often.
REPORT_EVERY_S = 0.1


class TurnProgress:
    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self._tokens: dict[str, str | int] = {}
        self._last: dict[str, str] = {}
        self._begun: set[str | int] = set()
        self._sent_at: dict[str, float] = {}
        self._held: dict[str, asyncio.TimerHandle] = {}

    def _supported(self) -> bool:
        return bool(
            get_capability(self._server.client_capabilities, "window.work_done_progress", False)
        )

    async def begin(
        self, session_id: str, agent: str, token: str | int | None, title: str | None = None
    ) -> None:
        """Progress keyed by ``session_id`` (a turn; or any key, e.g. an agent starting)."""
        if token is None:
            if not self._supported():
                return
            token = f"acp-turn-{uuid.uuid4().hex}"
            # the turn owns the token from now on: a turn that ends while the editor is still
            # creating it must not leave a progress begun and never ended
            self._tokens[session_id] = token
            try:
                await asyncio.wait_for(
                    self._server.work_done_progress.create_async(token), timeout=5
                )
            except Exception as exc:
                log.info("progress not created: %s", exc)
                self._tokens.pop(session_id, None)
                return
            if self._tokens.get(session_id) != token:
                return  # the turn ended meanwhile: no begin without an end
        self._tokens[session_id] = token
        self._begun.add(token)
        self._server.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title=title or f"{agent}: working", cancellable=title is None
            ),
        )

    def report(self, session_id: str, tool_call: dict[str, Any]) -> None:
        token = self._tokens.get(session_id)
        title = tool_call.get("title")
        if token is None or token not in self._begun or not isinstance(title, str) or not title:
            return
        if tool_call.get("status") not in ("pending", "in_progress"):
            return
        if self._last.get(session_id) == title:
            return
        self._last[session_id] = title
        if session_id in self._held:
            return  # the held report sends the newest title when it is due
        loop = asyncio.get_running_loop()
        wait = self._sent_at.get(session_id, -REPORT_EVERY_S) + REPORT_EVERY_S - loop.time()
        if wait > 0:
            self._held[session_id] = loop.call_later(wait, self._send, session_id)
        else:
            self._send(session_id)

    def _send(self, session_id: str) -> None:
        self._held.pop(session_id, None)
        token = self._tokens.get(session_id)
        title = self._last.get(session_id)
        if token is None or token not in self._begun or title is None:
            return
        self._sent_at[session_id] = asyncio.get_running_loop().time()
        self._server.work_done_progress.report(token, types.WorkDoneProgressReport(message=title))

    def say(self, key: str, message: str) -> None:
        """A progress message for a non-turn progress (an install step)."""
        token = self._tokens.get(key)
        if token is not None and token in self._begun:
            self._server.work_done_progress.report(
                token, types.WorkDoneProgressReport(message=message)
            )

    def end(self, session_id: str, message: str | None = None) -> None:
        token = self._tokens.pop(session_id, None)
        self._last.pop(session_id, None)
        self._sent_at.pop(session_id, None)
        held = self._held.pop(session_id, None)
        if held is not None:
            held.cancel()
        if token is not None and token in self._begun:
            self._begun.discard(token)
            self._server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))

    def token_cancelled(self, session_id: str) -> bool:
        token = self._tokens.get(session_id)
        if token is None:
            return False
        fut = self._server.work_done_progress.tokens.get(token)
        return bool(fut is not None and fut.cancelled())
