"""The ACP Registry: its catalog of agents, cached, and the agents installed from it.

This module stays light (the server asks it about every new session's agent); the registry's
own modules load only for a registry agent."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_lsp.config import AgentConfig, Settings

PREFIX = "registry:"


def registry_id(settings: Settings, name: str) -> tuple[str | None, AgentConfig | None]:
    """The registry id agent ``name`` is installed from (None: not a registry agent), and its
    configuration when it has one."""
    config = settings.agents.get(name)
    if config is not None:
        return config.registry, config
    if name.startswith(PREFIX):
        return name.removeprefix(PREFIX), None
    return None, None


def needs_install(settings: Settings, name: str) -> bool:
    """Whether a session of ``name`` waits for the registry (an install, or its command line)."""
    rid, config = registry_id(settings, name)
    return rid is not None and (config is None or config.command is None)
