"""Typed settings: agents, follow-along, permission rules, fs policy.

Sources merge per agent, lowest first: built-in presets, the user's ``acp-lsp/config.toml``,
the workspace's ``acp-lsp.toml``, then ``initializationOptions`` (or a later
``workspace/didChangeConfiguration``, section ``acp``). A bad setting never kills the server:
it is reported by name and the rest of the configuration is used.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from acp_lsp.platform.dirs import config_dir
from acp_lsp.presets import presets
from acp_lsp.protocol_params import describe_validation_error
from acp_lsp.secret_store import SecretStore

# Commands that may download the agent before it can answer `initialize`.
PACKAGE_RUNNERS = frozenset({"npx", "uvx", "pnpx", "bunx", "pipx", "uv"})

JsonObject = dict[str, Any]


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class AgentConfig(_Model):
    """One agent: ACP (``command``) or AAP (``url``)."""

    title: str | None = None
    """Display name; defaults to the agent's key."""
    command: str | None = None
    """ACP: the program to run (found on PATH)."""
    args: list[str] = Field(default_factory=list)
    """ACP: its arguments."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables passed to the agent (``${env:NAME}`` expands from the server's environment).
    The agent gets only these plus PATH, HOME, locale and TERM: never the editor's whole env."""
    mcp_servers: list[JsonObject] = Field(default_factory=list)
    """ACP McpServer objects passed on session/new and session/load."""
    url: str | None = None
    """AAP: the server's base URL."""
    agent: str | None = None
    """AAP: the agent's name in ``GET /meta`` (default: the only or first agent)."""
    api_key: str | None = None
    """AAP: bearer token (use ``${env:NAME}``; never logged)."""
    options: dict[str, str] = Field(default_factory=dict)
    """AAP: agent options for new sessions."""
    trusted_tools: list[str] = Field(default_factory=list)
    """AAP: server tools that run without asking."""
    stream: Literal["delta", "message", "none"] | None = None
    """AAP: stream mode (default: the best the agent offers)."""
    registry: str | None = None
    """An agent of the ACP Registry by id (installed on first use into the data dir)."""
    version: str | None = None
    """With ``registry``: the version to install and keep (default: the registry's current
    one at first install; updates only through acp/updateAgent)."""
    request_timeout: float = 30.0
    """Seconds before a control request (not a prompt) that gets no answer fails."""
    start_timeout: float | None = None
    """Seconds the agent may take to start and answer ``initialize``. Default: 120 s for a
    package runner (``npx``, ``uvx``, …: a first run downloads the agent), else
    ``requestTimeout``."""
    sandbox: Literal["none", "workspace"] = "none"
    """ACP: ``"workspace"`` runs the agent under bubblewrap, able to write only the workspace
    folders, the session cwd and additional directories, its own data directories and a
    private temp directory (everything else read-only; network allowed). It fails to start,
    never runs unsandboxed, where bubblewrap cannot run."""
    sandbox_writable: list[str] = Field(default_factory=list)
    """With ``sandbox``: more paths the agent may write (absolute, or ``~/...`` under its
    HOME), e.g. the data directory of an agent acp-lsp does not know."""
    bwrap: str = "bwrap"
    """With ``sandbox``: the bubblewrap program (a name found on the agent's PATH, or a path)."""
    editor_tools: bool | None = None
    """ACP: offer this agent the editor's tools (diagnostics, definition, ...) as the MCP
    server ``editor``; unset: the global ``editorTools.enabled``."""

    @property
    def downloads(self) -> bool:
        """Started through a package runner that may fetch the agent first."""
        name = os.path.basename(self.command or "")
        return name in PACKAGE_RUNNERS or self.registry is not None

    @property
    def effective_start_timeout(self) -> float:
        if self.start_timeout is not None:
            return self.start_timeout
        return max(120.0, self.request_timeout) if self.downloads else self.request_timeout

    @model_validator(mode="after")
    def _one_kind(self) -> AgentConfig:
        if self.command is None and self.url is None and self.registry is None:
            raise ValueError(
                "needs 'command' (ACP), 'url' (AAP) or 'registry' (an ACP Registry id)"
            )
        if self.command is not None and self.url is not None:
            raise ValueError("has both 'command' and 'url': pick ACP or AAP")
        if self.sandbox != "none" and self.url is not None:
            raise ValueError("sandbox: only an ACP agent (a local process) can be sandboxed")
        for path in self.sandbox_writable:
            if not (os.path.isabs(path) or path.startswith("~/")):
                raise ValueError(f"sandboxWritable: {path!r} must be absolute or start with '~/'")
        return self

    @property
    def protocol(self) -> str:
        return "aap" if self.url is not None else "acp"


class PermissionRule(_Model):
    """Answer permission prompts without asking: by tool kind and/or path glob."""

    kind: str | None = None
    """Tool kind (read, edit, execute, ...); None matches any."""
    path: str | None = None
    """Glob; matches only when every location of the call matches."""
    title: str | None = None
    """Regular expression searched in the tool call's title."""
    action: Literal["allow", "reject", "ask"] = "ask"

    @model_validator(mode="after")
    def _title_compiles(self) -> PermissionRule:
        if self.title is not None:
            try:
                re.compile(self.title)
            except re.error as exc:
                raise ValueError(f"title: not a regular expression: {exc}") from None
        return self


class PermissionSettings(_Model):
    rules: list[PermissionRule] = Field(default_factory=list)


class FsSettings(_Model):
    allow_outside_workspace: bool = False
    """Let agents read and write outside the session cwd, workspace folders and
    additional directories."""


class HistorySettings(_Model):
    enabled: bool = True
    """Keep sessions in the history store (set false in a workspace's acp-lsp.toml to opt out)."""
    path: str | None = None
    """The SQLite file; default ``<data dir>/history.sqlite3``."""
    max_age_days: float | None = None
    """Drop stored sessions not updated for this many days."""
    max_size_mb: float | None = None
    """Drop the oldest stored sessions while the file is larger than this."""


class ReviewSettings(_Model):
    tell_agent: bool = True
    """Start the next prompt after a reject with a line naming what the user rejected."""


class EditorToolsSettings(_Model):
    enabled: bool = True
    """Serve the editor's intelligence to agents as MCP tools (per agent: ``editorTools``)."""
    timeout_s: Annotated[float, Field(gt=0)] = 10.0
    """Seconds the editor may take to answer a tool call (openDiff waits for the user)."""


class RegistrySettings(_Model):
    enabled: bool = True
    """List ACP Registry agents (acp/listAgents includeRegistry) and allow installing them."""
    url: str = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json"
    """The registry index (fetched at most daily, cached in the data dir)."""


class Settings(_Model):
    agents: dict[str, AgentConfig] = Field(default_factory=dict)
    default_agent: str | None = None
    follow_along: bool = True
    """Jump to the files and lines tool calls touch (per session: acp/setFollow)."""
    follow_debounce_ms: int = 200
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    fs: FsSettings = Field(default_factory=FsSettings)
    review: ReviewSettings = Field(default_factory=ReviewSettings)
    review_writes: bool = False
    """Route fs/write_text_file edits through the editor's confirmation (change annotations
    with needsConfirmation) where the client supports them."""
    flush_ms: int = 30
    """Batching window for acp/sessionUpdate notifications."""
    max_notifications_per_second: int = Field(100, ge=1, le=10_000)
    """Per session: the most acp/sessionUpdate notifications an editor gets in a second while
    an agent streams faster. A lower cap means fewer, larger messages; a higher one lets each
    chunk of a fast stream out sooner (the chunk waits at most one 1/cap slot)."""
    history: HistorySettings = Field(default_factory=HistorySettings)
    registry: RegistrySettings = Field(default_factory=RegistrySettings)
    editor_tools: EditorToolsSettings = Field(default_factory=EditorToolsSettings)
    track_disk: bool = True
    """Snapshot the session folder around tool calls (a shadow git repository under the data
    dir), so changes agents make on disk reach open buffers and the review list."""
    watch_files: bool = True
    """Follow the tracked folders' changes with a file watcher (Linux inotify), so snapshots
    cost what changed; off, every snapshot scans the folder."""
    cancel_grace_s: float = 10.0
    """After acp/cancel, how long an agent may take to end the turn before it is stopped."""

    @property
    def default(self) -> str:
        if self.default_agent and self.default_agent in self.agents:
            return self.default_agent
        return "demo" if "demo" in self.agents else next(iter(self.agents), "demo")


_ENV_REF = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_env(value: str, environ: Mapping[str, str], secrets: SecretStore | None) -> str:
    """Expand ``${env:NAME}`` (missing variables expand to ""); expanded values are secrets."""

    def sub(match: re.Match[str]) -> str:
        found = environ.get(match.group(1), "")
        if secrets is not None:
            secrets.add(found)
        return found

    return _ENV_REF.sub(sub, value)


BASE_ENV_KEYS = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "USER", "LOGNAME", "TMPDIR")


def agent_environment(
    agent: AgentConfig, environ: Mapping[str, str], secrets: SecretStore | None = None
) -> dict[str, str]:
    """The explicit environment an agent runs with: a small base plus what its config passes."""
    env = {key: environ[key] for key in BASE_ENV_KEYS if key in environ}
    for key, value in agent.env.items():
        expanded = expand_env(value, environ, secrets)
        if expanded or not _ENV_REF.search(value):
            env[key] = expanded
    return env


def _by_alias(model: type[BaseModel], data: Mapping[str, Any]) -> JsonObject:
    """``data`` with each field named by its alias: one source may say ``default_agent`` and
    another ``defaultAgent``; merged under two keys they would be one field given twice."""
    aliases = {name: f.alias or name for name, f in model.model_fields.items()}
    return {aliases.get(key, key): value for key, value in data.items()}


def _canonical(src: Mapping[str, Any]) -> JsonObject:
    out = _by_alias(Settings, src)
    agents = out.get("agents")
    if isinstance(agents, Mapping):
        out["agents"] = {
            name: _by_alias(AgentConfig, cfg) if isinstance(cfg, Mapping) else cfg
            for name, cfg in agents.items()
        }
    return out


def merge_settings(base: JsonObject, over: Mapping[str, Any]) -> JsonObject:
    """Merge settings dicts: ``agents`` merge per agent and per field; other keys replace."""
    out = dict(base)
    for key, value in over.items():
        if key == "agents" and isinstance(value, Mapping) and isinstance(out.get(key), dict):
            agents = dict(out[key])
            for name, cfg in value.items():
                prev = agents.get(name)
                if isinstance(prev, dict) and isinstance(cfg, Mapping):
                    # switching protocol replaces the preset instead of mixing command and url
                    switched = ("url" in cfg and "command" in prev) or (
                        "command" in cfg and "url" in prev
                    )
                    # a registry agent under a preset's name is installed, not npx-run
                    switched |= "registry" in cfg and "command" not in cfg
                    if switched:
                        agents[name] = dict(cfg)
                    else:
                        agents[name] = {**prev, **cfg}
                else:
                    agents[name] = cfg
            out[key] = agents
        else:
            out[key] = value
    return out


def user_config_path(environ: Mapping[str, str]) -> Path:
    return config_dir(environ) / "config.toml"


def read_toml(path: Path, problems: list[str]) -> JsonObject:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        problems.append(f"{path}: {exc}")
        return {}


def load_settings(
    sources: Iterable[Mapping[str, Any] | None],
    environ: Mapping[str, str] | None = None,
    secrets: SecretStore | None = None,
) -> tuple[Settings, list[str]]:
    """Merge presets and ``sources`` (lowest first) into Settings.

    Returns the settings and a list of problems, each naming the setting at fault. Invalid
    parts are dropped (an agent with a bad field is left out; a bad option keeps its default).
    """
    environ = os.environ if environ is None else environ
    problems: list[str] = []
    merged: JsonObject = _canonical({"agents": presets()})
    for src in sources:
        if src is None:
            continue
        if not isinstance(src, Mapping):
            problems.append(f"settings must be an object, got {type(src).__name__}")
            continue
        merged = merge_settings(merged, _canonical(src))

    raw_agents = merged.pop("agents", {})
    agents: dict[str, AgentConfig] = {}
    if not isinstance(raw_agents, Mapping):
        problems.append("agents: must be an object of name -> agent settings")
        raw_agents = presets()
    for name, cfg in raw_agents.items():
        try:
            agent = AgentConfig.model_validate(cfg)
        except ValidationError as exc:
            problems.append(f"agents.{name}: {describe_validation_error(exc)}")
            continue
        if agent.api_key is not None:
            key = expand_env(agent.api_key, environ, secrets)
            if secrets is not None:
                secrets.add(key)  # a literal key is as secret as an expanded one
            agent = agent.model_copy(update={"api_key": key})
        if agent.url is not None:
            agent = agent.model_copy(update={"url": expand_env(agent.url, environ, secrets)})
        agents[name] = agent

    top: JsonObject = {}
    for key, value in merged.items():
        try:
            Settings.model_validate({key: value})
            top[key] = value
        except ValidationError as exc:
            problems.append(describe_validation_error(exc))
    settings = Settings.model_validate(top).model_copy(update={"agents": agents})
    if settings.default_agent is not None and settings.default_agent not in agents:
        problems.append(
            f"defaultAgent: no agent named {settings.default_agent!r} "
            f"(configured: {', '.join(sorted(agents))})"
        )
    return settings, problems
