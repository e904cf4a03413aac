"""Registry agents as configured agents: listed, installed on first use, updated on request.

An agent is a registry agent when its settings name ``registry = "<id>"`` (optionally with a
``version`` pin), or when an editor uses the name ``registry:<id>`` directly. Before such an
agent starts, ``prepare`` installs it (with progress in the editor) and fills in the command
line; built-in presets stay npx-run with our pinned versions and flags, and are listed with
the registry id they stand for.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError
from acp_lsp.config import AgentConfig
from acp_lsp.history.paths import data_dir
from acp_lsp.registry import PREFIX, registry_id
from acp_lsp.registry import install as installer
from acp_lsp.registry.entries import RegistryEntry
from acp_lsp.registry.source import Index, load_index

if TYPE_CHECKING:
    from acp_lsp.server import AcpLanguageServer

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]
# built-in presets and the registry entries they stand for
PRESET_IDS = {
    "claude": "claude-acp",
    "codex": "codex-acp",
    "gemini": "gemini",
    "qwen": "qwen-code",
}


class Registry:
    def __init__(self, server: AcpLanguageServer) -> None:
        self.server = server
        self._index: Index | None = None
        self.root = data_dir(os.environ) / "agents"
        self.cache = data_dir(os.environ) / "registry.json"

    async def index(self, refresh: bool = False) -> Index:
        if self._index is None or refresh:
            url = self.server.settings.registry.url
            self._index = await load_index(url, self.cache, refresh=refresh)
        return self._index

    def _registry_id(self, name: str) -> tuple[str | None, AgentConfig | None]:
        return registry_id(self.server.settings, name)

    async def entry(self, registry_id: str) -> RegistryEntry:
        index = await self.index()
        entry = index.entries.get(registry_id)
        if entry is None:
            raise BackendError(
                p.UNKNOWN_AGENT,
                f"no agent {registry_id!r} in the ACP Registry ({index.source}"
                + (f"; {index.note}" if index.note else "")
                + ")",
                {"agents": sorted(index.entries)},
            )
        return entry

    # -- listing -------------------------------------------------------------------------
    async def list_entries(self, listed: list[JsonObject]) -> list[JsonObject]:
        """``listed`` (the configured agents) marked with their registry ids, plus every
        registry agent not configured yet, as ``registry:<id>``."""
        index = await self.index()
        configured: set[str] = set()
        for entry in listed:
            config = self.server.settings.agents.get(entry["name"])
            rid = config.registry if config is not None else None
            if (
                rid is None
                and entry["name"] in PRESET_IDS
                and config is not None
                and config.command == "npx"
            ):
                rid = PRESET_IDS[entry["name"]]
                entry["source"] = "preset"
            else:
                entry.setdefault("source", "config")
            if rid is not None:
                configured.add(rid)
                entry["registryId"] = rid
                found = index.entries.get(rid)
                if found is not None:
                    entry.setdefault("description", found.description)
                    if found.icon:
                        entry["icon"] = found.icon
                if config is not None and config.registry is not None:
                    done = installer.installed(self.root, rid, config.version)
                    entry["installed"] = done is not None
                    if done is not None:
                        entry.setdefault("version", done["version"])
        out = list(listed)
        for rid, found in sorted(index.entries.items()):
            if rid in configured:
                continue
            done = installer.installed(self.root, rid)
            item: JsonObject = {
                "name": PREFIX + rid,
                "title": found.name,
                "protocol": "acp",
                "default": False,
                "running": (PREFIX + rid) in self.server.hub.backends
                and self.server.hub.backends[PREFIX + rid].info().running,
                "source": "registry",
                "registryId": rid,
                "description": found.description,
                "version": done["version"] if done else found.version,
                "installed": done is not None,
            }
            if found.icon:
                item["icon"] = found.icon
            if found.distribution() is None:
                item["error"] = "no distribution for this platform"
            out.append(item)
        return out

    # -- installing ----------------------------------------------------------------------
    async def prepare(self, name: str | None) -> None:
        """Make a registry agent runnable: install it if needed and set its command line."""
        name = name or self.server.settings.default
        rid, config = self._registry_id(name)
        if rid is None or (config is not None and config.command is not None):
            return
        pin = config.version if config is not None else None
        done = installer.installed(self.root, rid, pin)
        if done is None:
            done = await self._install(rid, pin)
        self._configure(name, config, done)

    async def _install(self, rid: str, version: str | None) -> JsonObject:
        if not self.server.settings.registry.enabled:
            raise BackendError(
                p.AGENT_UNAVAILABLE, "the ACP Registry is turned off (registry.enabled)"
            )
        entry = await self.entry(rid)
        key = f"install:{rid}"
        progress = self.server.editor.progress
        await progress.begin(key, rid, None, title=f"Installing {entry.name}")
        try:
            env = installer.env_for_install(os.environ)
            return await installer.install(
                entry, version, self.root, env, lambda m: progress.say(key, m)
            )
        except installer.InstallError as exc:
            raise BackendError(
                p.AGENT_UNAVAILABLE,
                f"registry agent {rid!r} could not be installed: {exc}",
                {"agent": rid, "stderr": ""},
            ) from None
        finally:
            progress.end(key)

    def _configure(self, name: str, config: AgentConfig | None, done: JsonObject) -> None:
        base = config or AgentConfig(registry=name.removeprefix(PREFIX))
        env = {**done.get("env", {}), **base.env}
        resolved = base.model_copy(
            update={
                "command": done["command"],
                "args": [*done.get("args", []), *base.args],
                "env": env,
            }
        )
        self.server.settings.agents[name] = resolved

    async def install(self, name: str) -> JsonObject:
        rid, config = self._registry_id(name)
        if rid is None:
            raise BackendError(p.NOT_SUPPORTED, f"agent {name!r} is not a registry agent")
        pin = config.version if config is not None else None
        done = installer.installed(self.root, rid, pin) or await self._install(rid, pin)
        self._configure(name, config, done)
        return {"agent": name, "version": done["version"], "installed": True}

    async def update(self, name: str, restart: Callable[[str], Any]) -> JsonObject:
        rid, config = self._registry_id(name)
        if rid is None:
            raise BackendError(p.NOT_SUPPORTED, f"agent {name!r} is not a registry agent")
        previous = installer.installed(self.root, rid)
        if config is not None and config.version is not None:
            version = config.version  # a pin is the user's word: never moved by an update
        else:
            entry = (await self.index(refresh=True)).entries.get(rid)
            if entry is None:
                raise BackendError(p.UNKNOWN_AGENT, f"no agent {rid!r} in the ACP Registry")
            version = entry.version
        before = previous["version"] if previous else None
        if before == version:
            return {"agent": name, "previousVersion": before, "version": version, "updated": False}
        done = installer.installed(self.root, rid, version) or await self._install(rid, version)
        if config is not None and config.command is not None:
            config = config.model_copy(update={"command": None, "args": []})
        self._configure(name, config, done)
        await restart(name)
        return {
            "agent": name,
            "previousVersion": before,
            "version": done["version"],
            "updated": True,
        }
