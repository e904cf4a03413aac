"""Text diffing for agent writes: minimal LSP TextEdits, applying them, 3-way merge.

The implementation lives in :mod:`acp_lsp.text`; this module is the stable import path.
"""

from acp_lsp.text.edits import apply_edits, minimal_edits
from acp_lsp.text.linediff import Block, diff_lines
from acp_lsp.text.lines import (
    Encoding,
    LineIndex,
    normalize_encoding,
    offset_to_position,
    position_to_offset,
    split_lines,
)
from acp_lsp.text.merge import MergeResult, merge3

__all__ = [
    "Block",
    "Encoding",
    "LineIndex",
    "MergeResult",
    "apply_edits",
    "diff_lines",
    "merge3",
    "minimal_edits",
    "normalize_encoding",
    "offset_to_position",
    "position_to_offset",
    "split_lines",
]
