"""What an ACP agent said it can do (its ``initialize`` result), and what follows for the
requests the bridge sends it: which MCP servers go along, which prompt blocks it takes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError
from acp_lsp.config import AgentConfig

JsonObject = dict[str, Any]


def _dict(value: Any) -> JsonObject:
    return value if isinstance(value, dict) else {}


def agent_caps(init: JsonObject) -> JsonObject:
    return _dict(init.get("agentCapabilities"))


def prompt_caps(init: JsonObject) -> JsonObject:
    return dict(_dict(agent_caps(init).get("promptCapabilities")))


def has_session_cap(init: JsonObject, name: str) -> bool:
    return _dict(agent_caps(init).get("sessionCapabilities")).get(name) is not None


def mcp_servers(
    init: JsonObject, config: AgentConfig, warn: Callable[[str], None]
) -> list[JsonObject]:
    """Configured MCP servers the agent can take: stdio always, http/sse when advertised."""
    offered = _dict(agent_caps(init).get("mcpCapabilities"))
    out: list[JsonObject] = []
    for server in config.mcp_servers:
        kind = server.get("type", "stdio")
        if kind == "stdio" or offered.get(kind):
            out.append(server)
        else:
            warn(
                f"MCP server {server.get('name')!r} left out: "
                f"the agent does not accept {kind!r} MCP servers"
            )
    return out


def prompt_blocks(name: str, caps: JsonObject, blocks: list[JsonObject]) -> list[JsonObject]:
    """Restrict content to what the agent accepts (text and resource_link always)."""
    out: list[JsonObject] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "resource" and not caps.get("embeddedContext"):
            resource = block.get("resource")
            if isinstance(resource, dict) and isinstance(resource.get("text"), str):
                uri = resource.get("uri", "")
                out.append({"type": "text", "text": f"{uri}:\n{resource['text']}"})
                continue
        if kind in ("image", "audio") and not caps.get(kind):
            raise BackendError(
                p.INVALID_PARAMS,
                f"prompt: agent {name!r} does not accept {kind} content "
                f"(promptCapabilities.{kind} is not set)",
            )
        out.append(block)
    return out
