"""Minimal TextEdits, applying them, LSP positions and the line diff under them."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types as lsp

from acp_lsp.text import linediff
from acp_lsp.textedits import (
    LineIndex,
    apply_edits,
    diff_lines,
    minimal_edits,
    normalize_encoding,
    offset_to_position,
    position_to_offset,
    split_lines,
)

ENCODINGS = ("utf-16", "utf-8", "utf-32")

# Pieces that make position counting hard: outside the BMP, wide, combining, ZWJ sequences,
# every LSP line break, and characters str.splitlines breaks at although LSP does not.
TOKENS = (
    "a",
    "b",
    "x y",
    "é",
    "e\u0301",
    "漢字",
    "🙂",
    "👍🏽",
    "👩\u200d💻",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "\x0c",
    "\u2028",
    "\x85",
)
texts = st.one_of(
    st.lists(st.sampled_from(TOKENS), max_size=30).map("".join),
    st.text(max_size=40),
)
# Lines drawn from a small pool, so texts share and repeat whole lines.
pool_lines = st.sampled_from(["", "}", "a", "🙂 b", "x\r", "漢", "é\x0c"]).flatmap(
    lambda body: st.sampled_from(["\n", "\r\n", "\r", ""]).map(lambda end: body + end)
)
line_texts = st.lists(pool_lines, max_size=25).map("".join)
encodings = st.sampled_from(ENCODINGS)
pytestmark = pytest.mark.timeout(120)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# for the strategies that make many draws per example
FEWER = settings(SETTINGS, max_examples=100)


def pos(line: int, character: int) -> lsp.Position:
    return lsp.Position(line=line, character=character)


def edit(sl: int, sc: int, el: int, ec: int, text: str) -> lsp.TextEdit:
    return lsp.TextEdit(range=lsp.Range(start=pos(sl, sc), end=pos(el, ec)), new_text=text)


def lsp_lines(text: str) -> list[str]:
    """Reference LSP line split, straight from the spec's definition."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", text)


def spans(text: str, edits: list[lsp.TextEdit], encoding: str) -> list[tuple[int, int]]:
    index = LineIndex(text)
    enc = normalize_encoding(encoding)
    return [(index.offset(e.range.start, enc), index.offset(e.range.end, enc)) for e in edits]


# --- minimal_edits: examples --------------------------------------------------------------


def test_identical_texts_need_no_edit() -> None:
    assert minimal_edits("same\ntext", "same\ntext") == []
    assert minimal_edits("", "") == []


def test_a_word_inserted_in_a_line_is_one_insert_of_that_word() -> None:
    old = "def f():\n    return hello world\n"
    new = "def f():\n    return hello there world\n"
    assert minimal_edits(old, new) == [edit(1, 17, 1, 17, "there ")]


@pytest.mark.parametrize(("encoding", "start"), [("utf-16", 2), ("utf-8", 4), ("utf-32", 1)])
def test_characters_count_in_the_negotiated_encoding(encoding: str, start: int) -> None:
    # "🙂" is 2 UTF-16 code units, 4 UTF-8 bytes and 1 code point
    assert minimal_edits("🙂a\n", "🙂b\n", encoding) == [edit(0, start, 0, start + 1, "b")]


def test_encoding_accepts_the_lsprotocol_enum() -> None:
    edits = minimal_edits("é1", "é2", lsp.PositionEncodingKind.Utf8)
    assert edits == [edit(0, 2, 0, 3, "2")]
    with pytest.raises(ValueError, match="unknown position encoding"):
        minimal_edits("a", "b", "utf-7")


def test_an_edit_never_ends_between_cr_and_lf() -> None:
    # Only "\r" differs textually, but no position names the point inside "\r\n".
    assert minimal_edits("a\r\nb\r\n", "a\nb\r\n") == [edit(0, 1, 1, 0, "\n")]
    # Inserting "\r" before "\n" of a "\r\n": widened over the whole break too.
    assert minimal_edits("x\r\ny", "x\r\r\ny") == [edit(0, 1, 1, 0, "\r\r\n")]


def test_lone_cr_ends_a_line() -> None:
    assert minimal_edits("a\rb\rc", "a\rB\rc") == [edit(1, 0, 1, 1, "B")]


def test_form_feed_and_line_separator_do_not_end_lines() -> None:
    assert minimal_edits("a\x0cb\u2028c\nz", "a\x0cb\u2028C\nz") == [edit(0, 4, 0, 5, "C")]


def test_adding_and_removing_the_final_newline() -> None:
    assert minimal_edits("a\nb", "a\nb\n") == [edit(1, 1, 1, 1, "\n")]
    assert minimal_edits("a\nb\n", "a\nb") == [edit(1, 1, 2, 0, "")]


def test_from_and_to_empty_text() -> None:
    assert minimal_edits("", "one\ntwo\n") == [edit(0, 0, 0, 0, "one\ntwo\n")]
    assert minimal_edits("one\ntwo", "") == [edit(0, 0, 1, 3, "")]


def test_deleting_a_line_deletes_exactly_that_line() -> None:
    old = "".join(f"line {i}\n" for i in range(10))
    new = old.replace("line 4\n", "")
    assert minimal_edits(old, new) == [edit(4, 0, 5, 0, "")]


def test_scattered_changes_in_a_big_file_touch_only_their_lines() -> None:
    lines = [f"    value_{i} = compute({i})\n" if i % 4 else "\n" for i in range(20_000)]
    changed = list(range(503, 20_000, 997))
    new_lines = list(lines)
    for i in changed:
        new_lines[i] = lines[i].replace("compute", "compute_fast") if i % 4 else "# note\n"
    old, new = "".join(lines), "".join(new_lines)
    edits = minimal_edits(old, new)
    assert [(e.range.start.line, e.range.end.line) for e in edits] == [(i, i) for i in changed]
    assert apply_edits(old, edits) == new


def test_a_rewrite_too_big_for_myers_still_diffs_correctly() -> None:
    rng = random.Random(7)
    common = ["\n", "}\n", "    return x\n"]
    old_lines = [rng.choice(common) if rng.random() < 0.5 else f"a{i}\n" for i in range(6000)]
    new_lines = [rng.choice(common) if rng.random() < 0.5 else f"b{i}\n" for i in range(6000)]
    new_lines[100:200] = old_lines[100:200]  # an unchanged stretch inside the rewrite
    old, new = "".join(old_lines), "".join(new_lines)
    edits = minimal_edits(old, new)
    assert apply_edits(old, edits) == new
    assert len(edits) > 1  # the unchanged stretch was found, not replaced


# --- minimal_edits: properties ------------------------------------------------------------


@SETTINGS
@given(old=texts, new=texts)
def test_edits_turn_old_into_new_in_every_encoding(old: str, new: str) -> None:
    for encoding in ENCODINGS:
        assert apply_edits(old, minimal_edits(old, new, encoding), encoding) == new


@FEWER
@given(old=line_texts, new=line_texts, encoding=encodings)
def test_edits_on_shared_lines_turn_old_into_new(old: str, new: str, encoding: str) -> None:
    assert apply_edits(old, minimal_edits(old, new, encoding), encoding) == new


@SETTINGS
@given(old=st.one_of(texts, line_texts), new=st.one_of(texts, line_texts), encoding=encodings)
def test_edits_are_ordered_disjoint_and_exactly_positioned(
    old: str, new: str, encoding: str
) -> None:
    edits = minimal_edits(old, new, encoding)
    offsets = spans(old, edits, encoding)
    for start, end in offsets:
        assert start <= end
    for (_, end), (next_start, _) in pairwise(offsets):
        assert end < next_start  # an unchanged line separates any two edits
    index = LineIndex(old)
    enc = normalize_encoding(encoding)
    for e, (start, end) in zip(edits, offsets, strict=True):
        # no position relies on LSP's clamping: each names its offset exactly
        assert index.position(start, enc) == e.range.start
        assert index.position(end, enc) == e.range.end
    if old == new:
        assert edits == []


line_bodies = st.lists(
    st.sampled_from(["a", "b", "🙂", "漢", "é", "e\u0301", "\x0c", " "]), min_size=1, max_size=4
).map("".join)
line_ends = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def line_level_changes(draw: st.DrawFn) -> tuple[list[str], list[str], set[int]]:
    """(old lines, new lines, indices of old lines left unchanged). Old lines are unique;
    new lines are fresh (they occur nowhere in old), so the unchanged ones are known."""
    bodies = draw(st.lists(line_bodies, min_size=1, max_size=20, unique=True))
    old = [body + draw(line_ends) for body in bodies]
    new: list[str] = []
    kept: set[int] = set()
    for i, line in enumerate(old):
        op = draw(st.sampled_from(["keep", "keep", "replace", "delete", "insert"]))
        fresh = [f"§{i}.{k}" + draw(line_ends) for k in range(draw(st.integers(1, 2)))]
        if op == "keep":
            new.append(line)
            kept.add(i)
        elif op == "replace":
            # keep part of the line, so character trimming has something to trim
            new += [line[:1] + fresh[0], *fresh[1:]]
        elif op == "insert":
            new += [*fresh, line]
            kept.add(i)
    return old, new, kept


@FEWER
@given(change=line_level_changes(), encoding=encodings)
def test_unchanged_lines_are_never_inside_an_edit(
    change: tuple[list[str], list[str], set[int]], encoding: str
) -> None:
    old_lines, new_lines, kept = change
    old, new = "".join(old_lines), "".join(new_lines)
    edits = minimal_edits(old, new, encoding)
    assert apply_edits(old, edits, encoding) == new
    starts = [sum(map(len, old_lines[:i])) for i in range(len(old_lines) + 1)]
    for start, end in spans(old, edits, encoding):
        for i in kept:
            line_start, line_end = starts[i], starts[i + 1]
            assert not (start < line_end and line_start < end), (old_lines[i], start, end)


# --- apply_edits ----------------------------------------------------------------------------


def test_apply_takes_edits_in_any_order() -> None:
    text = "one\ntwo\nthree\n"
    edits = [edit(2, 0, 2, 5, "THREE"), edit(0, 0, 0, 3, "ONE")]
    assert apply_edits(text, edits) == "ONE\ntwo\nTHREE\n"


def test_inserts_at_one_position_land_in_the_order_given() -> None:
    text = "ab"
    edits = [edit(0, 1, 0, 1, "1"), edit(0, 1, 0, 2, "B"), edit(0, 1, 0, 1, "2")]
    assert apply_edits(text, edits) == "a12B"


def test_overlapping_or_reversed_edits_are_refused() -> None:
    with pytest.raises(ValueError, match="overlaps"):
        apply_edits("abcdef", [edit(0, 0, 0, 3, "x"), edit(0, 2, 0, 4, "y")])
    with pytest.raises(ValueError, match="end before its start"):
        apply_edits("abcdef", [edit(0, 4, 0, 2, "x")])


def test_positions_past_the_end_clamp_as_lsp_says() -> None:
    text = "ab\r\ncd"
    # a character past the line's end means the end of the line, before its break
    assert apply_edits(text, [edit(0, 99, 0, 99, "!")]) == "ab!\r\ncd"
    # a line past the last one means the end of the text
    assert apply_edits(text, [edit(9, 0, 9, 0, "!")]) == "ab\r\ncd!"


def test_a_position_inside_a_character_rounds_down_to_its_start() -> None:
    # utf-16 character 1 is between the two halves of 🙂; utf-8 byte 2 is inside é
    assert apply_edits("🙂z", [edit(0, 1, 0, 1, "|")], "utf-16") == "|🙂z"
    assert apply_edits("xé", [edit(0, 2, 0, 2, "|")], "utf-8") == "x|é"


# --- positions and lines ----------------------------------------------------------------------


@SETTINGS
@given(text=texts, data=st.data(), encoding=encodings)
def test_offsets_and_positions_round_trip(text: str, data: st.DataObject, encoding: str) -> None:
    offset = data.draw(st.integers(0, len(text)))
    if 0 < offset < len(text) and text[offset - 1 : offset + 1] == "\r\n":
        with pytest.raises(ValueError, match="inside a line break"):
            offset_to_position(text, offset, encoding)
        return
    position = offset_to_position(text, offset, encoding)
    assert position_to_offset(text, position, encoding) == offset
    line = [*lsp_lines(text), ""][position.line]  # (the last line may be an empty one)
    content = line.rstrip("\r\n")
    unit = {"utf-16": 2, "utf-8": 1, "utf-32": 4}[encoding]
    codec = {"utf-16": "utf-16-le", "utf-8": "utf-8", "utf-32": "utf-32-le"}[encoding]
    assert position.character <= len(content.encode(codec, "surrogatepass")) // unit


@SETTINGS
@given(text=st.one_of(texts, line_texts))
def test_split_lines_follows_lsp_line_breaks(text: str) -> None:
    assert split_lines(text) == lsp_lines(text)
    assert "".join(split_lines(text)) == text


def test_line_index_counts_a_final_empty_line() -> None:
    assert LineIndex("").line_count == 1
    assert LineIndex("a\n").line_count == 2
    assert LineIndex("a\r\nb").line_count == 2
    assert LineIndex("a\x0cb").line_count == 1


# --- the line diff ------------------------------------------------------------------------------


def lcs_length(a: list[str], b: list[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev_diag = 0
        for j, y in enumerate(b):
            prev_diag, row[j + 1] = row[j + 1], prev_diag + 1 if x == y else max(row[j + 1], row[j])
    return row[-1]


def check_blocks(a: list[str], b: list[str]) -> int:
    """Rebuild b from a and the blocks; return how many lines of a were kept."""
    blocks = diff_lines(a, b)
    out: list[str] = []
    done_a = done_b = 0
    for i1, i2, j1, j2 in blocks:
        assert i1 - done_a == j1 - done_b  # an equal stretch before each block …
        assert a[done_a:i1] == b[done_b:j1]
        assert i1 > done_a or (done_a, done_b) == (0, 0)  # … of at least one line
        out += a[done_a:i1] + b[j1:j2]
        done_a, done_b = i2, j2
    assert a[done_a:] == b[done_b:]
    assert out + a[done_a:] == b
    return len(a) - sum(i2 - i1 for i1, i2, _, _ in blocks)


small_seqs = st.lists(st.sampled_from("abcde"), max_size=40)


@SETTINGS
@given(a=small_seqs, b=small_seqs)
def test_line_diff_keeps_a_longest_common_subsequence(a: list[str], b: list[str]) -> None:
    assert check_blocks(a, b) == lcs_length(a, b)


@contextmanager
def myers_budget(d: int) -> Iterator[None]:
    saved = linediff.MYERS_QUICK_D, linediff.MYERS_MAX_D
    linediff.MYERS_QUICK_D = linediff.MYERS_MAX_D = d
    try:
        yield
    finally:
        linediff.MYERS_QUICK_D, linediff.MYERS_MAX_D = saved


@SETTINGS
@given(a=st.lists(st.sampled_from("abcdefghijklmnopqrstuvwxyz"), max_size=60), data=st.data())
def test_line_diff_stays_correct_when_myers_gives_up(a: list[str], data: st.DataObject) -> None:
    b = data.draw(
        st.one_of(
            st.lists(st.sampled_from("abcdefghijklmnopqrstuvwxyz"), max_size=60), st.permutations(a)
        )
    )
    with myers_budget(1):  # forces the patience split and whole-gap fallbacks
        check_blocks(a, b)
