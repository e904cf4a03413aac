"""Where follow-along jumps for an edit: its first changed line (DESIGN §2 "Follow-along").

Agents name an edited file by a location at its top (claude-agent-acp: ``line: 1``), so
following the location shows the wrong place. The change itself says better, from the most
precise source to the least: Claude Code's ``_meta.claudeCode.toolResponse.structuredPatch``
(real hunks), then a ``diff`` item (a whole file's old and new text, or snippets found in the
file as it is now, before or after the edit lands).
"""

from __future__ import annotations

import os
from typing import Any

JsonObject = dict[str, Any]
MAX_SEARCH_BYTES = 2 * 1024 * 1024


def first_difference(old: str, new: str) -> int:
    """0-based index of the first line where ``new`` differs from ``old`` (past the shorter's
    end when one is a prefix of the other)."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    for index, (a, b) in enumerate(zip(old_lines, new_lines, strict=False)):
        if a != b:
            return index
    return min(len(old_lines), len(new_lines))


def _patch_line(tool_call: JsonObject) -> int | None:
    meta = tool_call.get("_meta")
    claude = meta.get("claudeCode") if isinstance(meta, dict) else None
    response = claude.get("toolResponse") if isinstance(claude, dict) else None
    patch = response.get("structuredPatch") if isinstance(response, dict) else None
    if not isinstance(patch, list) or not patch or not isinstance(patch[0], dict):
        return None
    hunk = patch[0]
    start, lines = hunk.get("newStart"), hunk.get("lines")
    if not isinstance(start, int) or not isinstance(lines, list):
        return None
    for offset, line in enumerate(lines):  # context lines come first: skip them
        if not isinstance(line, str):
            return None
        if line.startswith(("+", "-")):
            return max(start - 1, 0) + offset
    return max(start - 1, 0)


def _read(path: str) -> str | None:
    try:
        if os.path.getsize(path) > MAX_SEARCH_BYTES:
            return None
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def _diff_line(item: JsonObject, text: str | None) -> int | None:
    old, new = item.get("oldText"), item.get("newText")
    if not isinstance(new, str):
        return None
    if not isinstance(old, str):
        return 0  # a new (or wholly rewritten) file: its top
    within = first_difference(old, new)
    if text is None:
        return None
    if text in (old, new):
        return within  # the whole file's old and new text
    for snippet in (new, old):  # the edit may or may not have landed yet
        at = text.find(snippet) if snippet else -1
        if at >= 0:
            return text.count("\n", 0, at) + within
    return None


def edit_target(tool_call: JsonObject) -> tuple[str, int] | None:
    """(absolute path, 0-based line) of the first line the tool call changes, if it says."""
    content = tool_call.get("content")
    diffs = [
        item
        for item in (content if isinstance(content, list) else [])
        if isinstance(item, dict) and item.get("type") == "diff"
    ]
    if not diffs:
        return None
    path = diffs[0].get("path")
    if not isinstance(path, str) or not os.path.isabs(path) or not os.path.isfile(path):
        return None
    line = _patch_line(tool_call)
    if line is None:
        line = _diff_line(diffs[0], _read(path))
    return None if line is None else (path, line)
