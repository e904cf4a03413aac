"""The MCP tools an agent sees: names, input schemas, descriptions.

Positions are 1-based (line and column) as people and models count them; paths are absolute
or relative to the session's working directory and must lie inside the session's folders.
"""

from __future__ import annotations

from typing import Any, Final

JsonObject = dict[str, Any]


class ToolError(Exception):
    """A tool call that fails; the message is what the agent reads."""


_PATH: Final = {
    "type": "string",
    "description": "File path, absolute or relative to the session's working directory.",
}
_LINE: Final = {"type": "integer", "minimum": 1, "description": "1-based line number."}
_COLUMN: Final = {
    "type": "integer",
    "minimum": 1,
    "description": "1-based column (character offset in the line plus one). Default 1.",
}


def _obj(props: JsonObject, required: list[str] | None = None) -> JsonObject:
    schema: JsonObject = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


_AT: Final = _obj({"path": _PATH, "line": _LINE, "column": _COLUMN}, ["path", "line"])

TOOLS: Final[dict[str, tuple[str, JsonObject]]] = {
    "diagnostics": (
        "The errors, warnings and hints the user's editor currently shows (its language "
        "servers and linters), for one file or, without a path, for the whole workspace. "
        "Returns {files: [{path, diagnostics: [{line, column, endLine, endColumn (1-based), "
        "severity (error|warning|information|hint), source, code, message}]}], total}; "
        "at most 500, errors first, with truncated: how many more (ask per file for them). "
        "Cheaper and fresher than running a compiler or linter yourself.",
        _obj({"path": _PATH}),
    ),
    "definition": (
        "Where the symbol at path:line:column is defined, as the editor's language server "
        "resolves it. Returns {locations: [{path, line, column, endLine, endColumn}]}.",
        _AT,
    ),
    "references": (
        "Every reference to the symbol at path:line:column, as the editor's language server "
        "finds them (including the declaration). Returns {locations: [{path, line, column, "
        "endLine, endColumn}]}.",
        _AT,
    ),
    "hover": (
        "The editor's hover information (type, signature, documentation) for the symbol at "
        "path:line:column. Returns {text} in markdown.",
        _AT,
    ),
    "documentSymbols": (
        "The outline of a file: its classes, functions, variables, ... as the editor's "
        "language server sees them. Returns {symbols: [{name, kind, line, column, endLine, "
        "endColumn, containerName}]}, a flat list (containerName names the parent).",
        _obj({"path": _PATH}, ["path"]),
    ),
    "workspaceSymbols": (
        "Search the workspace's symbols by name (fuzzy, as the editor's language servers do). "
        "Returns {symbols: [{name, kind, path, line, column, containerName}]}.",
        _obj({"query": {"type": "string", "description": "Part of a symbol name."}}, ["query"]),
    ),
    "openEditors": (
        "The files the user has open in the editor: {editors: [{path, languageId, dirty "
        "(unsaved changes), active (the one in front)}]}.",
        _obj({}),
    ),
    "selection": (
        "What the user has selected in the editor: {selection: {path, line, column, endLine, "
        "endColumn, text}}, or {selection: null} when nothing is known.",
        _obj({}),
    ),
    "openFile": (
        "Show a file to the user in the editor (without taking the keyboard focus), "
        "optionally at a line or line range. Returns {shown}.",
        _obj({"path": _PATH, "line": _LINE, "endLine": _LINE}, ["path"]),
    ),
    "openDiff": (
        "Propose new content for a file and let the user review it in the editor's diff view. "
        "Blocks until the user decides. Returns {answer: accept|reject, text}: text is what "
        "the user kept (they may have edited it). The file is not written by this tool.",
        _obj(
            {
                "path": _PATH,
                "newText": {"type": "string", "description": "The full proposed file content."},
                "title": {"type": "string", "description": "A short title for the review."},
            },
            ["path", "newText"],
        ),
    ),
}

TOOL_NAMES: Final = tuple(TOOLS)
# answered by the bridge itself for every editor
BRIDGE_ONLY: Final = frozenset({"openFile"})
# answered by the bridge when the editor does not declare them
BRIDGE_FALLBACK: Final = frozenset({"openEditors", "selection", "openFile"})
# the tools that change something the user sees; the rest only read
NO_TIMEOUT: Final = frozenset({"openDiff"})
# answers that may name any file the editor knows (by the key of their list of items with a
# path): only the session's own folders' are kept
CONFINED: Final = {
    "diagnostics": "files",
    "workspaceSymbols": "symbols",
    "openEditors": "editors",
    "selection": "selection",
}
