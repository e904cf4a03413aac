"""Reviewable edits (placeholder until the review feature lands)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError
from acp_lsp.editor.files import DocumentFiles
from acp_lsp.session import Session

JsonObject = dict[str, Any]


class ReviewManager:
    def __init__(
        self, files: DocumentFiles, publish: Callable[[Session, list[JsonObject]], None]
    ) -> None:
        self._files = files
        self._publish = publish

    def turn_started(self, session: Session) -> None:
        pass

    def note_path(self, session: Session, path: str, real: str) -> None:
        pass

    def on_tool_call(self, session: Session, state: JsonObject) -> None:
        pass

    def forget(self, session_id: str) -> None:
        pass

    async def review(
        self, session: Session, action: str, tool_call_id: str | None, path: str | None
    ) -> JsonObject:
        raise BackendError(p.NOT_SUPPORTED, "review is not available yet")
