"""Review of reported diffs: the reject rules (pure) and the manager's bookkeeping.

The rules are fed the exact shapes real agents send (reference/editor-clients.md §1):
claude-agent-acp's ``oldText: null`` Write over an existing file and snippet Edits,
write-then-report agents' full diffs, created files. The manager is driven through a real
Session and Sandbox with an in-memory stand-in for the editor's files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from acp_lsp.backends.base import BackendError
from acp_lsp.editor.review import ReviewManager
from acp_lsp.editor.review_rules import (
    Diff,
    Plan,
    apply_diffs,
    holds_change,
    overall_status,
    plan_reject,
    replace_once,
)
from acp_lsp.sandbox import Sandbox
from acp_lsp.session import Session

ORIGINAL = "def main():\n    print('hello')\n\nmain()\n"
EDITED = "def main():\n    print('hello, world')\n\nmain()\n"
OLD_SNIPPET = "    print('hello')\n"
NEW_SNIPPET = "    print('hello, world')\n"


def reject(diffs: list[Diff], snapshots: list[str | None], current: str | None, **kw: Any) -> Plan:
    return plan_reject("/ws/app.py", diffs, snapshots, current, **kw)


# -- the rules, case by case ------------------------------------------------------------------
class TestSnapshotTakenBeforeTheChange:
    def test_claude_write_with_null_old_text_over_an_existing_file_restores_it(self) -> None:
        plan = reject([Diff(None, EDITED)], [ORIGINAL], EDITED)
        assert plan == Plan("write", ORIGINAL)

    def test_claude_edit_snippet_restores_the_whole_file(self) -> None:
        plan = reject([Diff(OLD_SNIPPET, NEW_SNIPPET)], [ORIGINAL], EDITED)
        assert plan == Plan("write", ORIGINAL)

    def test_a_created_file_is_deleted(self) -> None:
        assert reject([Diff(None, "new file\n")], [None], "new file\n") == Plan("delete")

    def test_a_created_file_that_is_already_gone_needs_nothing(self) -> None:
        assert reject([Diff(None, "new file\n")], [None], None) == Plan("none")

    def test_a_created_file_the_user_then_edited_is_refused(self) -> None:
        plan = reject([Diff(None, "new file\n")], [None], "new file\nmine\n")
        assert plan.action == "refuse"
        assert plan.reason is not None
        assert "changed since" in plan.reason and "/ws/app.py" in plan.reason

    def test_a_change_that_never_happened_leaves_the_text_as_it_is(self) -> None:
        # e.g. the user rejected the permission: the file still reads as the snapshot
        assert reject([Diff(OLD_SNIPPET, NEW_SNIPPET)], [ORIGINAL], ORIGINAL) == Plan(
            "write", ORIGINAL
        )

    def test_user_lines_added_elsewhere_after_the_edit_survive(self) -> None:
        current = EDITED + "# the user's note\n"
        plan = reject([Diff(OLD_SNIPPET, NEW_SNIPPET)], [ORIGINAL], current)
        assert plan == Plan("write", ORIGINAL + "# the user's note\n")

    def test_the_user_changing_the_agents_lines_is_refused(self) -> None:
        current = EDITED.replace("hello, world", "hello, user")
        plan = reject([Diff(OLD_SNIPPET, NEW_SNIPPET)], [ORIGINAL], current)
        assert plan.action == "refuse"
        assert plan.reason is not None and "changed since" in plan.reason

    def test_a_file_deleted_since_is_refused(self) -> None:
        plan = reject([Diff(OLD_SNIPPET, NEW_SNIPPET)], [ORIGINAL], None)
        assert plan.action == "refuse"

    def test_a_deletion_snippet_restores_the_deleted_lines(self) -> None:
        old = "a = 1\nb = 2\n"
        before = "x = 0\na = 1\nb = 2\ny = 3\n"
        after = "x = 0\na = 1\ny = 3\n"
        assert reject([Diff(old, "a = 1\n")], [before], after) == Plan("write", before)
        assert reject([Diff(old, "")], [before], "x = 0\ny = 3\n") == Plan("write", before)

    def test_the_first_snapshot_that_predates_the_change_is_used(self) -> None:
        # the call's own sighting came after the write; the turn's snapshot came before
        plan = reject([Diff(ORIGINAL, EDITED)], [EDITED, ORIGINAL], EDITED)
        assert plan == Plan("write", ORIGINAL)


class TestNoSnapshotBeforeTheChange:
    def test_full_diff_reported_after_the_write_restores_old_text(self) -> None:
        assert reject([Diff(ORIGINAL, EDITED)], [EDITED], EDITED) == Plan("write", ORIGINAL)
        assert reject([Diff(ORIGINAL, EDITED)], [], EDITED) == Plan("write", ORIGINAL)

    def test_snippet_found_once_is_replaced_back_keeping_other_changes(self) -> None:
        current = "# user\n" + EDITED
        plan = reject([Diff(OLD_SNIPPET, NEW_SNIPPET)], [EDITED], current)
        assert plan == Plan("write", "# user\n" + ORIGINAL)

    def test_snippet_found_twice_is_refused(self) -> None:
        current = EDITED + NEW_SNIPPET
        plan = reject([Diff(OLD_SNIPPET, NEW_SNIPPET)], [], current)
        assert plan.action == "refuse"
        assert plan.reason is not None and "changed since" in plan.reason

    def test_snippet_no_longer_there_is_refused(self) -> None:
        plan = reject([Diff(OLD_SNIPPET, NEW_SNIPPET)], [EDITED], ORIGINAL.upper())
        assert plan.action == "refuse"

    def test_an_insertion_reported_after_the_write_is_taken_out(self) -> None:
        # newText contains oldText: the after-snapshot holds both
        old, new = "import os\n", "import os\nimport sys\n"
        after = "import os\nimport sys\n\nos.getcwd()\n"
        # reads the same from both sides: the completed tool call says it was made
        plan = reject([Diff(old, new)], [after], after, made=True)
        assert plan == Plan("write", "import os\n\nos.getcwd()\n")
        plan = reject([Diff(old, new)], [after], after, made=False)
        assert plan == Plan("write", after)
        plan = reject([Diff(old, new)], [after], after)
        assert plan.action == "refuse"
        assert plan.reason is not None and "cannot tell" in plan.reason and "app.py" in plan.reason

    def test_a_deletion_that_was_never_made_is_left_alone(self) -> None:
        # permission denied: the file still holds both the old and the new snippet
        before = "x = 0\na = 1\nb = 2\ny = 3\n"
        diff = Diff("a = 1\nb = 2\n", "a = 1\n")
        assert reject([diff], [before], before, made=False) == Plan("write", before)
        assert reject([diff], [before], before).action == "refuse"

    def test_a_created_file_reported_after_the_write_is_deleted(self) -> None:
        assert reject([Diff(None, "made\n")], ["made\n"], "made\n") == Plan("delete")

    def test_null_old_text_over_a_file_that_existed_before_is_refused(self) -> None:
        plan = reject([Diff(None, "made\n")], ["made\n"], "made\n", existed_before=True)
        assert plan.action == "refuse"
        assert plan.reason is not None and "did not report" in plan.reason

    def test_null_old_text_with_other_current_text_is_refused(self) -> None:
        assert reject([Diff(None, "made\n")], ["made\n"], "made\nmore\n").action == "refuse"


class TestSeveralChangesToOneFile:
    FIRST = Diff("    print('hello')\n", "    print('hi')\n")
    SECOND = Diff("main()\n", "main()\nmain()\n")
    AFTER_FIRST = ORIGINAL.replace("hello", "hi")

    def after_both(self) -> str:
        text = apply_diffs(self.AFTER_FIRST, [self.SECOND])
        assert isinstance(text, str)
        return text

    def test_rejecting_the_whole_turn_restores_the_earliest_snapshot(self) -> None:
        plan = reject([self.FIRST, self.SECOND], [ORIGINAL], self.after_both())
        assert plan == Plan("write", ORIGINAL)

    def test_rejecting_per_call_in_reverse_order(self) -> None:
        current = self.after_both()
        second = reject([self.SECOND], [self.AFTER_FIRST], current)
        assert second == Plan("write", self.AFTER_FIRST)
        first = reject([self.FIRST], [ORIGINAL], self.AFTER_FIRST)
        assert first == Plan("write", ORIGINAL)

    def test_rejecting_the_earlier_call_first_keeps_the_later_change(self) -> None:
        plan = reject([self.FIRST], [ORIGINAL], self.after_both())
        expected = apply_diffs(ORIGINAL, [self.SECOND])
        assert isinstance(expected, str)
        assert plan == Plan("write", expected)
        later = reject([self.SECOND], [self.AFTER_FIRST], plan.text)
        assert later == Plan("write", ORIGINAL)

    def test_undoing_from_diffs_alone_goes_last_first(self) -> None:
        plan = reject([self.FIRST, self.SECOND], [], self.after_both())
        assert plan == Plan("write", ORIGINAL)


def test_holds_change_tells_before_from_after() -> None:
    assert not holds_change(ORIGINAL, Diff(None, EDITED))
    assert holds_change(EDITED, Diff(None, EDITED))
    assert not holds_change(None, Diff(None, EDITED))
    assert holds_change(None, Diff(OLD_SNIPPET, NEW_SNIPPET))
    assert not holds_change(ORIGINAL, Diff(OLD_SNIPPET, NEW_SNIPPET))
    assert holds_change(EDITED, Diff(OLD_SNIPPET, NEW_SNIPPET))
    assert not holds_change("a\nb\n", Diff("a\nb\n", "a\n"))  # deletion-like, before
    assert holds_change("a\n", Diff("a\nb\n", "a\n"))  # deletion-like, after


def test_overall_status() -> None:
    assert overall_status(["pending", "accepted"]) == "pending"
    assert overall_status(["failed", "accepted"]) == "failed"
    assert overall_status(["accepted", "accepted"]) == "accepted"
    assert overall_status(["rejected"]) == "rejected"
    assert overall_status(["accepted", "rejected"]) == "mixed"


# -- properties -------------------------------------------------------------------------------
lines = st.lists(st.sampled_from(["a", "b", "c", "x = 1", "", "def f():", "  pass"]), max_size=12)
texts = lines.map(lambda ls: "".join(f"{line}\n" for line in ls))


@st.composite
def snippet_edits(draw: st.DrawFn) -> tuple[str, Diff, str]:
    """A text, an Edit of a snippet that occurs in it exactly once, and the edited text."""
    before = draw(texts)
    assume(before)
    start = draw(st.integers(0, len(before) - 1))
    end = draw(st.integers(start + 1, len(before)))
    old = before[start:end]
    assume(replace_once(before, old, old) is not None)  # occurs exactly once
    new = draw(texts)
    assume(new != old)
    after = replace_once(before, old, new)
    assert after is not None
    return before, Diff(old, new), after


@given(snippet_edits())
def test_a_reject_with_a_snapshot_taken_before_an_edit_gives_it_back(
    case: tuple[str, Diff, str],
) -> None:
    before, diff, after = case
    plan = plan_reject("/f", [diff], [before], after)
    assert plan == Plan("write", before)


@given(snippet_edits())
def test_a_reject_after_a_reported_edit_restores_or_refuses_never_invents(
    case: tuple[str, Diff, str],
) -> None:
    """A write-then-report agent: the only snapshot is of the edited text."""
    before, diff, after = case
    plan = plan_reject("/f", [diff], [after], after, made=True)
    assert plan.action in ("write", "refuse")
    if plan.action == "write":
        assert plan.text == before
    assert diff.old is not None
    if replace_once(after, diff.new, diff.old) is not None and holds_change(after, diff):
        assert plan == Plan("write", before)


@given(snippet_edits(), st.sampled_from([None, False]))
def test_rejecting_an_edit_that_was_never_made_changes_nothing(
    case: tuple[str, Diff, str], made: bool | None
) -> None:
    """Permission denied or the tool failed: the file still reads as the snapshot."""
    before, diff, _after = case
    plan = plan_reject("/f", [diff], [before], before, made=made)
    if made is False:
        assert plan == Plan("write", before)
    else:
        assert plan == Plan("write", before) or plan.action == "refuse"


@given(texts, texts)
def test_full_diffs_undo_from_the_current_text(old: str, new: str) -> None:
    assume(old != new)
    assert plan_reject("/f", [Diff(old, new)], [], new) == Plan("write", old)
    assert plan_reject("/f", [Diff(None, new)], [old], new) == Plan("write", old)


@given(texts, texts, texts)
def test_user_text_added_at_the_end_survives_a_reject(before: str, after: str, mine: str) -> None:
    assume(before != after)
    current = after + "# mine\n" + mine
    plan = plan_reject("/f", [Diff(None, after)], [before], current)
    if plan.action == "write":
        assert plan.text is not None and plan.text.endswith("# mine\n" + mine)
    else:
        assert plan.action == "refuse"


# -- the manager, through a real Session ------------------------------------------------------
class FakeFiles:
    """The editor's files as the review manager sees them: texts by real path."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self.restored: list[tuple[str, str]] = []
        self.deleted: list[str] = []

    def current_text(self, path: str) -> str | None:
        return self.texts.get(path)

    async def restore(self, path: str, text: str, label: str) -> None:
        self.texts[path] = text
        self.restored.append((path, text))

    async def delete(self, path: str, label: str) -> None:
        self.texts.pop(path, None)
        self.deleted.append(path)


class Harness:
    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self.files = FakeFiles()
        self.session = Session("s1", "claude", self.root)
        self.published: list[dict[str, Any]] = []
        self.manager = ReviewManager(
            self.files,  # type: ignore[arg-type]
            self.publish,
            lambda _s: Sandbox([self.root]),
        )

    def publish(self, session: Session, updates: list[dict[str, Any]]) -> None:
        self.published.extend(updates)

    def path(self, name: str) -> str:
        return os.path.join(self.root, name)

    def agent(self, update: dict[str, Any]) -> dict[str, Any]:
        """What the ACP backend and EditorSide.publish do with a tool-call update."""
        for loc in update.get("locations") or []:
            self.manager.note_path(self.session, loc["path"], loc["path"])
        for item in update.get("content") or []:
            if item.get("type") == "diff":
                self.manager.note_path(self.session, item["path"], item["path"])
        out = self.session.apply_update(update)
        for u in out:
            self.manager.on_tool_call(self.session, u["toolCall"])
        state: dict[str, Any] = out[-1]["toolCall"]
        return state

    def review_of(self, tool_call_id: str) -> Any:
        state = self.session.tool_call(tool_call_id)
        assert state is not None
        return state.get("review")


def diff(path: str, old: str | None, new: str) -> dict[str, Any]:
    return {"type": "diff", "path": path, "oldText": old, "newText": new}


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    return Harness(tmp_path)


async def test_claude_write_then_reject_restores_and_marks_the_call(h: Harness) -> None:
    path = h.path("app.py")
    h.files.texts[path] = ORIGINAL
    h.manager.turn_started(h.session)
    sent = h.agent(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "w1",
            "title": "Write app.py",
            "kind": "edit",
            "locations": [{"path": path}],
            "content": [diff(path, None, EDITED)],
        }
    )
    # the update the editor gets carries the review, in the same update
    # … with the one hunk of the change: line 2 replaced
    hunk: dict[str, object] = {"index": 0, "oldStart": 2, "oldLines": 1, "newStart": 2}
    hunk |= {"newLines": 1, "oldText": "    print('hello')\n"}  # oldText: shown as removed
    assert sent["review"] == {
        "status": "pending",
        "files": [{"path": path, "status": "pending", "hunks": [{**hunk, "status": "pending"}]}],
    }
    h.files.texts[path] = EDITED  # the agent writes the disk itself
    h.agent({"sessionUpdate": "tool_call_update", "toolCallId": "w1", "status": "completed"})

    result = await h.manager.decide.review(h.session, "reject", "w1", None)

    assert result == {"applied": True, "files": [{"path": path, "status": "rejected"}]}
    assert h.files.texts[path] == ORIGINAL
    assert h.review_of("w1")["status"] == "rejected"
    assert h.published[-1]["toolCall"]["review"]["files"][0]["status"] == "rejected"


async def test_write_then_report_sighting_falls_back_to_the_turns_snapshot(h: Harness) -> None:
    path = h.path("app.py")
    h.files.texts[path] = ORIGINAL
    h.manager.turn_started(h.session)
    h.manager.note_path(h.session, path, path)  # e.g. fs/read_text_file
    h.files.texts[path] = EDITED  # the agent writes, then reports a snippet
    h.agent(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "e1",
            "status": "completed",
            "content": [diff(path, OLD_SNIPPET, NEW_SNIPPET)],
        }
    )
    result = await h.manager.decide.review(h.session, "reject", None, None)
    assert result["applied"] is True
    assert h.files.texts[path] == ORIGINAL


async def test_the_last_turn_only_and_each_change_once(h: Harness) -> None:
    a, b = h.path("a.py"), h.path("b.py")
    h.files.texts[a] = "a\n"
    h.manager.turn_started(h.session)
    h.agent({"sessionUpdate": "tool_call", "toolCallId": "t1", "content": [diff(a, None, "A\n")]})
    h.files.texts[a] = "A\n"
    h.manager.turn_started(h.session)
    h.agent({"sessionUpdate": "tool_call", "toolCallId": "t2", "content": [diff(b, None, "B\n")]})
    h.files.texts[b] = "B\n"

    result = await h.manager.decide.review(h.session, "reject", None, None)
    assert result == {"applied": True, "files": [{"path": b, "status": "rejected"}]}
    assert b not in h.files.texts and h.files.texts[a] == "A\n"
    # nothing left to review in the last turn
    assert await h.manager.decide.review(h.session, "reject", None, None) == {
        "applied": False,
        "files": [],
    }
    # the earlier turn's call is still reviewable by id
    result = await h.manager.decide.review(h.session, "accept", "t1", None)
    assert result == {"applied": True, "files": [{"path": a, "status": "accepted"}]}
    again = await h.manager.decide.review(h.session, "reject", "t1", None)
    assert again["applied"] is False
    assert again["files"] == [{"path": a, "status": "accepted", "message": "already accepted"}]
    assert h.files.texts[a] == "A\n"


async def test_per_file_review_of_a_multi_file_call(h: Harness) -> None:
    a, b = h.path("a.py"), h.path("b.py")
    h.files.texts.update({a: "a\n", b: "b\n"})
    h.manager.turn_started(h.session)
    h.agent(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "m1",
            "content": [diff(a, "a\n", "A\n"), diff(b, "b\n", "B\n")],
        }
    )
    h.files.texts.update({a: "A\n", b: "B\n"})
    result = await h.manager.decide.review(h.session, "reject", "m1", b)
    assert result == {"applied": True, "files": [{"path": b, "status": "rejected"}]}
    one_line = {"index": 0, "oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1}
    assert h.review_of("m1") == {
        "status": "pending",
        "files": [
            {
                "path": a,
                "status": "pending",
                "hunks": [{**one_line, "status": "pending", "oldText": "a\n"}],
            },
            # the file's hunks follow its decision
            {
                "path": b,
                "status": "rejected",
                "hunks": [{**one_line, "status": "rejected", "oldText": "b\n"}],
            },
        ],
    }
    await h.manager.decide.review(h.session, "accept", "m1", None)
    assert h.review_of("m1")["status"] == "mixed"
    assert h.files.texts == {a: "A\n", b: "b\n"}


async def test_a_refused_reject_fails_the_file_and_may_be_retried(h: Harness) -> None:
    path = h.path("app.py")
    h.files.texts[path] = ORIGINAL
    h.manager.turn_started(h.session)
    h.agent(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "e1",
            "content": [diff(path, OLD_SNIPPET, NEW_SNIPPET)],
        }
    )
    h.files.texts[path] = EDITED.replace("world", "user")  # the user rewrote the agent's line
    result = await h.manager.decide.review(h.session, "reject", "e1", None)
    assert result["applied"] is False
    (file,) = result["files"]
    assert file["status"] == "failed"
    assert "changed since" in file["message"] and path in file["message"]
    assert h.files.texts[path] == EDITED.replace("world", "user")
    assert h.review_of("e1")["status"] == "failed"
    # the user puts the agent's line back; the reject now goes through
    h.files.texts[path] = EDITED
    result = await h.manager.decide.review(h.session, "reject", None, None)
    assert result["applied"] is True and h.files.texts[path] == ORIGINAL


async def test_unknown_tool_call_and_path_are_invalid_params(h: Harness) -> None:
    path = h.path("app.py")
    h.files.texts[path] = ORIGINAL
    h.manager.turn_started(h.session)
    h.agent(
        {"sessionUpdate": "tool_call", "toolCallId": "e1", "content": [diff(path, None, EDITED)]}
    )
    h.agent({"sessionUpdate": "tool_call", "toolCallId": "plain", "title": "think"})
    with pytest.raises(BackendError) as err:
        await h.manager.decide.review(h.session, "accept", "nope", None)
    assert err.value.code == -32602 and "nope" in err.value.message
    with pytest.raises(BackendError) as err:
        await h.manager.decide.review(h.session, "accept", "e1", h.path("other.py"))
    assert err.value.code == -32602 and "other.py" in err.value.message
    with pytest.raises(BackendError) as err:
        await h.manager.decide.review(h.session, "reject", None, h.path("other.py"))
    assert err.value.code == -32602 and "other.py" in err.value.message
    # a known call that changed nothing has nothing to review
    assert await h.manager.decide.review(h.session, "accept", "plain", None) == {
        "applied": False,
        "files": [],
    }


async def test_diffs_outside_the_workspace_are_not_reviewable(h: Harness) -> None:
    h.manager.turn_started(h.session)
    h.agent(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "x",
            "content": [diff("/etc/passwd", None, "x")],
        }
    )
    review = h.review_of("x")
    assert review["status"] == "failed"
    assert "outside the workspace" in review["files"][0]["message"]


async def test_history_before_any_turn_is_not_reviewable(h: Harness) -> None:
    path = h.path("app.py")
    h.agent(
        {"sessionUpdate": "tool_call", "toolCallId": "old", "content": [diff(path, None, EDITED)]}
    )
    assert h.review_of("old") is None
