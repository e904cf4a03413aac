"""The bridge's client-side AAP tools: ``read_file`` and ``write_file`` (reference/aap.md §5).

They run through ``EditorPort.read_text_file`` / ``write_text_file``, so they get exactly the
rules of ACP's fs methods (sandbox, open buffers first, writes as workspace/applyEdit). A
failure is reported to the agent as the tool's result text, never raised.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from acp_lsp.backends.base import BackendError, EditorPort
from acp_lsp.session import Session

JsonObject = dict[str, Any]

READ_FILE: JsonObject = {
    "name": "read_file",
    "title": "Read file",
    "description": (
        "Read a text file of the user's workspace, as the user sees it in the editor "
        "(unsaved changes included). Paths are relative to the workspace or absolute."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path"},
            "line": {"type": "integer", "minimum": 1, "description": "First line (1-based)"},
            "limit": {"type": "integer", "minimum": 1, "description": "Number of lines"},
        },
        "required": ["path"],
    },
}
WRITE_FILE: JsonObject = {
    "name": "write_file",
    "title": "Write file",
    "description": (
        "Replace a text file's whole content (or create it). The change is applied as an edit "
        "in the user's editor, where the user can review and undo it."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path"},
            "content": {"type": "string", "description": "The complete new content"},
        },
        "required": ["path", "content"],
    },
}
CLIENT_TOOLS: tuple[JsonObject, ...] = (READ_FILE, WRITE_FILE)
CLIENT_TOOL_NAMES = frozenset(t["name"] for t in CLIENT_TOOLS)


@dataclass
class ToolOutcome:
    ok: bool
    result: str  # the tool message content sent to the agent
    display: list[JsonObject]  # ACP ToolCallContent for the editor


def _text(value: str) -> list[JsonObject]:
    return [{"type": "content", "content": {"type": "text", "text": value}}]


def _failed(message: str) -> ToolOutcome:
    return ToolOutcome(ok=False, result=f"Error: {message}", display=_text(message))


def _positive_int(args: JsonObject, key: str) -> int | None:
    value = args.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if value is not None:
        raise ValueError(f"'{key}' must be a positive integer")
    return None


async def run_client_tool(
    editor: EditorPort, session: Session, name: str, args: Any
) -> ToolOutcome:
    """Run one of CLIENT_TOOLS for the agent; errors come back as a failed outcome."""
    if name not in CLIENT_TOOL_NAMES:
        return _failed(f"the tool {name!r} is not available in this client")
    if not isinstance(args, dict) or not isinstance(args.get("path"), str) or not args["path"]:
        return _failed(f"{name} needs a string 'path'")
    path = os.path.normpath(os.path.join(session.cwd, args["path"]))
    try:
        if name == "read_file":
            text = await editor.read_text_file(
                session, path, _positive_int(args, "line"), _positive_int(args, "limit")
            )
            return ToolOutcome(ok=True, result=text, display=_text(text))
        content = args.get("content")
        if not isinstance(content, str):
            return _failed("write_file needs a string 'content'")
        await editor.write_text_file(session, path, content)
        return ToolOutcome(ok=True, result=f"Wrote {path}", display=_text(f"Wrote {path}"))
    except ValueError as exc:
        return _failed(f"{name}: {exc}")
    except BackendError as exc:
        return _failed(exc.message)
