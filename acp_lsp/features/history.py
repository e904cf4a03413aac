"""acp/renameSession and acp/exportSession: titles and Markdown for live and stored sessions."""

from __future__ import annotations

from typing import Any

from acp_lsp import protocol as p
from acp_lsp.features.sessions import _errors
from acp_lsp.server import AcpLanguageServer

JsonObject = dict[str, Any]


def register(server: AcpLanguageServer) -> None:
    @server.feature(p.ACP_RENAME_SESSION)
    @_errors
    async def rename_session(
        server: AcpLanguageServer, params: p.RenameSessionParams
    ) -> JsonObject:
        await server.history().rename(params.session_id, params.title)
        return {}

    @server.feature(p.ACP_EXPORT_SESSION)
    @_errors
    async def export_session(
        server: AcpLanguageServer, params: p.ExportSessionParams
    ) -> JsonObject:
        live = server.hub.sessions.get(params.session_id)
        snapshot = server.editor.snapshot(live) if live is not None else None
        return {"text": await server.history().export(params.session_id, snapshot)}
