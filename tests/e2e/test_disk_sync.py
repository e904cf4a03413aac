"""Disk and buffers never diverge (DESIGN §3), end to end through the real server.

The scripted agent changes files the way Claude Code and Codex do: on disk itself, from a
"shell command" tool call that reports nothing but its title (``write_file`` /
``delete_file`` steps). What a user must see: the open buffer shows the agent's change with
their unsaved line kept, through a versioned edit; ``acp/documentsSynced`` names it; the
change is in the review list and ``reject`` restores the disk byte for byte; an agent read
after the change never returns the stale buffer.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from acp_lsp import protocol as p
from acp_lsp.textedits import apply_edits
from tests.e2e.conftest import PROFILES
from tests.support.lsp_editor import TestEditor

pytestmark = pytest.mark.timeout(60)

JsonObject = dict[str, Any]
Launch = Callable[..., Awaitable[TestEditor]]

APP = "src/app.py"


@pytest.fixture(params=PROFILES)
def launch(request: pytest.FixtureRequest, launch: Launch) -> Launch:
    """The scripted editor of tests/e2e/conftest.py, in each editor profile."""
    return functools.partial(launch, profile=request.param)


def shell(call_id: str, title: str, *changes: JsonObject) -> list[JsonObject]:
    """A command the agent runs itself: a tool call, the disk changes, completed."""
    return [
        {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "title": title,
                "kind": "execute",
                "status": "in_progress",
            }
        },
        *changes,
        {
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "status": "completed",
            }
        },
    ]


def synced(editor: TestEditor) -> list[JsonObject]:
    return [
        doc
        for method, params in editor.notifications
        if method == p.ACP_DOCUMENTS_SYNCED
        for doc in params["documents"]
    ]


def review_of(editor: TestEditor, sid: str, call_id: str) -> JsonObject:
    review: JsonObject = editor.sessions[sid].tool_calls[call_id]["review"]
    return review


async def test_shell_change_reaches_the_dirty_buffer_and_is_reviewable(
    launch: Launch, workspace: Path
) -> None:
    app = workspace / APP
    original = app.read_bytes()
    changed = original.decode().replace("Hello, ", "Hi there, ")
    editor = await launch(
        {
            "on": {
                "session/prompt": shell(
                    "sed1",
                    "sed -i s/Hello/Hi there/ src/app.py",
                    {"write_file": {"path": APP, "content": changed}},
                )
            }
        }
    )
    # the user has the file open with an unsaved line at its end
    editor.open(app)
    user_text = original.decode() + "# my unsaved note\n"
    editor.type_text(app, user_text)
    snap = await editor.new_session()
    sid = snap["sessionId"]
    edits_before = len(editor.applied_edits)

    assert (await editor.prompt(sid, "greet differently"))["stopReason"] == "end_turn"

    # when the turn's answer arrives, the buffer already shows both
    doc = editor.doc(app)
    assert doc.text == changed + "# my unsaved note\n"
    assert app.read_text() == changed  # the disk is the agent's (unsaved line not written)
    edit = editor.applied_edits[edits_before].edit
    if edit.document_changes:  # versioned where the editor takes versions
        change = edit.document_changes[0]
        assert isinstance(change, types.TextDocumentEdit) and change.text_document.version == 2
    [entry] = synced(editor)
    assert entry["uri"] == doc.uri and entry["version"] == doc.version
    assert entry["matchesDisk"] is False
    review = review_of(editor, sid, "sed1")
    assert review["status"] == "pending"
    greeting: dict[str, object] = {"index": 0, "oldStart": 9, "oldLines": 1, "newStart": 9}
    greeting |= {"newLines": 1, "oldText": original.decode().splitlines(keepends=True)[8]}
    assert review["files"] == [
        {
            "path": str(app),
            "status": "pending",
            "change": "modified",
            "hunks": [{**greeting, "status": "pending"}],  # line 9, the greeting
        }
    ]

    result = await editor.acp(p.ACP_REVIEW_EDIT, {"sessionId": sid, "action": "reject"})
    assert result["applied"] is True
    assert app.read_bytes() == original  # byte for byte
    # the buffer follows the undo and keeps the user's line, still unsaved
    await editor.wait_for(lambda: editor.doc(app).text == user_text)
    assert review_of(editor, sid, "sed1")["status"] == "rejected"


async def test_clean_buffer_matches_disk_and_reads_are_fresh(
    launch: Launch, workspace: Path
) -> None:
    app = workspace / APP
    changed = app.read_text().replace("Hello, ", "Howdy, ")
    editor = await launch(
        {
            "on": {
                "session/prompt": [
                    *shell("sed1", "sed -i", {"write_file": {"path": APP, "content": changed}}),
                    # a read right after the command: the answer must be the disk's new text
                    {
                        "request": "fs/read_text_file",
                        "params": {"sessionId": "{sessionId}", "path": "{cwd}/" + APP},
                        "save_as": "r",
                    },
                    {
                        "update": {
                            "sessionUpdate": "agent_message_chunk",
                            "content": {"type": "text", "text": "{r.content}"},
                        }
                    },
                ],
            }
        }
    )
    editor.open(app)  # clean: the disk's text
    snap = await editor.new_session()
    sid = snap["sessionId"]
    await editor.prompt(sid, "go")
    assert editor.doc(app).text == changed
    assert synced(editor)[-1]["matchesDisk"] is True
    answer = editor.sessions[sid].messages[-1]
    assert "Howdy, " in answer["content"][0]["text"]


async def test_created_and_deleted_files_are_undone(launch: Launch, workspace: Path) -> None:
    util = workspace / "src" / "util.py"
    util_bytes = util.read_bytes()
    new = workspace / "src" / "new_module.py"
    editor = await launch(
        {
            "on": {
                "session/prompt": shell(
                    "mv1",
                    "git mv src/util.py src/new_module.py",
                    {"write_file": {"path": "src/new_module.py", "content": util_bytes.decode()}},
                    {"delete_file": "src/util.py"},
                )
            }
        }
    )
    snap = await editor.new_session()
    sid = snap["sessionId"]
    await editor.prompt(sid, "rename util")
    files = {f["path"]: f["change"] for f in review_of(editor, sid, "mv1")["files"]}
    assert files == {str(new): "created", str(util): "deleted"}
    result = await editor.acp(p.ACP_REVIEW_EDIT, {"sessionId": sid, "action": "reject"})
    assert result["applied"] is True, result
    assert util.read_bytes() == util_bytes and not new.exists()


async def test_changes_outside_any_tool_call_get_a_bridge_tool_call(
    launch: Launch, workspace: Path
) -> None:
    notes = workspace / "NOTES.md"
    editor = await launch(
        {
            "on": {
                "session/prompt": [
                    {
                        "write_file": {
                            "path": "NOTES.md",
                            "content": "written by a background job\n",
                        }
                    },
                ]
            }
        }
    )
    snap = await editor.new_session()
    sid = snap["sessionId"]
    await editor.prompt(sid, "go")
    calls = [
        c for c in editor.sessions[sid].tool_calls.values() if c["title"] == "Files changed on disk"
    ]
    assert len(calls) == 1 and calls[0]["status"] == "completed"
    assert calls[0]["review"]["files"] == [
        {"path": str(notes), "status": "pending", "change": "created"}
    ]
    await editor.acp(p.ACP_REVIEW_EDIT, {"sessionId": sid, "action": "reject"})
    assert not notes.exists()


async def test_a_client_terminal_command_change_reaches_the_buffer(
    launch: Launch, workspace: Path
) -> None:
    """The agent runs ``sed -i`` in a terminal the editor side runs for it."""
    app = workspace / APP
    original = app.read_text()

    def terminal(method: str, **params: Any) -> JsonObject:
        return {
            "request": method,
            "params": {"sessionId": "{sessionId}", **params},
            "save_as": method.split("/")[1],
        }

    editor = await launch(
        {
            "on": {
                "session/prompt": shell(
                    "t1",
                    "sed in a terminal",
                    terminal(
                        "terminal/create",
                        command="sed",
                        args=["-i", "s/Hello, /Hey, /", "{cwd}/" + APP],
                        cwd="{cwd}",
                    ),
                    terminal("terminal/wait_for_exit", terminalId="{create.terminalId}"),
                    terminal("terminal/release", terminalId="{create.terminalId}"),
                )
            }
        }
    )
    open_doc = editor.open(app)
    editor.type_text(app, original + MINE)
    snap = await editor.new_session()
    sid = snap["sessionId"]
    await editor.prompt(sid, "go")
    assert app.read_text() == original.replace("Hello, ", "Hey, ")
    assert open_doc.text == original.replace("Hello, ", "Hey, ") + MINE
    assert review_of(editor, sid, "t1")["files"][0]["change"] == "modified"


MINE = "# mine, unsaved\n"


async def test_a_plain_editor_gets_an_edit_it_cannot_apply_twice(
    launch: Launch, workspace: Path
) -> None:
    """eglot 1.9 reloads a clean buffer when asked and restarts its versions at 0, so the
    versioned edit still matched and a minimal one applied twice ("Hello again again")."""
    app = workspace / APP
    changed = app.read_text().replace("Hello, ", "Hello again, ")
    editor = await launch(
        {
            "on": {
                "session/prompt": shell(
                    "s1", "sed", {"write_file": {"path": APP, "content": changed}}
                )
            }
        },
        rich=False,
    )
    editor.open(app)  # clean
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "go")
    assert editor.doc(app).text == changed
    [sync] = [e for e in editor.applied_edits if e.label and "changed on disk" in e.label]
    changes = sync.edit.document_changes or []
    [edits] = [c.edits for c in changes if isinstance(c, types.TextDocumentEdit)] or [
        next(iter((sync.edit.changes or {}).values()))
    ]
    # the whole text, replaced: applying it again changes nothing
    assert apply_edits(changed, list(edits)) == changed
