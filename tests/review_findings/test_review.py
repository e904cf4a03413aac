"""Reviewable edits (DESIGN §3 "Diffs in tool calls"; reference/acp.md §13: relative paths)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_lsp import protocol as p
from tests.review_findings.helpers import Step, scripted_editor

pytestmark = pytest.mark.timeout(60)


async def test_reject_of_a_relative_diff_path_restores_the_file(
    tmp_path: Path, workspace: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("old\n", encoding="utf-8")
    steps: list[Step] = [
        {"write_file": {"path": "notes.txt", "content": "new\n"}},
        {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "e1",
                "title": "Edit notes.txt",
                "kind": "edit",
                "status": "completed",
                "content": [
                    {"type": "diff", "path": "notes.txt", "oldText": "old\n", "newText": "new\n"}
                ],
            }
        },
    ]
    editor, _log = await scripted_editor(tmp_path, workspace, steps)
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "edit the notes")
    assert notes.read_text(encoding="utf-8") == "new\n"
    snap = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    assert snap["toolCalls"][0].get("review"), "control: the change is offered for review"
    result = await editor.acp(
        p.ACP_REVIEW_EDIT, {"sessionId": sid, "action": "reject", "toolCallId": "e1"}
    )
    await editor.shutdown_session()
    assert result["applied"] is True, result
    assert notes.read_text(encoding="utf-8") == "old\n"
