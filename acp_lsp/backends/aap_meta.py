"""Reading ``GET /meta`` of an AAP server: the configured agent and what it can do.

reference/aap.md §2-§3: ``version`` must be 3; capabilities are presence flags (``{}``
values), anything missing is unsupported; ``stream`` absent means ``none`` only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from acp_lsp import protocol as p
from acp_lsp.backends.aap_tools import CLIENT_TOOLS
from acp_lsp.backends.base import BackendError
from acp_lsp.config import AgentConfig

JsonObject = dict[str, Any]

PROTOCOL_VERSION = 3
STREAM_PREFERENCE = ("delta", "message", "none")


@dataclass
class AapAgent:
    """What ``GET /meta`` says about the configured agent, as the backend uses it."""

    name: str
    title: str | None
    stream: str  # the mode turns use
    server_tools: list[str]
    titles: dict[str, str]  # tool name -> display title (server and client tools)
    accepts_client_tools: bool
    image: JsonObject  # the image capability ({} = no images)
    history_types: list[str]  # declared types, preferred first (full is exact)


def read_meta(meta: Any, name: str, config: AgentConfig) -> tuple[AapAgent, list[str]]:
    """The configured agent of a ``GET /meta`` answer, and warnings about the configuration.

    Raises BackendError (agent unavailable) for another protocol version or a missing agent.
    """
    label = f"AAP agent {name!r}"
    if not isinstance(meta, dict):
        raise BackendError(p.AGENT_UNAVAILABLE, f"{label}: GET /meta is not an object")
    version = meta.get("version")
    if type(version) is not int or version != PROTOCOL_VERSION:
        raise BackendError(
            p.AGENT_UNAVAILABLE,
            f"{label}: {config.url} speaks AAP version {version!r}; "
            f"acp-lsp supports version {PROTOCOL_VERSION} only",
            {"version": version},
        )
    agents = [
        a
        for a in meta.get("agents") or []
        if isinstance(a, dict) and isinstance(a.get("name"), str)
    ]
    names = [a["name"] for a in agents]
    wanted = config.agent
    if wanted:
        info = next((a for a in agents if a["name"] == wanted), None)
        problem = f"has no agent {wanted!r} (it offers: {', '.join(names) or 'none'})"
    else:
        info = agents[0] if agents else None
        problem = "offers no agents"
    if info is None:
        raise BackendError(
            p.AGENT_UNAVAILABLE, f"{label}: {config.url} {problem}", {"agents": names}
        )
    return _describe(info, label, config)


def _describe(info: JsonObject, label: str, config: AgentConfig) -> tuple[AapAgent, list[str]]:
    warnings: list[str] = []
    caps = info.get("capabilities")
    caps = caps if isinstance(caps, dict) else {}
    specs = [t for t in info.get("tools") or [] if isinstance(t, dict) and "name" in t]
    server_tools = [str(t["name"]) for t in specs]
    unknown = sorted(set(config.trusted_tools) - set(server_tools))
    if unknown:
        warnings.append(
            f"{label}: trustedTools names tools the agent does not expose: {', '.join(unknown)}"
        )
    titles = {str(t["name"]): str(t.get("title") or t["name"]) for t in specs}
    titles.update({t["name"]: t["title"] for t in CLIENT_TOOLS})

    offered = _flags(caps.get("stream")) or {"none"}
    stream = next((m for m in STREAM_PREFERENCE if m in offered), "none")
    if config.stream is not None:
        if config.stream in offered:
            stream = config.stream
        else:
            warnings.append(
                f"{label} does not offer stream mode {config.stream!r} "
                f"(offers: {', '.join(sorted(offered))}); using {stream!r}"
            )
    history = _flags(caps.get("history"))
    title = info.get("title")
    agent = AapAgent(
        name=str(info["name"]),
        title=title if isinstance(title, str) else None,
        stream=stream,
        server_tools=server_tools,
        titles=titles,
        accepts_client_tools="tools" in _flags(caps.get("application")),
        image={k: {} for k in _flags(caps.get("image"))},
        history_types=[t for t in ("full", "compacted") if t in history],
    )
    return agent, warnings


def _flags(value: Any) -> set[str]:
    """A capability object's presence flags (``{"delta": {}, …}`` -> {"delta", …})."""
    return {str(k) for k in value} if isinstance(value, dict) else set()
