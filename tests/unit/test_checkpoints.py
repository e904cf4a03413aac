"""Checkpoints (acp_lsp.session.checkpoints) and what a restore writes
(acp_lsp.editor.checkpoint_restore.plan_restore), on plain values."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_lsp.editor.checkpoint_restore import Overlap, Step, plan_restore
from acp_lsp.history.rewind import before_message
from acp_lsp.session.checkpoints import Checkpoints, mark_messages, stored_ordinals

A = b"one\ntwo\nthree\nfour\nfive\n"
B = A.replace(b"two", b"TWO")  # the agent's change


def test_a_file_as_the_turn_left_it_goes_back_exactly() -> None:
    assert plan_restore(B, [Step(A, B)]) == A
    assert plan_restore(b"new\n", [Step(None, b"new\n")]) is None  # created: removed
    assert plan_restore(None, [Step(A, None)]) == A  # deleted: back


def test_a_user_change_between_turns_is_kept() -> None:
    mine = B + b"six\n"  # the user's line after turn 1
    later = mine.replace(b"four", b"FOUR")  # turn 2 on top
    assert plan_restore(later, [Step(A, B), Step(mine, later)]) == A + b"six\n"


def test_an_overlap_leaves_the_file() -> None:
    with pytest.raises(Overlap, match="lines 2"):
        plan_restore(B.replace(b"TWO", b"Two!"), [Step(A, B)])
    with pytest.raises(Overlap, match="edited since the agent created it"):
        plan_restore(b"new\nmine\n", [Step(None, b"new\n")])
    with pytest.raises(Overlap, match="deleted since"):
        plan_restore(None, [Step(A, B)])


def test_a_change_already_rejected_is_not_undone_twice() -> None:
    assert plan_restore(A, [Step(A, B)]) == A
    assert plan_restore(None, [Step(None, b"new\n")]) is None


def test_bytes_that_are_not_text_go_back_when_untouched() -> None:
    old, new = b"\x89PNG\x00\xff", b"\x89PNG\x00\xfe"
    assert plan_restore(new, [Step(old, new)]) == old
    with pytest.raises(Overlap, match="not text"):
        plan_restore(b"\xff\xfe", [Step(old, new)])


@given(st.lists(st.sampled_from([b"a\n", b"b\n", b"c\n", None]), min_size=2, max_size=6))
def test_untouched_chains_always_come_back_to_the_start(texts: list[bytes | None]) -> None:
    steps = [Step(x, y) for x, y in itertools.pairwise(texts) if x != y]
    if steps:
        assert plan_restore(steps[-1].after, steps) == steps[0].before


def test_checkpoints_are_stored_and_marked_by_user_ordinal() -> None:
    checkpoints = Checkpoints()
    checkpoints.begin(0, "/w", "t0")
    checkpoints.end(0, "t1")
    checkpoints.begin(1, "/w", "t1")  # still running: not offered
    stored = checkpoints.json()
    assert stored == {
        "0": {"root": "/w", "before": "t0", "after": "t1"},
        "1": {"root": "/w", "before": "t1"},
    }
    again = Checkpoints()
    again.load({**stored, "x": 1, "2": {"root": 3}})  # malformed entries skipped
    assert again.json() == stored
    messages = [{"role": "user"}, {"role": "agent"}, {"role": "user"}]
    assert again.mark(messages) == [{"role": "user", "checkpoint": True}, *messages[1:]]
    assert mark_messages(messages, stored_ordinals(stored)) == again.mark(messages)
    assert again.until(1).json() == {"0": stored["0"]}
    assert [k for k, _ in again.since(1)] == [1]


def test_a_rewound_snapshot_ends_before_the_message() -> None:
    snapshot: dict[str, Any] = {
        "messages": [{"role": "user"}, {"role": "agent"}, {"role": "user"}, {"role": "agent"}],
        "toolCalls": [{"toolCallId": "a"}, {"toolCallId": "b"}],
        "timeline": [
            *({"message": 0}, {"toolCall": "a"}, {"message": 1}),
            *({"message": 2}, {"toolCall": "b"}, {"message": 3}),
        ],
    }
    cut = before_message(snapshot, 2)
    assert cut["messages"] == snapshot["messages"][:2]
    assert cut["toolCalls"] == [{"toolCallId": "a"}]
    assert cut["timeline"] == snapshot["timeline"][:3]
