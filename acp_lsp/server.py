"""create_server(): the language server with its feature modules wired in, nothing else."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from pygls.lsp.server import LanguageServer

from acp_lsp import __version__
from acp_lsp.backends.base import Backend
from acp_lsp.config import AgentConfig, SecretStore, Settings, load_settings
from acp_lsp.lsp_protocol import AcpProtocol
from acp_lsp.tasks import TaskOwner

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]


class AcpLanguageServer(LanguageServer):
    """The server object feature modules receive as their typed first parameter."""

    protocol: AcpProtocol

    def __init__(self) -> None:
        super().__init__("acp-lsp", __version__, protocol_cls=AcpProtocol)
        from acp_lsp.editor.port import EditorSide
        from acp_lsp.hub import Hub

        self.secrets = SecretStore()
        self.settings, _ = load_settings([], secrets=self.secrets)
        self.tasks = TaskOwner("server")
        self.init_options: JsonObject | None = None
        self.editor = EditorSide(self)
        self.hub = Hub(self.editor, self.settings, self.make_backend, self.secrets)
        # tests validate what the bridge sends agents; None in production
        self.agent_send_hook: Callable[[JsonObject], None] | None = None

    def make_backend(self, name: str, config: AgentConfig) -> Backend:
        if config.protocol == "aap":
            from acp_lsp.backends.aap import AapBackend

            return AapBackend(name, config, self.editor, sandbox_for=self.editor.sandbox)
        from acp_lsp.backends.acp import AcpBackend

        return AcpBackend(
            name,
            config,
            self.editor,
            environ=os.environ,
            secrets=self.secrets,
            id_taken=self.hub.id_taken,
            on_send=self.agent_send_hook,
        )

    def apply_settings(self, settings: Settings) -> None:
        self.settings = settings
        self.hub.update_settings(settings)
        self.editor.follower.default = settings.follow_along
        self.editor.follower.debounce_s = settings.follow_debounce_ms / 1000
        self.editor.batcher.flush_s = settings.flush_ms / 1000

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Request errors already reach the editor as responses; log the rest, no popups.
        from pygls.exceptions import JsonRpcException

        level = logging.INFO if isinstance(error, JsonRpcException) else logging.ERROR
        log.log(level, "%s: %s", getattr(source, "__name__", source), error)

    def load_settings(self, overrides: JsonObject | None) -> list[str]:
        """Merge config files and ``overrides``; returns the problems found (by setting)."""
        from acp_lsp.features.lifecycle import settings_sources

        settings, problems = load_settings(settings_sources(self, overrides), secrets=self.secrets)
        self.apply_settings(settings)
        return problems


def create_server() -> AcpLanguageServer:
    from acp_lsp.features import documents, lifecycle, sessions

    server = AcpLanguageServer()
    lifecycle.register(server)
    documents.register(server)
    sessions.register(server)
    return server
