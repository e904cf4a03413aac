"""Permission for the bridge's own editor tools that only read: allowed once, without a prompt.

In a manual mode an agent asks before every MCP tool, the editor's read-only ones included
(Claude Code's Manual, Qwen Code's Default); the user would be asked to let the agent read the
diagnostics they are looking at. ``openDiff`` still asks; the user's permission rules come
first (acp_lsp/editor/permissions.py).

A call counts as ours only when the agent itself names the tool the way it names MCP tools,
``mcp__editor__<tool>``: in the ``_meta`` of the tool call (Claude Code: ``claudeCode.toolName``,
with ``claudeCode.mcpServer`` when it sends it, whose ``source`` tells a server given at
session start from one of its settings files; Qwen Code: ``toolName``), or, for Codex, which
asks through an MCP elicitation, in the ``rawInput`` it forwards (``server_name`` and the
message it writes itself, ``Allow the <server> MCP server to run tool "<tool>"?``, under its
title "Approve MCP tool call"). Never from the title alone, which an MCP server's tool
annotations or the model's arguments can set; only when the session was given the editor's
server; and when no other MCP server of the session has its name. Gemini CLI sends nothing the
model cannot write (its title and tool call id), so it keeps asking, as does Codex if its
message changes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

from acp_lsp.backends.base import PermissionAnswer
from acp_lsp.editor.permissions import pick_option
from acp_lsp.editor_tools.router import SERVER_NAME
from acp_lsp.editor_tools.tools import TOOL_NAMES

JsonObject = dict[str, Any]

# openDiff shows the user a change to decide on: the session's permission rules apply to it
READ_ONLY: Final = frozenset(TOOL_NAMES) - {"openDiff"}
_PREFIX: Final = f"mcp__{SERVER_NAME}__"
_CODEX_ASKS: Final = re.compile(r'Allow the (\S+) MCP server to run tool "(\w+)"\?')


def _codex_tool(tool_call: JsonObject) -> str | None:
    """Codex's approval of an MCP tool call: the qualified name, from its own message."""
    raw = tool_call.get("rawInput")
    if tool_call.get("title") != "Approve MCP tool call":
        return None
    if not isinstance(raw, dict) or raw.get("server_name") != SERVER_NAME:
        return None
    request = raw.get("request")
    if not isinstance(request, dict):
        return None
    meta = request.get("_meta")
    if not isinstance(meta, dict) or meta.get("codex_approval_kind") != "mcp_tool_call":
        return None
    found = _CODEX_ASKS.fullmatch(str(request.get("message", "")))
    if found is None or found.group(1) != SERVER_NAME:
        return None
    return _PREFIX + found.group(2)


def mcp_tool_name(tool_call: JsonObject) -> str | None:
    """The tool's qualified name as the agent knows it (``mcp__<server>__<tool>``), if it says."""
    codex = _codex_tool(tool_call)
    if codex is not None:
        return codex
    meta = tool_call.get("_meta")
    if not isinstance(meta, dict):
        return None
    claude = meta.get("claudeCode")
    if isinstance(claude, dict):
        server = claude.get("mcpServer")
        # "dynamic": given at session start (ours), not from Claude's own settings files
        if server is not None and server != {"name": SERVER_NAME, "source": "dynamic"}:
            return None
        name = claude.get("toolName")
    else:
        name = meta.get("toolName")
    return name if isinstance(name, str) else None


def reads_editor(tool_call: JsonObject) -> bool:
    name = mcp_tool_name(tool_call)
    return name is not None and name.startswith(_PREFIX) and name[len(_PREFIX) :] in READ_ONLY


def answer_read(
    tool_call: JsonObject, options: list[JsonObject], other_servers: Iterable[JsonObject]
) -> PermissionAnswer | None:
    """Allow once (never "always": that would be the agent's rule, not this session's) a
    read-only call of the session's editor server; None when the editor must be asked."""
    if any(server.get("name") == SERVER_NAME for server in other_servers):
        return None  # the name no longer tells which server the call is for
    if not reads_editor(tool_call):
        return None
    option_id = pick_option(options, ("allow_once",))
    if option_id is None:
        return None
    return PermissionAnswer({"outcome": "selected", "optionId": option_id})
