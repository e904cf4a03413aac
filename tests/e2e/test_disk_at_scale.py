"""Disk tracking at any size (DESIGN §3), end to end through the real server: in a git
repository of 300,000 committed files a shell command's change reaches the open buffer and is
rejected byte for byte (once a folder of over 200,000 files was not tracked at all); with the
file watcher off every snapshot scans the folder and still catches the change."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from acp_lsp import protocol as p
from tests.e2e.conftest import scripted_agent, start_editor
from tests.e2e.test_disk_sync import shell, synced
from tests.support.big_repo import commit_everything, generated_path
from tests.support.lsp_editor import TestEditor

pytestmark = pytest.mark.timeout(600)

APP = "src/app.py"
FILES = int(os.environ.get("ACP_LSP_TEST_BIG_REPO_FILES", "300000"))


def sed_script(changed: str) -> dict[str, Any]:
    return {
        "on": {
            "session/prompt": shell(
                "sed1",
                "sed -i s/Hello/Hi there/ src/app.py",
                {"write_file": {"path": APP, "content": changed}},
            )
        }
    }


async def change_reaches_the_buffer_and_is_undone(editor: TestEditor, app: Path) -> None:
    original = app.read_bytes()
    editor.open(app)
    user_text = original.decode() + "# my unsaved note\n"
    editor.type_text(app, user_text)
    sid = (await editor.new_session())["sessionId"]
    result = await editor.prompt(sid, "greet differently", timeout=300)
    assert result["stopReason"] == "end_turn"
    changed = original.decode().replace("Hello, ", "Hi there, ")
    assert editor.doc(app).text == changed + "# my unsaved note\n"
    assert [d["uri"] for d in synced(editor)] == [editor.doc(app).uri]
    review = editor.sessions[sid].tool_calls["sed1"]["review"]
    assert [f["path"] for f in review["files"]] == [str(app)]
    rejected = await editor.acp(p.ACP_REVIEW_EDIT, {"sessionId": sid, "action": "reject"})
    assert rejected["applied"] is True
    assert app.read_bytes() == original  # byte for byte
    await editor.wait_for(lambda: editor.doc(app).text == user_text)


@pytest.mark.heavy  # a minute to make the repository: the full run only
async def test_a_shell_change_in_a_300000_file_repository(tmp_path: Path, workspace: Path) -> None:
    commit_everything(workspace, FILES)
    assert (workspace / generated_path(FILES - 1)).is_file()
    app = workspace / APP
    changed = app.read_text().replace("Hello, ", "Hi there, ")
    options = scripted_agent(sed_script(changed), tmp_path)
    editor = await start_editor(tmp_path, workspace, "visual_studio_code", options)
    try:
        await change_reaches_the_buffer_and_is_undone(editor, app)
        # tracked, not refused; and no word of scanning: the watcher covered the folder
        assert [m.message for m in editor.messages if "acp-lsp" in m.message] == []
    finally:
        await editor.shutdown_session()
    assert not editor.schema_errors, editor.schema_errors


async def test_with_the_watcher_off_every_snapshot_scans(tmp_path: Path, workspace: Path) -> None:
    app = workspace / APP
    changed = app.read_text().replace("Hello, ", "Hi there, ")
    options = {**scripted_agent(sed_script(changed), tmp_path), "watchFiles": False}
    editor = await start_editor(tmp_path, workspace, "neovim", options)
    try:
        await change_reaches_the_buffer_and_is_undone(editor, app)
    finally:
        await editor.shutdown_session()
    assert not editor.schema_errors, editor.schema_errors
