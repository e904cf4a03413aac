"""LSP lines and positions.

LSP ends a line at "\\n", "\\r\\n" or "\\r" (nothing else: `str.splitlines` also splits at
form feeds, U+2028 and more, which editors do not). A position's `character` counts code
units of the negotiated position encoding: UTF-16 (the default, VS Code), UTF-8 (Neovim
through pygls) or UTF-32 (code points, which is what Python indexes by).
"""

from __future__ import annotations

import enum
import re
from bisect import bisect_right
from itertools import accumulate
from typing import Literal

from lsprotocol import types as lsp

Encoding = Literal["utf-8", "utf-16", "utf-32"]

_ENCODINGS: frozenset[str] = frozenset({"utf-8", "utf-16", "utf-32"})
_LSP_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def normalize_encoding(encoding: str) -> Encoding:
    """Canonical name of a position encoding ("utf-16", "UTF-8", a PositionEncodingKind…)."""
    name = encoding.value if isinstance(encoding, enum.Enum) else encoding
    name = str(name).lower()
    if name not in _ENCODINGS:
        raise ValueError(f"unknown position encoding {encoding!r}")
    return name  # type: ignore[return-value]


def split_lines(text: str) -> list[str]:
    """The LSP lines of `text`, each with its line break; "" → []. A last line without a
    break is kept as is; a text ending in a break has no empty last element."""
    lines = text.splitlines(keepends=True)
    # splitlines breaks at a superset of LSP's breaks: the same count means the same lines
    expected = count_line_breaks(text, 0, len(text))
    if text and not text.endswith(("\n", "\r")):
        expected += 1
    if len(lines) == expected:
        return lines
    return _LSP_LINE.findall(text)


def count_line_breaks(text: str, start: int, end: int) -> int:
    """Number of LSP line breaks in text[start:end] (neither end inside a "\r\n")."""
    breaks = text.count("\n", start, end)
    if "\r" in text:
        breaks += text.count("\r", start, end) - text.count("\r\n", start, end)
    return breaks


def line_break_len(line: str) -> int:
    """Length of the line break that ends `line` (0, 1 or 2)."""
    if line.endswith("\r\n"):
        return 2
    if line.endswith(("\n", "\r")):
        return 1
    return 0


def code_units(s: str, encoding: Encoding) -> int:
    """How many code units of `encoding` `s` takes."""
    if encoding == "utf-32" or s.isascii():
        return len(s)
    if encoding == "utf-8":
        return len(s.encode("utf-8", "surrogatepass"))
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def code_points(s: str, units: int, encoding: Encoding) -> int:
    """How many code points of `s` fit in its first `units` code units. A count that ends
    inside a character rounds down to that character's start; past the end gives len(s)."""
    if units >= len(s) and (encoding == "utf-32" or s.isascii()):
        return len(s)
    if encoding == "utf-32" or s.isascii():
        return units
    if encoding == "utf-8":
        data = s.encode("utf-8", "surrogatepass")
        if units >= len(data):
            return len(s)
        # a cut multi-byte sequence at the end is dropped by "ignore": rounds down
        return len(data[:units].decode("utf-8", "ignore"))
    data = s.encode("utf-16-le", "surrogatepass")
    if 2 * units >= len(data):
        return len(s)
    return len(data[: 2 * units].decode("utf-16-le", "ignore"))


class LineIndex:
    """Line starts of a text, for converting between offsets (code points) and positions."""

    __slots__ = ("_starts", "text")

    def __init__(self, text: str, lines: list[str] | None = None) -> None:
        self.text = text
        if lines is None:
            lines = split_lines(text)
        starts = list(accumulate(map(len, lines), initial=0))
        if lines and not line_break_len(lines[-1]):
            starts.pop()  # the last line has no break: no empty line after it
        self._starts = starts

    @property
    def line_count(self) -> int:
        """Number of LSP lines (a text ending in a line break has an empty last line)."""
        return len(self._starts)

    def line_start(self, line: int) -> int:
        return self._starts[line]

    def line_content_end(self, line: int) -> int:
        """Offset of the end of `line`'s content, before its line break."""
        if line + 1 < len(self._starts):
            end = self._starts[line + 1]
            return end - line_break_len(self.text[max(end - 2, 0) : end])
        return len(self.text)

    def position(self, offset: int, encoding: Encoding) -> lsp.Position:
        """The position of code point `offset`. Raises ValueError for an offset outside the
        text or between the "\\r" and "\\n" of a line break (no position names it)."""
        text = self.text
        if not 0 <= offset <= len(text):
            raise ValueError(f"offset {offset} outside a text of length {len(text)}")
        line = bisect_right(self._starts, offset) - 1
        start = self._starts[line]
        if offset > self.line_content_end(line):
            raise ValueError(f"offset {offset} is inside a line break")
        return lsp.Position(line=line, character=code_units(text[start:offset], encoding))

    def offset(self, position: lsp.Position, encoding: Encoding) -> int:
        """The code point offset of `position`, clamped as LSP says: a character past the
        line's end means the end of the line, a line past the last one the end of the text."""
        if position.line >= len(self._starts):
            return len(self.text)
        start = self._starts[position.line]
        content = self.text[start : self.line_content_end(position.line)]
        return start + code_points(content, position.character, encoding)


def offset_to_position(text: str, offset: int, encoding: str = "utf-16") -> lsp.Position:
    """Position of code point `offset` in `text` (see `LineIndex.position`)."""
    return LineIndex(text).position(offset, normalize_encoding(encoding))


def position_to_offset(text: str, position: lsp.Position, encoding: str = "utf-16") -> int:
    """Code point offset of `position` in `text` (see `LineIndex.offset`)."""
    return LineIndex(text).offset(position, normalize_encoding(encoding))
