"""Malformed agent payloads never lose the rest of a frame (DESIGN §1: ordered, lossless;
reference/acp.md §13: invalid payloads are logged, the session goes on)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_lsp import protocol as p
from tests.review_findings.helpers import Step, scripted_editor

pytestmark = pytest.mark.timeout(60)

BAD_PATH = "{cwd}/bad\ud800.txt"  # a lone surrogate: valid JSON ("\ud800"), not encodable


async def test_tool_call_with_an_unencodable_path_is_kept(tmp_path: Path, workspace: Path) -> None:
    steps: list[Step] = [
        {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "Read a file",
                "kind": "read",
                "status": "completed",
                "locations": [{"path": BAD_PATH}],
            }
        },
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "done"},
            }
        },
    ]
    editor, _log = await scripted_editor(tmp_path, workspace, steps)
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "go")
    snap = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    seen = [u for _m, n in editor.notifications for u in n.get("updates", [])]
    await editor.shutdown_session()
    assert [c["toolCallId"] for c in snap["toolCalls"]] == ["t1"]
    assert any(u.get("toolCall", {}).get("toolCallId") == "t1" for u in seen)
