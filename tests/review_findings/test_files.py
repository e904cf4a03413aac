"""Agent file access through the editor's buffers (DESIGN §3 "Reads", "Writes", "Sandbox")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.review_findings.helpers import answers, req, scripted_editor

pytestmark = pytest.mark.timeout(60)

UNSAVED = "print('unsaved edit')\n"


def linked(workspace: Path) -> Path:
    """The workspace reached through a symlink (a symlinked home, /tmp on macOS, …)."""
    link = workspace.parent / "link"
    link.symlink_to(workspace, target_is_directory=True)
    return link


# Found in this review and fixed meanwhile (DocumentFiles.document matches by real path):
# regression tests.
async def test_read_sees_unsaved_buffer_in_a_symlinked_workspace(
    tmp_path: Path, workspace: Path
) -> None:
    ws = linked(workspace)
    steps = [req("fs/read_text_file", "r1", path="{cwd}/src/app.py")]
    editor, log = await scripted_editor(tmp_path, ws, steps)
    editor.open(ws / "src" / "app.py", UNSAVED)
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "go")
    await editor.shutdown_session()
    assert answers(log)["r1"]["result"]["content"] == UNSAVED


async def test_write_goes_through_open_buffer_in_a_symlinked_workspace(
    tmp_path: Path, workspace: Path
) -> None:
    ws = linked(workspace)
    new = "print('agent')\n"
    steps = [req("fs/write_text_file", "w1", path="{cwd}/src/app.py", content=new)]
    editor, log = await scripted_editor(tmp_path, ws, steps, rich=False)
    path = ws / "src" / "app.py"
    on_disk = path.read_text(encoding="utf-8")
    editor.open(path, on_disk)
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "go")
    await editor.shutdown_session()
    assert "result" in answers(log)["w1"]
    # DESIGN §3: the bridge never writes behind the editor's back a file the editor has open.
    assert editor.doc(path).text == new, "the open buffer does not show the agent's write"
    assert path.read_text(encoding="utf-8") == on_disk, "the disk was written behind the buffer"
