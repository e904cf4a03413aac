"""The pure text side of agent file access: line slices, line endings, write plans.

Kept apart from ``files`` (which talks to the editor) so the rules can be read and tested on
their own; ``plan_write`` may run in a worker thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lsprotocol import types

from acp_lsp.textedits import merge3, minimal_edits

_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def slice_lines(text: str, line: int | None, limit: int | None) -> str:
    """ACP ``line`` (1-based; 0 treated as 1) and ``limit`` (line count).

    Lines end at ``\\n`` only (a CRLF line keeps its ``\\r``): ``str.splitlines`` would also
    break at form feeds and Unicode separators, and miscount the lines the agent means."""
    if line is None and limit is None:
        return text
    lines = _LINE.findall(text)
    start = max((line or 1) - 1, 0)
    end = len(lines) if limit is None else start + limit
    return "".join(lines[start:end])


def match_line_endings(content: str, document: str | None) -> str:
    """The agent's LF text in the CRLF convention of a document that uses CRLF throughout.

    Agents often write LF whatever they read; left alone, every line of a CRLF document would
    differ (one huge edit, a conflict with any user edit, and editors that normalise line
    endings would not show the expected text). Content with any CR, and documents with mixed
    endings, are taken as they are."""
    if not document or "\r" in content or "\r\n" not in document:
        return content
    if document.count("\n") != document.count("\r\n"):
        return content
    return content.replace("\n", "\r\n")


def read_disk(path: str) -> str:
    """A file's exact text (no newline translation: CRLF stays CRLF)."""
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


@dataclass
class WritePlan:
    """What a write turns the document into, and the edits that do it (or the conflict)."""

    target: str | None
    edits: list[types.TextEdit] = field(default_factory=list)
    conflicts: list[tuple[int, int]] = field(default_factory=list)


def plan_write(base: str | None, current: str | None, content: str, encoding: str) -> WritePlan:
    """Merge ``content`` onto ``current`` when the user changed it since ``base`` (what the
    agent read), then the minimal edits from ``current``. Pure, so it may run in a thread."""
    target = content
    if base is not None and current is not None and base != current:
        merged = merge3(base, current, content)
        if merged.text is None:
            return WritePlan(None, conflicts=merged.conflicts)
        target = merged.text
    return WritePlan(target, minimal_edits(current or "", target, encoding))
