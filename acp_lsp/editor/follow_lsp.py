"""Follow-along's jumps as LSP: ``window/showDocument`` without taking focus."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.uris import from_fs_path

if TYPE_CHECKING:
    from acp_lsp.server import AcpLanguageServer

log = logging.getLogger(__name__)


class DocumentShower:
    def __init__(self, server: AcpLanguageServer) -> None:
        self.server = server

    def show(self, path: str, line: int) -> None:
        """Show ``path`` at the 0-based ``line`` where the editor can; never waits for it."""
        if not get_capability(
            self.server.client_capabilities, "window.show_document.support", False
        ):
            return
        uri = from_fs_path(path)
        if uri is None:
            return
        pos = types.Position(line=line, character=0)
        params = types.ShowDocumentParams(
            uri=uri, take_focus=False, selection=types.Range(start=pos, end=pos)
        )
        self.server.tasks.spawn(self._show(params), name="follow")

    async def _show(self, params: types.ShowDocumentParams) -> None:
        try:
            await asyncio.wait_for(self.server.window_show_document_async(params), timeout=10)
        except Exception as exc:
            log.info("showDocument failed: %s", exc)
