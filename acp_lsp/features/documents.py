"""Document sync hooks: pygls keeps the text; writers waiting for an edit to land wake up;
each open buffer's last known disk text is kept (editor/disk_bases.py)."""

from __future__ import annotations

from lsprotocol import types
from pygls.uris import to_fs_path

from acp_lsp.server import AcpLanguageServer


def register(server: AcpLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_open(server: AcpLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        if (path := _path(params.text_document.uri)) is not None:
            server.editor.files.bases.opened(path, params.text_document.text)
        server.editor.files.did_change()

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_change(server: AcpLanguageServer, _params: types.DidChangeTextDocumentParams) -> None:
        server.editor.files.did_change()

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(server: AcpLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        if (path := _path(params.text_document.uri)) is not None:
            server.editor.files.bases.closed(path)
        server.editor.files.did_change()

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def on_save(server: AcpLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        doc = server.workspace.text_documents.get(params.text_document.uri)
        if doc is not None and (path := _path(doc.uri)) is not None:
            # what the editor wrote is the buffer (or the text it sent with the save)
            server.editor.files.bases.saved(path, params.text or doc.source)
        server.editor.files.did_change()


def _path(uri: str) -> str | None:
    return to_fs_path(uri) if uri.startswith("file:") else None
