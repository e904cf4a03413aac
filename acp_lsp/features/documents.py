"""Document sync hooks: pygls keeps the text; writers waiting for an edit to land wake up."""

from __future__ import annotations

from lsprotocol import types

from acp_lsp.server import AcpLanguageServer


def register(server: AcpLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_open(server: AcpLanguageServer, _params: types.DidOpenTextDocumentParams) -> None:
        server.editor.files.did_change()

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_change(server: AcpLanguageServer, _params: types.DidChangeTextDocumentParams) -> None:
        server.editor.files.did_change()

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(server: AcpLanguageServer, _params: types.DidCloseTextDocumentParams) -> None:
        server.editor.files.did_change()

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def on_save(server: AcpLanguageServer, _params: types.DidSaveTextDocumentParams) -> None:
        server.editor.files.did_change()
