"""What a tool call tells review: the paths it names and the diffs it reports."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from acp_lsp.editor.review_rules import Diff
from acp_lsp.sandbox import SandboxError

if TYPE_CHECKING:
    from acp_lsp.sandbox import Sandbox
    from acp_lsp.session import Session


def location_paths(locations: Any) -> list[str]:
    if not isinstance(locations, list):
        return []
    return [
        loc["path"]
        for loc in locations
        if isinstance(loc, dict) and isinstance(loc.get("path"), str)
    ]


_RAW_INPUT_PATH_KEYS = ("file_path", "filePath", "path", "notebook_path", "abs_path")


def raw_input_paths(raw_input: Any) -> list[str]:
    """Paths in a tool's input: claude-agent-acp's first ``tool_call`` of a Write names its
    file only there, before the write, so this is the snapshot that predates it."""
    if not isinstance(raw_input, dict):
        return []
    return [
        value
        for key in _RAW_INPUT_PATH_KEYS
        if isinstance(value := raw_input.get(key), str) and os.path.isabs(value)
    ]


def diff_items(content: Any) -> list[tuple[str, Diff]]:
    """The well-formed ``diff`` items of tool-call content: (path, Diff), in order."""
    if not isinstance(content, list):
        return []
    out: list[tuple[str, Diff]] = []
    for item in content:
        if not isinstance(item, dict) or item.get("type") != "diff":
            continue
        path, old, new = item.get("path"), item.get("oldText"), item.get("newText")
        if (
            isinstance(path, str)
            and path
            and isinstance(new, str)
            and (old is None or isinstance(old, str))
        ):
            out.append((path, Diff(old, new)))
    return out


def resolve_named(sandbox: Sandbox, session: Session, path: str) -> str | None:
    """The real path of a path a tool call names (relative to the session's folder); None
    where the sandbox refuses it."""
    if not os.path.isabs(path):
        path = os.path.join(session.cwd, path)
    try:
        return sandbox.resolve(path)
    except SandboxError:
        return None
