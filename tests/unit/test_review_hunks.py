"""The hunks of a reviewed change and undoing some of them (acp_lsp/editor/review_hunks.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from acp_lsp.editor.review_hunks import (
    Hunk,
    exact_texts,
    file_status,
    hunks_of,
    plan_hunks_reject,
    put_back,
)
from acp_lsp.editor.review_rules import Diff

BEFORE = "".join(f"line {n}\n" for n in range(1, 11))
# line 2 changed, a line added after 5, line 9 removed
AFTER = (
    BEFORE.replace("line 2\n", "LINE TWO\n")
    .replace("line 5\n", "line 5\nnew line\n")
    .replace("line 9\n", "")
)


def spans(hunks: list[Hunk]) -> list[tuple[int, int, int, int]]:
    return [(h.old_start, h.old_lines, h.new_start, h.new_lines) for h in hunks]


def test_hunks_are_the_runs_of_changed_lines_numbered_as_in_a_unified_diff() -> None:
    hunks = hunks_of(BEFORE, AFTER)
    assert [h.index for h in hunks] == [0, 1, 2]
    # a change, an insertion after line 5 (empty old side names the line before), a deletion
    assert spans(hunks) == [(2, 1, 2, 1), (5, 0, 6, 1), (9, 1, 9, 0)]
    assert [h.lines() for h in hunks] == ["line 2", "line 6", "after line 9"]
    assert {h.status for h in hunks} == {"pending"}


def test_each_hunk_goes_back_alone() -> None:
    hunks = hunks_of(BEFORE, AFTER)
    assert put_back(BEFORE, AFTER, [hunks[0]]) == AFTER.replace("LINE TWO\n", "line 2\n")
    assert put_back(BEFORE, AFTER, [hunks[1]]) == AFTER.replace("new line\n", "")
    assert put_back(BEFORE, AFTER, [hunks[2]]) == AFTER.replace("line 10\n", "line 9\nline 10\n")
    assert put_back(BEFORE, AFTER, hunks) == BEFORE
    assert put_back(BEFORE, AFTER, []) == AFTER


lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n", "e"]), max_size=12)


@given(lines, lines)
def test_putting_every_hunk_back_gives_the_old_text(old: list[str], new: list[str]) -> None:
    before, after = "".join(old), "".join(new)
    hunks = hunks_of(before, after)
    assert put_back(before, after, hunks) == before
    # and any one hunk put back, then the others onto that, ends there too
    for hunk in hunks:
        once = put_back(before, after, [hunk])
        rest = [h for h in hunks if h is not hunk]
        assert plan_hunks_reject("f", before, after, rest, once).text == before


def test_a_reject_keeps_the_users_lines_elsewhere() -> None:
    hunks = hunks_of(BEFORE, AFTER)
    current = AFTER + "# the user's line\n"
    plan = plan_hunks_reject("app.py", BEFORE, AFTER, [hunks[0]], current)
    assert plan.action == "write"
    assert plan.text == put_back(BEFORE, AFTER, [hunks[0]]) + "# the user's line\n"


def test_a_reject_over_the_users_edit_of_the_same_lines_is_refused_naming_them() -> None:
    hunks = hunks_of(BEFORE, AFTER)
    current = AFTER.replace("LINE TWO\n", "LINE TWO, as the user wants it\n")
    plan = plan_hunks_reject("app.py", BEFORE, AFTER, [hunks[0]], current)
    assert plan.action == "refuse"
    assert plan.reason is not None and "app.py changed at line 2" in plan.reason
    # the other hunks do not touch the user's line
    assert plan_hunks_reject("app.py", BEFORE, AFTER, [hunks[1]], current).action == "write"


def test_a_deleted_file_is_not_written_back_by_a_hunk() -> None:
    hunks = hunks_of(BEFORE, AFTER)
    plan = plan_hunks_reject("app.py", BEFORE, AFTER, [hunks[0]], None)
    assert plan.action == "refuse" and "deleted since" in (plan.reason or "")


def test_exact_texts_need_a_snapshot_from_before_the_change() -> None:
    whole = [Diff(BEFORE, AFTER)]
    assert exact_texts([BEFORE], whole) == (BEFORE, AFTER)
    snippet = [Diff("line 2\n", "LINE TWO\n")]
    assert exact_texts([BEFORE], snippet) == (BEFORE, BEFORE.replace("line 2\n", "LINE TWO\n"))
    # a snapshot taken after the change, a created file, nothing reported
    assert exact_texts([BEFORE.replace("line 2\n", "LINE TWO\n")], snippet) is None
    assert exact_texts([None], [Diff(None, "new\n")]) is None
    assert exact_texts([BEFORE], []) is None


def test_file_status_from_its_hunks() -> None:
    def of(*statuses: str) -> str:
        return file_status([Hunk(i, 1, 1, 1, 1, s) for i, s in enumerate(statuses)])

    assert of("pending", "accepted") == "pending"
    assert of("accepted", "accepted") == "accepted"
    assert of("rejected", "rejected") == "rejected"
    assert of("accepted", "rejected") == "mixed"
    assert of("failed", "accepted") == "failed"
