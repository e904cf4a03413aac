"""The language server class feature modules receive (acp_lsp.app.create_server wires them)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.lsp.server import LanguageServer

from acp_lsp import __version__
from acp_lsp.lsp_protocol import AcpProtocol
from acp_lsp.tasks import TaskOwner

if TYPE_CHECKING:
    from acp_lsp.backends.base import Backend
    from acp_lsp.config import AgentConfig, Settings
    from acp_lsp.editor.port import EditorSide
    from acp_lsp.editor_tools.router import EditorTools
    from acp_lsp.history.service import History
    from acp_lsp.hub import Hub
    from acp_lsp.registry.service import Registry
    from acp_lsp.secret_store import SecretStore

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]


class AcpLanguageServer(LanguageServer):
    """The server object feature modules receive as their typed first parameter."""

    protocol: AcpProtocol

    def __init__(self) -> None:
        super().__init__("acp-lsp", __version__, protocol_cls=AcpProtocol)
        self.tasks = TaskOwner("server")
        self.init_options: JsonObject | None = None
        # tests validate what the bridge sends agents; None in production
        self.agent_send_hook: Callable[[JsonObject], None] | None = None
        self._history: History | None = None
        self._registry: Registry | None = None

    # The parts below are built on first use, after ``initialize`` is answered: their
    # imports (pydantic, the editor side, the hub) would otherwise delay the editor's start.
    @cached_property
    def secrets(self) -> SecretStore:
        from acp_lsp.secret_store import SecretStore

        return SecretStore()

    @cached_property
    def settings(self) -> Settings:
        from acp_lsp.config import load_settings

        return load_settings([], secrets=self.secrets)[0]

    @cached_property
    def editor(self) -> EditorSide:
        from acp_lsp.editor.port import EditorSide

        return EditorSide(self)

    @cached_property
    def editor_tools(self) -> EditorTools:
        """The editor's tools for agents, over MCP (its HTTP endpoint starts on first use)."""
        from acp_lsp.editor_tools.router import EditorTools

        return EditorTools(self)

    @cached_property
    def hub(self) -> Hub:
        from acp_lsp.hub import Hub

        return Hub(self.editor, self.settings, self.make_backend, self.secrets)

    def registry(self) -> Registry:
        """Agents of the ACP Registry (the index loads on first use)."""
        if self._registry is None:
            from acp_lsp.registry.service import Registry

            self._registry = Registry(self)
        return self._registry

    async def prepare_agent(self, agent: str | None) -> None:
        """Install a registry agent (or set its command line) before its session; for any other
        agent the registry's modules are not even loaded."""
        from acp_lsp.registry import needs_install

        if needs_install(self.settings, agent or self.settings.default):
            await self.registry().prepare(agent)

    def history(self) -> History:
        """The session history (its store opens on first use, in its own thread)."""
        if self._history is None:
            from acp_lsp.history.paths import history_path
            from acp_lsp.history.recorder import Recorder
            from acp_lsp.history.service import History
            from acp_lsp.history.store import HistoryStore

            settings = self.settings.history

            def open_store() -> HistoryStore:
                return HistoryStore(history_path(settings.path, os.environ))

            recorder = Recorder(
                open_store,
                redact=self.secrets.redact_json,
                on_error=lambda message: self.editor.show_message(message, "warning"),
                spawn=self.tasks.spawn,
                retention=lambda: (
                    self.settings.history.max_age_days,
                    self.settings.history.max_size_mb,
                ),
            )
            recorder.enabled = settings.enabled
            self.editor.recorder = recorder
            self.editor.disk.checkpointed = lambda session: recorder.changed(session, extras=True)
            self._history = History(self.hub, recorder)
        return self._history

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
            workspace_folders=lambda: self.hub.workspace_folders,
            editor_tools=self.editor_tools,
        )

    def apply_settings(self, settings: Settings) -> None:
        self.settings = settings
        self.hub.update_settings(settings)
        self.editor.follower.default = settings.follow_along
        self.editor.follower.debounce_s = settings.follow_debounce_ms / 1000
        self.editor.batcher.flush_s = settings.flush_ms / 1000
        self.editor.batcher.min_gap = 1 / settings.max_notifications_per_second
        if self._history is not None:
            self._history.recorder.enabled = settings.history.enabled

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Request errors already reach the editor as responses; log the rest, no popups.
        from pygls.exceptions import JsonRpcException

        level = logging.INFO if isinstance(error, JsonRpcException) else logging.ERROR
        log.log(level, "%s: %s", getattr(source, "__name__", source), error)

    def load_settings(self, overrides: JsonObject | None) -> list[str]:
        """Merge config files and ``overrides``; returns the problems found (by setting)."""
        from acp_lsp.config import load_settings

        settings, problems = load_settings(self._sources(overrides), secrets=self.secrets)
        self.apply_settings(settings)
        return problems

    def _sources(self, overrides: JsonObject | None) -> list[Mapping[str, Any] | None]:
        """The user's config file, the workspace's acp-lsp.toml, then the editor's settings."""
        from acp_lsp.config import read_toml, user_config_path

        problems: list[str] = []
        sources: list[Mapping[str, Any] | None] = [
            read_toml(user_config_path(os.environ), problems)
        ]
        folders = self.hub.workspace_folders
        if folders:
            sources.append(read_toml(Path(folders[0]) / "acp-lsp.toml", problems))
        sources.append(overrides)
        for problem in problems:
            self.editor.show_message(f"acp-lsp: bad config file: {problem}", "warning")
        return sources
