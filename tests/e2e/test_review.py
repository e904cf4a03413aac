"""Reviewable diffs end to end: ``toolCall.review`` and ``acp/reviewEdit`` (DESIGN §2, §3).

The real server, a scripted LSP editor (VS Code and Neovim capability profiles) and agents
sending the shapes real ones send (reference/editor-clients.md §1): claude-agent-acp's
Write with ``oldText: null`` over a file it already wrote, its Edit snippets, write-then-
report full diffs, created files, and the demo agent's ``fs/write_text_file`` edits.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from acp_lsp import protocol as p
from tests.e2e.conftest import PROFILES, scripted_agent, start_editor, with_fast_demo
from tests.support.lsp_editor import TestEditor
from tests.support.review_script import (
    claude_edit,
    claude_write,
    read,
    review,
    run_turn,
    shown_review,
    turns,
    write_then_report,
)

pytestmark = pytest.mark.timeout(60)

JsonObject = dict[str, Any]
Launch = Callable[..., Awaitable[TestEditor]]

APP = "src/app.py"
UTIL = "src/util.py"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Both editor profiles where they make a difference (edit shapes, saving, deleting);
    rule-level cases marked ``one_profile`` run once (each run starts a server)."""
    if "profile" in metafunc.fixturenames:
        one = getattr(metafunc.function, "one_profile", False)
        metafunc.parametrize("profile", PROFILES[:1] if one else PROFILES)


F = TypeVar("F", bound=Callable[..., Any])


def one_profile(test: F) -> F:
    test.one_profile = True  # type: ignore[attr-defined]
    return test


@pytest.fixture
async def launch(profile: str, tmp_path: Path, workspace: Path) -> AsyncIterator[Launch]:
    """Start the editor on the workspace with a scripted agent (or the demo) as default."""
    editors: list[TestEditor] = []

    async def start(script: JsonObject | None = None, *, rich: bool = True) -> TestEditor:
        options: JsonObject = {}
        if script is not None:
            options = scripted_agent(script, tmp_path)
        editor = await start_editor(
            tmp_path, workspace, profile, with_fast_demo(options), rich=rich
        )
        editors.append(editor)
        return editor

    yield start
    for editor in editors:
        await editor.shutdown_session()
        assert not editor.schema_errors, "\n".join(editor.schema_errors)


def edit_snippet(text: str) -> tuple[str, str, str]:
    """A claude-style Edit of the file's first line: (old_string, new_string, new file)."""
    first = text.splitlines(keepends=True)[0]
    new = first.replace("demo", "reviewed demo")
    assert new != first and text.count(first) == 1
    return first, new, text.replace(first, new, 1)


# -- the shapes real agents send -----------------------------------------------------------------
async def test_claude_write_with_null_old_text_over_an_existing_file(
    launch: Launch, workspace: Path
) -> None:
    original = read(workspace, APP)
    editor = await launch(turns(claude_write("w1", APP, "print('rewritten')\n")))
    sid = await run_turn(editor)
    assert read(workspace, APP) == "print('rewritten')\n"
    path = str(workspace / APP)
    # the bridge saw the change on disk too: it says what kind it was; all 20 lines became one
    whole: dict[str, object] = {"index": 0, "oldStart": 1, "oldLines": 20, "newStart": 1}
    whole |= {"newLines": 1, "oldText": original}  # oldText: what it replaced, for the editor
    assert await shown_review(editor, sid, "w1") == {
        "status": "pending",
        "files": [
            {
                "path": path,
                "status": "pending",
                "change": "modified",
                "hunks": [{**whole, "status": "pending"}],
            }
        ],
    }

    result = await review(editor, sid, "reject", toolCallId="w1")

    assert result == {"applied": True, "files": [{"path": path, "status": "rejected"}]}
    assert read(workspace, APP) == original
    assert (await shown_review(editor, sid, "w1"))["status"] == "rejected"


@one_profile
async def test_claude_edit_snippet_rejected_per_file(launch: Launch, workspace: Path) -> None:
    original = read(workspace, APP)
    old, new, after = edit_snippet(original)
    editor = await launch(turns(claude_edit("e1", APP, old, new, after)))
    sid = await run_turn(editor)
    assert read(workspace, APP) == after
    assert editor.permission_requests, "the edit asked for permission"

    result = await review(editor, sid, "reject", toolCallId="e1", path=str(workspace / APP))

    assert result["applied"] is True
    assert read(workspace, APP) == original


@one_profile
async def test_write_then_report_full_diff_restores_old_text(
    launch: Launch, workspace: Path
) -> None:
    original = read(workspace, UTIL)
    changed = original + "\n\ndef added() -> None:\n    pass\n"
    editor = await launch(turns(write_then_report("r1", UTIL, original, changed)))
    sid = await run_turn(editor)
    assert read(workspace, UTIL) == changed

    result = await review(editor, sid, "reject")

    assert result == {
        "applied": True,
        "files": [{"path": str(workspace / UTIL), "status": "rejected"}],
    }
    assert read(workspace, UTIL) == original


async def test_a_created_file_is_deleted_on_reject(launch: Launch, workspace: Path) -> None:
    created = workspace / "src" / "new_module.py"
    editor = await launch(
        turns(
            claude_write("c1", "src/new_module.py", "VALUE = 1\n"),
            write_then_report("c2", "src/other_new.py", None, "OTHER = 2\n"),
        )
    )
    sid = await run_turn(editor)
    assert created.read_text(encoding="utf-8") == "VALUE = 1\n"

    result = await review(editor, sid, "reject")

    assert result == {"applied": True, "files": [{"path": str(created), "status": "rejected"}]}
    assert not created.exists()
    if editor.applied_edits:  # VS Code takes a DeleteFile; Neovim's profile has no documentChanges
        changes = editor.applied_edits[-1].edit.document_changes or []
        assert any(isinstance(c, types.DeleteFile) for c in changes)
    # a write-then-report creation (the first sight is after the write) is deleted too
    await run_turn(editor, sid=sid)
    other = workspace / "src" / "other_new.py"
    assert other.exists()
    result = await review(editor, sid, "reject", toolCallId="c2")
    assert result["applied"] is True and not other.exists()


@one_profile
async def test_null_old_text_over_a_file_from_an_earlier_turn_is_not_deleted(
    launch: Launch, workspace: Path
) -> None:
    """Written and reported with null in a later turn, with nothing naming it first: the
    report alone cannot restore it, but the bridge's disk snapshot before the tool call can;
    a file that existed is never deleted."""
    editor = await launch(
        turns(
            write_then_report("t1", "notes.txt", None, "first\n"),
            write_then_report("t2", "notes.txt", None, "second\n"),
        )
    )
    sid = await run_turn(editor)
    await run_turn(editor, sid=sid)

    result = await review(editor, sid, "reject")

    (file,) = result["files"]
    assert result["applied"] is True and file["status"] == "rejected"
    assert read(workspace, "notes.txt") == "first\n"


async def test_a_file_the_user_changed_since_keeps_their_text(
    launch: Launch, workspace: Path
) -> None:
    """The user rewrote the agent's line in the buffer (unsaved): the reject restores the disk
    (the agent's change was made there) and leaves the user's buffer as they wrote it."""
    original = read(workspace, APP)
    old, new, after = edit_snippet(original)
    editor = await launch(turns(claude_edit("e1", APP, old, new, after)))
    sid = await run_turn(editor)
    mine = after.replace("reviewed demo", "my own words")
    editor.open(workspace / APP, after)
    editor.type_text(workspace / APP, mine)
    edits_before = len(editor.applied_edits)

    result = await review(editor, sid, "reject", toolCallId="e1")

    assert result["applied"] is True
    assert read(workspace, APP) == original
    assert editor.doc(workspace / APP).text == mine
    assert len(editor.applied_edits) == edits_before, "the user's line was not touched"
    conflicts = [
        doc
        for method, params in editor.notifications
        if method == p.ACP_DOCUMENTS_SYNCED
        for doc in params["documents"]
        if doc.get("conflict")
    ]
    assert [c["uri"] for c in conflicts] == [editor.doc(workspace / APP).uri]
    assert (await shown_review(editor, sid, "e1"))["status"] == "rejected"


async def test_user_lines_added_elsewhere_survive_a_reject(launch: Launch, workspace: Path) -> None:
    original = read(workspace, APP)
    old, new, after = edit_snippet(original)
    editor = await launch(turns(claude_edit("e1", APP, old, new, after)))
    sid = await run_turn(editor)
    editor.open(workspace / APP, after)
    editor.type_text(workspace / APP, after + "# the user's line\n")

    result = await review(editor, sid, "reject")

    assert result["applied"] is True
    assert editor.doc(workspace / APP).text == original + "# the user's line\n"


# -- the demo agent's fs/write_text_file edit ------------------------------------------------------
async def test_demo_fs_write_rejected_with_unsaved_user_text(
    launch: Launch, workspace: Path
) -> None:
    editor = await launch()
    path = workspace / APP
    disk = read(workspace, APP)
    # the user has unsaved text in the open buffer before the agent starts …
    editor.open(path, disk)
    before = disk + "# unsaved, before the agent\n"
    editor.type_text(path, before)
    sid = await run_turn(editor, f"/edit {APP}")
    agent_text = editor.doc(path).text
    assert "acp-lsp demo: reviewed in turn 1" in agent_text
    assert "# unsaved, before the agent\n" in agent_text
    # … and types more after the agent's edit
    editor.type_text(path, agent_text + "# typed after the agent\n")
    (edit_call,) = [i for i in editor.sessions[sid].tool_calls if i.endswith("-edit")]

    result = await review(editor, sid, "reject")

    assert result == {"applied": True, "files": [{"path": str(path), "status": "rejected"}]}
    assert editor.doc(path).text == before + "# typed after the agent\n"
    assert (await shown_review(editor, sid, edit_call))["status"] == "rejected"
    assert read(workspace, APP) == editor.doc(path).text  # saved, as writes are


@one_profile
async def test_demo_fs_write_rejected_without_a_buffer_or_save(
    launch: Launch, workspace: Path
) -> None:
    """An editor without saveDocument and no buffer open: writes and restores go to disk."""
    editor = await launch(rich=False)
    original = read(workspace, APP)
    sid = await run_turn(editor, f"/edit {APP}")
    assert "acp-lsp demo: reviewed in turn 1" in read(workspace, APP)

    result = await review(editor, sid, "reject")

    assert result["applied"] is True
    assert read(workspace, APP) == original


# -- per tool call, per file, the whole last turn ----------------------------------------------------
def two_edits_and_a_write(app: str, util: str) -> list[JsonObject]:
    first_old, first_new, after_first = edit_snippet(app)
    second_old = "def main"
    assert after_first.count(second_old) == 1
    after_second = after_first.replace(second_old, "def run_main", 1)
    return [
        *claude_edit("e1", APP, first_old, first_new, after_first),
        *claude_edit("e2", APP, second_old, "def run_main", after_second),
        *claude_write("w3", UTIL, util + "# appended\n"),
    ]


async def test_rejecting_the_whole_last_turn(launch: Launch, workspace: Path) -> None:
    app, util = read(workspace, APP), read(workspace, UTIL)
    editor = await launch(turns(two_edits_and_a_write(app, util)))
    sid = await run_turn(editor)
    assert read(workspace, APP) != app and read(workspace, UTIL) != util

    result = await review(editor, sid, "reject")

    assert result == {
        "applied": True,
        "files": [
            {"path": str(workspace / APP), "status": "rejected"},
            {"path": str(workspace / UTIL), "status": "rejected"},
        ],
    }
    assert read(workspace, APP) == app and read(workspace, UTIL) == util
    for call in ("e1", "e2", "w3"):
        assert (await shown_review(editor, sid, call))["status"] == "rejected"
    assert await review(editor, sid, "reject") == {"applied": False, "files": []}


@one_profile
async def test_rejecting_per_tool_call_in_reverse_order(launch: Launch, workspace: Path) -> None:
    app, util = read(workspace, APP), read(workspace, UTIL)
    editor = await launch(turns(two_edits_and_a_write(app, util)))
    sid = await run_turn(editor)
    _, _, after_first = edit_snippet(app)

    assert (await review(editor, sid, "reject", toolCallId="e2"))["applied"] is True
    assert read(workspace, APP) == after_first
    assert (await review(editor, sid, "reject", toolCallId="e1"))["applied"] is True
    assert read(workspace, APP) == app
    # the Write is untouched until it is reviewed; accepting keeps it
    assert read(workspace, UTIL) == util + "# appended\n"
    result = await review(editor, sid, "accept")
    assert result == {
        "applied": True,
        "files": [{"path": str(workspace / UTIL), "status": "accepted"}],
    }
    assert read(workspace, UTIL) == util + "# appended\n"
    assert (await shown_review(editor, sid, "w3"))["status"] == "accepted"


@one_profile
async def test_only_the_last_turn_is_reviewed_without_a_tool_call_id(
    launch: Launch, workspace: Path
) -> None:
    app, util = read(workspace, APP), read(workspace, UTIL)
    old, new, after = edit_snippet(app)
    editor = await launch(
        turns(claude_edit("e1", APP, old, new, after), claude_write("w2", UTIL, "x = 1\n"))
    )
    sid = await run_turn(editor)
    await run_turn(editor, sid=sid)

    result = await review(editor, sid, "reject")

    assert [f["path"] for f in result["files"]] == [str(workspace / UTIL)]
    assert read(workspace, UTIL) == util and read(workspace, APP) == after
    # the earlier turn's call is still there by id
    assert (await review(editor, sid, "reject", toolCallId="e1"))["applied"] is True
    assert read(workspace, APP) == app


@one_profile
async def test_bad_targets_are_invalid_params(launch: Launch, workspace: Path) -> None:
    app = read(workspace, APP)
    old, new, after = edit_snippet(app)
    editor = await launch(turns(claude_edit("e1", APP, old, new, after)))
    sid = await run_turn(editor)
    for target, named in [
        ({"toolCallId": "ghost"}, "ghost"),
        ({"toolCallId": "e1", "path": str(workspace / UTIL)}, "util.py"),
        ({"path": str(workspace / UTIL)}, "util.py"),
    ]:
        with pytest.raises(JsonRpcException) as err:
            await review(editor, sid, "reject", **target)
        assert err.value.code == p.INVALID_PARAMS
        assert named in err.value.message
    assert read(workspace, APP) == after
