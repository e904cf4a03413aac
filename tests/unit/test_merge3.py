"""3-way merge of an agent's write (theirs) onto the user's concurrent edits (ours)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_lsp.textedits import MergeResult, merge3, split_lines

pytestmark = pytest.mark.timeout(120)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# for the strategies that make many draws per example
FEWER = settings(SETTINGS, max_examples=100)

BASE = "".join(f"line {i}\n" for i in range(1, 21))  # "line 1" is on line 1


def change(text: str, line: int, new: str) -> str:
    """Replace 1-based `line` (without its break) by `new`."""
    lines = text.split("\n")
    lines[line - 1] = new
    return "\n".join(lines)


# --- examples -------------------------------------------------------------------------------


def test_user_unchanged_takes_the_agents_text() -> None:
    theirs = change(BASE, 5, "agent")
    assert merge3(BASE, BASE, theirs) == MergeResult(theirs, [])


def test_agent_unchanged_keeps_the_users_text() -> None:
    ours = change(BASE, 5, "user")
    assert merge3(BASE, ours, BASE) == MergeResult(ours, [])


def test_changes_far_apart_combine() -> None:
    ours = change(BASE, 2, "user")
    theirs = change(BASE, 15, "agent")
    assert merge3(BASE, ours, theirs).text == change(ours, 15, "agent")


def test_changes_to_neighbouring_lines_combine() -> None:
    ours = change(BASE, 7, "user")
    theirs = change(change(BASE, 8, "agent"), 6, "agent too")
    assert merge3(BASE, ours, theirs).text == change(change(ours, 8, "agent"), 6, "agent too")


def test_user_insert_above_agent_change_shifts_it() -> None:
    ours = BASE.replace("line 3\n", "line 3\nnew a\nnew b\n")
    theirs = change(BASE, 10, "agent")
    merged = merge3(BASE, ours, theirs).text
    assert merged == change(ours, 12, "agent")


def test_insert_right_before_a_line_the_other_side_changed_combines() -> None:
    ours = BASE.replace("line 4\n", "user note\nline 4\n")
    theirs = change(BASE, 4, "agent")
    assert merge3(BASE, ours, theirs).text == BASE.replace("line 4\n", "user note\nagent\n")


def test_the_same_change_on_both_sides_is_taken_once() -> None:
    ours = change(change(BASE, 9, "same fix"), 1, "user")
    theirs = change(change(BASE, 9, "same fix"), 20, "agent")
    assert merge3(BASE, ours, theirs).text == change(ours, 20, "agent")


def test_both_sides_identical_is_that_text() -> None:
    both = change(BASE, 3, "x")
    assert merge3(BASE, both, both) == MergeResult(both, [])


def test_different_changes_to_one_line_conflict() -> None:
    ours = change(BASE, 6, "user")
    theirs = change(BASE, 6, "agent")
    assert merge3(BASE, ours, theirs) == MergeResult(None, [(6, 6)])


def test_conflict_lines_are_counted_in_the_users_text() -> None:
    ours = change(BASE.replace("line 1\n", "a\nb\nc\nline 1\n"), 13, "user")  # was line 10
    theirs = change(BASE, 10, "agent")
    assert merge3(BASE, ours, theirs) == MergeResult(None, [(13, 13)])


def test_every_conflict_is_reported_and_no_text_is_returned() -> None:
    ours = change(change(change(BASE, 2, "u"), 11, "u"), 18, "u")
    theirs = change(change(change(BASE, 2, "a"), 11, "a"), 15, "a")
    result = merge3(BASE, ours, theirs)
    assert result.text is None
    assert result.conflicts == [(2, 2), (11, 11)]


def test_overlapping_multi_line_changes_conflict_over_the_users_lines() -> None:
    ours = BASE.replace("line 4\nline 5\n", "u4\nu5\nu5b\n")
    theirs = BASE.replace("line 5\nline 6\n", "a5\na6\n")
    assert merge3(BASE, ours, theirs) == MergeResult(None, [(4, 7)])


def test_agent_change_to_lines_the_user_deleted_conflicts() -> None:
    ours = BASE.replace("line 8\nline 9\n", "")
    theirs = change(BASE, 9, "agent")
    # the user's side is empty: the conflict names the line just after the deletion
    assert merge3(BASE, ours, theirs) == MergeResult(None, [(8, 8)])


def test_two_different_inserts_at_one_place_conflict() -> None:
    ours = BASE.replace("line 12\n", "line 12\nuser\n")
    theirs = BASE.replace("line 12\n", "line 12\nagent\n")
    assert merge3(BASE, ours, theirs) == MergeResult(None, [(13, 13)])


def test_appending_differently_to_a_last_line_without_newline_conflicts() -> None:
    base = "a\nb"
    assert merge3(base, "a\nb\nuser", "a\nb\nagent") == MergeResult(None, [(2, 3)])
    assert merge3(base, "A\nb", "a\nb\nagent").text == "A\nb\nagent"


def test_crlf_text_merges_and_keeps_its_line_breaks() -> None:
    base = "one\r\ntwo\r\nthree\r\nfour\r\n"
    ours = "ONE\r\ntwo\r\nthree\r\nfour\r\n"
    theirs = "one\r\ntwo\r\nthree\r\nFOUR\r\n"
    assert merge3(base, ours, theirs).text == "ONE\r\ntwo\r\nthree\r\nFOUR\r\n"


def test_conflict_lines_follow_lsp_line_breaks() -> None:
    # a form feed is no line break for LSP (str.splitlines would count one)
    base = "a\x0cb\nc\rd\ne\n"
    ours = "a\x0cb\nc\rD1\ne\n"
    theirs = "a\x0cb\nc\rD2\ne\n"
    assert merge3(base, ours, theirs) == MergeResult(None, [(3, 3)])


# --- properties ---------------------------------------------------------------------------------

texts = st.lists(
    st.sampled_from(["a", "b", "\n", "\r\n", "\r", "🙂", "漢", "e\u0301", "\x0c"]), max_size=25
).map("".join)


@SETTINGS
@given(base=texts, x=texts)
def test_one_sided_or_identical_changes_give_that_text(base: str, x: str) -> None:
    assert merge3(base, base, x) == MergeResult(x, [])
    assert merge3(base, x, base) == MergeResult(x, [])
    assert merge3(base, x, x) == MergeResult(x, [])


bodies = st.lists(
    st.sampled_from(["a", "b", "🙂", "漢", "é", " ", "\x0c"]), min_size=1, max_size=4
).map("".join)
ends = st.sampled_from(["\n", "\r\n", "\r"])
OPS = ("replace", "delete", "insert", "modify")


def apply_ops(base: list[str], ops: dict[int, tuple[str, list[str]]]) -> list[str]:
    out: list[str] = []
    for i, line in enumerate(base):
        if i not in ops:
            out.append(line)
            continue
        op, fresh = ops[i]
        if op == "replace":
            out += fresh
        elif op == "insert":
            out += [*fresh, line]
        elif op == "modify":
            out.append(line[:1] + fresh[0])
    return out


@st.composite
def two_sided_changes(
    draw: st.DrawFn, *, disjoint: bool
) -> tuple[list[str], dict[int, tuple[str, list[str]]], dict[int, tuple[str, list[str]]]]:
    """Unique base lines and per side {base index: (op, fresh lines)}. Fresh lines occur
    nowhere else, so which lines each side changed is known. With `disjoint`, lines the
    two sides change are at least one unchanged line apart."""
    base = [b + draw(ends) for b in draw(st.lists(bodies, min_size=1, max_size=16, unique=True))]
    sides: tuple[dict[int, tuple[str, list[str]]], ...] = ({}, {})
    last_owner: int | None = None
    for i in range(len(base)):
        owner = draw(st.sampled_from([None, None, 0, 1]))
        if disjoint and owner is not None and last_owner not in (None, owner):
            owner = None  # would touch the other side's change: leave this line alone
        if owner is not None:
            tag = "ours" if owner == 0 else "theirs"
            fresh = [f"{tag}{i}.{k}" + draw(ends) for k in range(draw(st.integers(1, 2)))]
            sides[owner][i] = (draw(st.sampled_from(OPS)), fresh)
        last_owner = owner
    return base, sides[0], sides[1]


@FEWER
@given(change=two_sided_changes(disjoint=True))
def test_changes_in_disjoint_regions_are_all_kept(
    change: tuple[list[str], dict[int, tuple[str, list[str]]], dict[int, tuple[str, list[str]]]],
) -> None:
    base, ours_ops, theirs_ops = change
    ours, theirs = apply_ops(base, ours_ops), apply_ops(base, theirs_ops)
    both = apply_ops(base, {**ours_ops, **theirs_ops})
    result = merge3("".join(base), "".join(ours), "".join(theirs))
    assert result == MergeResult("".join(both), [])


@FEWER
@given(change=two_sided_changes(disjoint=False))
def test_a_merge_loses_nobodys_change_and_a_conflict_yields_no_text(
    change: tuple[list[str], dict[int, tuple[str, list[str]]], dict[int, tuple[str, list[str]]]],
) -> None:
    base, ours_ops, theirs_ops = change
    ours, theirs = apply_ops(base, ours_ops), apply_ops(base, theirs_ops)
    result = merge3("".join(base), "".join(ours), "".join(theirs))
    if result.text is None:
        assert result.conflicts
        line_count = len(split_lines("".join(ours))) + 1
        for first, last in result.conflicts:
            assert 1 <= first <= last <= line_count
        return
    assert result.conflicts == []
    merged = split_lines(result.text)
    assert merged == split_lines("".join(merged))
    # every line either side wrote is there, every base line either side removed is gone
    for side, ops in ((ours, ours_ops), (theirs, theirs_ops)):
        added = set(side) - set(base)
        assert added <= set(merged)
        removed = {base[i] for i, (op, _) in ops.items() if op != "insert"}
        assert not removed & set(merged)
    # and base lines neither side touched stay, in order
    untouched = [line for i, line in enumerate(base) if i not in ours_ops | theirs_ops]
    assert [line for line in merged if line in set(untouched)] == untouched
