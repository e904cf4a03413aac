"""Minimal LSP TextEdits between two texts, and applying TextEdits.

An agent's write reaches the editor as edits, not as a whole new text, so the editor keeps
its undo history, marks and cursor: lines the write did not change are never touched, and
inside a changed block only the characters between the common prefix and suffix are.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

from lsprotocol import types as lsp

from acp_lsp.text.linediff import (
    common_prefix_len,
    common_suffix_len,
    diff_lines,
    unchanged_head_and_tail,
)
from acp_lsp.text.lines import (
    LineIndex,
    code_units,
    count_line_breaks,
    line_break_len,
    normalize_encoding,
    split_lines,
)


def minimal_edits(old: str, new: str, encoding: str = "utf-16") -> list[lsp.TextEdit]:
    """Non-overlapping TextEdits, in document order, turning `old` into `new`; every range
    refers to `old`, with characters counted in `encoding`. [] when old == new."""
    if old == new:
        return []
    enc = normalize_encoding(encoding)
    first, (old_stop, new_stop) = unchanged_head_and_tail(old, new)
    old_lines = split_lines(old[first:old_stop])
    new_lines = split_lines(new[first:new_stop])
    old_starts = list(accumulate(map(len, old_lines), initial=first))
    new_starts = list(accumulate(map(len, new_lines), initial=first))
    head_lines = count_line_breaks(old, 0, first)
    # The end of a last line without a break belongs to that line, not to a next one.
    ends_open = bool(old_lines) and not line_break_len(old_lines[-1])

    def position(offset: int, i1: int, i2: int) -> lsp.Position:
        """Position of `offset`, which lies in old_lines[i1:i2] or at their end."""
        i = bisect_right(old_starts, offset, i1, i2 + 1) - 1
        if i == len(old_lines) and ends_open:
            i -= 1
        units = code_units(old[old_starts[i] : offset], enc)
        return lsp.Position(line=head_lines + i, character=units)

    edits: list[lsp.TextEdit] = []
    for i1, i2, j1, j2 in diff_lines(old_lines, new_lines):
        start, end = old_starts[i1], old_starts[i2]
        new_start, new_end = new_starts[j1], new_starts[j2]
        same = common_prefix_len(old, start, new, new_start, min(end - start, new_end - new_start))
        start += same
        new_start += same
        same = common_suffix_len(old, end, new, new_end, min(end - start, new_end - new_start))
        end -= same
        new_end -= same
        # No position names the point between "\r" and "\n": widen over the whole break
        # (both characters are common text, so new_text widens with it).
        if _inside_crlf(old, start):
            start -= 1
            new_start -= 1
        if _inside_crlf(old, end):
            end += 1
            new_end += 1
        edits.append(
            lsp.TextEdit(
                range=lsp.Range(start=position(start, i1, i2), end=position(end, i1, i2)),
                new_text=new[new_start:new_end],
            )
        )
    return edits


def _inside_crlf(text: str, offset: int) -> bool:
    return 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n"


def apply_edits(text: str, edits: Sequence[lsp.TextEdit], encoding: str = "utf-16") -> str:
    """Apply LSP TextEdits whose ranges refer to `text`. Inserts at one position land in
    the order given (as LSP says). Raises ValueError for overlapping or reversed ranges."""
    if not edits:
        return text
    enc = normalize_encoding(encoding)
    index = LineIndex(text)
    spans: list[tuple[int, int, int, str]] = []
    for order, edit in enumerate(edits):
        start = index.offset(edit.range.start, enc)
        end = index.offset(edit.range.end, enc)
        if end < start:
            raise ValueError(f"edit {order} has its end before its start: {edit.range}")
        spans.append((start, end, order, edit.new_text))
    spans.sort(key=lambda span: (span[0], span[1], span[2]))
    pieces: list[str] = []
    done = 0
    for start, end, order, new_text in spans:
        if start < done:
            raise ValueError(f"edit {order} overlaps another edit")
        pieces.append(text[done:start])
        pieces.append(new_text)
        done = end
    pieces.append(text[done:])
    return "".join(pieces)
