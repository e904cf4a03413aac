"""Follow-along to an edit's first changed line (acp_lsp/editor/follow_edits.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_lsp.editor.follow_edits import edit_target, first_difference

TEXT = "import os\n\n\ndef greet(name):\n    return 'Hello, ' + name\n"


def call(path: Path, old: str | None, new: str, **extra: Any) -> dict[str, Any]:
    return {
        "toolCallId": "e1",
        "kind": "edit",
        "content": [{"type": "diff", "path": str(path), "oldText": old, "newText": new}],
        "locations": [{"path": str(path), "line": 1}],
        **extra,
    }


def test_first_difference() -> None:
    assert first_difference("a\nb\nc\n", "a\nB\nc\n") == 1
    assert first_difference("a\n", "a\nb\n") == 1
    assert first_difference("", "x\n") == 0


def test_a_snippet_is_found_before_and_after_it_lands(tmp_path: Path) -> None:
    f = tmp_path / "greet.py"
    old = "def greet(name):\n    return 'Hello, ' + name\n"
    new = "def greet(name):\n    return 'Hi, ' + name\n"
    f.write_text(TEXT, newline="")
    assert edit_target(call(f, old, new)) == (str(f), 4)  # not the location's line 1
    f.write_text(TEXT.replace(old, new), newline="")
    assert edit_target(call(f, old, new)) == (str(f), 4)


def test_claude_structured_patch_wins(tmp_path: Path) -> None:
    f = tmp_path / "greet.py"
    f.write_text(TEXT, newline="")
    meta = {
        "claudeCode": {
            "toolResponse": {
                "structuredPatch": [
                    {
                        "oldStart": 3,
                        "newStart": 3,
                        "lines": [" ", " def greet(name):", "-    x", "+    y"],
                    }
                ]
            }
        }
    }
    # the snippet is not in the file at all: the hunk alone places the change
    assert edit_target(call(f, "nope", "nothing", _meta=meta)) == (str(f), 4)


def test_whole_file_and_new_file(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("1\n2\n3\n", newline="")
    assert edit_target(call(f, "1\n2\n3\n", "1\n2\nthree\n")) == (str(f), 2)
    assert edit_target(call(f, None, "1\n2\n3\n")) == (str(f), 0)


def test_no_diff_or_no_file_is_not_an_edit_target(tmp_path: Path) -> None:
    assert edit_target({"toolCallId": "r", "locations": [{"path": str(tmp_path / "x")}]}) is None
    assert edit_target(call(tmp_path / "missing.py", "a", "b")) is None
    f = tmp_path / "b.txt"
    f.write_text("unrelated\n", newline="")
    assert edit_target(call(f, "old snippet", "new snippet")) is None
