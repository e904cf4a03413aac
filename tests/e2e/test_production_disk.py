"""Disk and buffers never diverge with the agents that change files themselves (DESIGN §3).

Claude Code and Codex read, edit and run commands on disk, never through the editor. With the
file open in the editor and an unsaved line in it, what a user must see when the turn ends:
the buffer shows the agent's change with their line kept (a versioned edit, then
``acp/documentsSynced``), the change is in the review list whatever route made it, a reject
restores the disk byte for byte while the buffer keeps the user's line, and follow-along
lands on the changed line, not on the top of the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from acp_lsp import protocol as p
from tests.model_server import ModelServer, Say, Script, Tool
from tests.model_server.script import read_edit_answer, shell_edit
from tests.support.lsp_editor import TestEditor, pick
from tests.support.production import start_agent

pytestmark = pytest.mark.timeout(240)

TURN = 180.0
GREET = 'import sys\n\n\ndef greet(name):\n    return f"Hello, {name}!"\n'
MINE = "# my unsaved note\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "greet.py").write_text(GREET, encoding="utf-8")
    return root


def open_dirty(editor: TestEditor, path: Path) -> None:
    """The user has the file open and typed a line they have not saved."""
    editor.open(path)
    editor.type_text(path, GREET + MINE)


def synced(editor: TestEditor) -> list[dict[str, Any]]:
    return [
        doc
        for method, params in editor.notifications
        if method == p.ACP_DOCUMENTS_SYNCED
        for doc in params["documents"]
    ]


def reviewed_files(editor: TestEditor, sid: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for call in editor.sessions[sid].tool_calls.values():
        for f in (call.get("review") or {}).get("files", []):
            out[f["path"]] = {**f, "toolCallId": call["toolCallId"]}
    return out


async def turn(editor: TestEditor, text: str, mode: str | None = None) -> str:
    sid = str((await editor.new_session())["sessionId"])
    if mode is not None:
        await editor.acp(p.ACP_SET_MODE, {"sessionId": sid, "modeId": mode})
    result = await editor.prompt(sid, text, timeout=TURN)
    assert result["stopReason"] == "end_turn"
    return sid


async def reject_all(editor: TestEditor, sid: str) -> dict[str, Any]:
    result: dict[str, Any] = await editor.acp(
        p.ACP_REVIEW_EDIT, {"sessionId": sid, "action": "reject"}
    )
    return result


async def check_merged_then_rejected(editor: TestEditor, sid: str, ws: Path) -> None:
    path = ws / "greet.py"
    howdy = GREET.replace("Hello", "Howdy")
    # when the answer arrived, the buffer already showed the agent's change and the user's line
    assert editor.doc(path).text == howdy + MINE
    assert path.read_text(encoding="utf-8") == howdy  # the user's line is still unsaved
    [entry] = [d for d in synced(editor) if d["uri"] == editor.doc(path).uri]
    assert entry["matchesDisk"] is False and entry["version"] == editor.doc(path).version
    edit = next(e.edit for e in editor.applied_edits if e.label and "changed on disk" in e.label)
    [change] = edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit) and change.text_document.version == 2
    files = reviewed_files(editor, sid)
    assert files[str(path)]["status"] == "pending" and files[str(path)]["change"] == "modified"

    result = await reject_all(editor, sid)
    assert result["applied"] is True, result
    assert path.read_bytes() == GREET.encode()  # byte for byte
    await editor.wait_for(lambda: editor.doc(path).text == GREET + MINE, timeout=30)


async def test_claude_edit_reaches_the_dirty_buffer_and_follows_the_changed_line(
    tmp_path: Path, ws: Path, model: ModelServer
) -> None:
    model.script = read_edit_answer(str(ws))
    editor = await start_agent(tmp_path, ws, "claude", model)
    open_dirty(editor, ws / "greet.py")
    sid = await turn(editor, "Change the greeting to Howdy.")
    # Claude reports the Edit at line 1; the change is on line 5 (0-based 4)
    uri = editor.doc(ws / "greet.py").uri
    await editor.wait_for(
        lambda: any(
            d.uri == uri and d.selection and d.selection.start.line == 4
            for d in editor.shown_documents
        ),
        timeout=10,
    )
    await check_merged_then_rejected(editor, sid, ws)
    await editor.shutdown_session()
    assert not editor.schema_errors, editor.schema_errors


async def test_claude_shell_change_is_reviewable_and_reaches_the_buffer(
    tmp_path: Path, ws: Path, model: ModelServer
) -> None:
    model.script = shell_edit(str(ws))
    editor = await start_agent(tmp_path, ws, "claude", model)
    editor.permission_policy = pick("allow_once")
    open_dirty(editor, ws / "greet.py")
    sid = await turn(editor, "Use sed to change the greeting.", mode="default")
    files = reviewed_files(editor, sid)
    bash = editor.sessions[sid].tool_calls[files[str(ws / "greet.py")]["toolCallId"]]
    assert bash["kind"] == "execute"  # the sed command's own tool call holds the change
    await check_merged_then_rejected(editor, sid, ws)
    await editor.shutdown_session()


async def test_claude_created_and_deleted_files_are_undone(
    tmp_path: Path, ws: Path, model: ModelServer
) -> None:
    notes = ws / "notes.txt"
    model.script = Script(
        "write-delete",
        [
            [
                Tool("write", {"path": str(notes), "content": "remember the milk\n"}),
                Tool("shell", {"command": f"rm {ws / 'greet.py'}"}),
                Say("Wrote notes.txt and removed greet.py."),
            ]
        ],
    )
    editor = await start_agent(tmp_path, ws, "claude", model)
    sid = await turn(editor, "Write notes, drop greet.py.", mode="acceptEdits")
    files = reviewed_files(editor, sid)
    assert files[str(notes)]["change"] == "created"
    assert files[str(ws / "greet.py")]["change"] == "deleted"
    result = await reject_all(editor, sid)
    assert result["applied"] is True, result
    assert (ws / "greet.py").read_bytes() == GREET.encode() and not notes.exists()
    await editor.shutdown_session()


async def test_codex_apply_patch_reaches_the_dirty_buffer(
    tmp_path: Path, ws: Path, model: ModelServer
) -> None:
    model.script = read_edit_answer(str(ws))
    editor = await start_agent(tmp_path, ws, "codex", model)
    open_dirty(editor, ws / "greet.py")
    sid = await turn(editor, "Change the greeting to Howdy.", mode="full-access")
    await check_merged_then_rejected(editor, sid, ws)
    await editor.shutdown_session()
