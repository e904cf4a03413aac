"""create_server(): the language server with its feature modules wired in, nothing else.

Apart from acp_lsp.server so that the feature modules (which import the server class for
their typed handlers) and the factory (which imports them) form no import circle."""

from __future__ import annotations

from acp_lsp.features import documents, history, lifecycle, plain_lsp, sessions
from acp_lsp.server import AcpLanguageServer


def create_server() -> AcpLanguageServer:
    server = AcpLanguageServer()
    lifecycle.register(server)
    documents.register(server)
    sessions.register(server)
    history.register(server)
    plain_lsp.register(server)
    return server
