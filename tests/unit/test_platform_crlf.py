"""CRLF files (Windows' line endings) byte for byte through each pure edit path: a read from
disk, an agent's read of some lines, its write onto an unsaved buffer (merge, minimal edits),
the review's hunks and a hunk put back (the restore). End to end through a running server is
not covered here."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from acp_lsp.editor.file_text import match_line_endings, plan_write, read_disk, slice_lines
from acp_lsp.editor.review_hunks import hunks_of, put_back
from acp_lsp.textedits import apply_edits, merge3, minimal_edits

BASE = "def f():\r\n    return 1\r\n\r\ndef g():\r\n    return 2\r\n"
USER = BASE.replace("return 1", "return 10")  # the unsaved buffer: the user's edit
AGENT = BASE.replace("return 2", "return 20")  # what the agent writes, in CRLF


def test_a_read_keeps_every_cr(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(BASE.encode())
    assert read_disk(str(path)).encode() == BASE.encode()
    assert slice_lines(BASE, 2, 2) == "    return 1\r\n\r\n"


def test_an_agents_write_merges_onto_an_unsaved_crlf_buffer() -> None:
    plan = plan_write(BASE, USER, AGENT, "utf-16")
    expected = BASE.replace("return 1", "return 10").replace("return 2", "return 20")
    assert plan.target == expected
    assert apply_edits(USER, plan.edits, "utf-16") == expected
    assert merge3(BASE, USER, AGENT).text == expected


def test_an_lf_write_onto_a_crlf_buffer_becomes_crlf() -> None:
    lf = AGENT.replace("\r\n", "\n")
    assert match_line_endings(lf, BASE) == AGENT
    plan = plan_write(BASE, USER, match_line_endings(lf, USER), "utf-16")
    assert plan.target is not None and plan.target.count("\r\n") == BASE.count("\r\n")
    assert "\n" not in plan.target.replace("\r\n", "")


def test_review_hunks_and_a_hunk_put_back_keep_crlf() -> None:
    after = AGENT.replace("def f():", "def f(x):")
    hunks = hunks_of(BASE, after)
    assert len(hunks) == 2
    assert put_back(BASE, after, hunks) == BASE  # the whole change undone, byte for byte
    one = put_back(BASE, after, hunks[:1])
    assert one == AGENT and one.count("\r\n") == BASE.count("\r\n")


@given(
    st.lists(st.sampled_from(["a", "b", "c\r", "é", ""]), max_size=8),
    st.lists(st.sampled_from(["a", "b", "c\r", "é", ""]), max_size=8),
    st.sampled_from(["\r\n", "\n"]),
)
def test_minimal_edits_turn_one_crlf_text_into_another_exactly(
    old: list[str], new: list[str], newline: str
) -> None:
    before, after = "\r\n".join(old), newline.join(new)
    for encoding in ("utf-16", "utf-8"):
        assert apply_edits(before, minimal_edits(before, after, encoding), encoding) == after
