"""Review by hunk with the production agents, offline (DESIGN §2 "Review by hunk").

Claude Code writes the file itself (its Write tool, on disk), Codex runs ``sed`` (on disk,
reporting nothing), Qwen Code writes through the editor (``fs/write_text_file``). Each
changes two distant lines of one file in one tool call; the user rejects the second hunk
alone: the disk keeps the first change and gets the second line back. At the next prompt,
the model's request carries the line telling the agent what the user rejected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_lsp import protocol as p
from tests.model_server import ModelServer, Say, Script, Tool
from tests.support.lsp_editor import TestEditor, pick
from tests.support.production import ended, open_session, start_agent

pytestmark = pytest.mark.timeout(240)

GREET = 'import sys\n\n\ndef greet(name):\n    return f"Hello, {name}!"\n'
CHANGED = GREET.replace("import sys", "import os").replace("Hello", "Howdy")
ROUTES = {  # agent: (session mode, how it changes the file)
    "claude": ("acceptEdits", "write"),
    "codex": ("full-access", "shell"),
    "qwen": (None, "write"),
}


def with_hunks(editor: TestEditor, sid: str, path: Path) -> tuple[str, dict[str, Any]]:
    """The tool call whose review holds the file with hunks, and that file's review."""
    for call in editor.sessions[sid].tool_calls.values():
        for file in (call.get("review") or {}).get("files", []):
            if Path(file["path"]).name == path.name and file.get("hunks"):
                return call["toolCallId"], file
    raise AssertionError(f"no hunks for {path}: {list(editor.sessions[sid].tool_calls.values())}")


@pytest.mark.parametrize("agent", sorted(ROUTES))
async def test_one_hunk_rejected_and_the_agent_hears_it(
    tmp_path: Path, model: ModelServer, agent: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    path = ws / "greet.py"
    path.write_text(GREET, encoding="utf-8")
    mode, route = ROUTES[agent]
    change = (
        Tool("write", {"path": str(path), "content": CHANGED})
        if route == "write"
        else Tool(
            "shell", {"command": f"sed -i -e 's/import sys/import os/' -e 's/Hello/Howdy/' {path}"}
        )
    )
    model.script = Script(
        "two-hunks",
        [
            [Tool("read", {"path": str(path)}), change, Say("I changed two lines.")],
            [Say("Understood.")],
        ],
    )
    editor = await start_agent(tmp_path, ws, agent, model)
    editor.permission_policy = pick("allow_once")
    sid = await open_session(editor, mode)
    await ended(editor, sid, "Change the import and the greeting.")
    assert path.read_text(encoding="utf-8") == CHANGED

    call_id, file = with_hunks(editor, sid, path)
    assert [(h["index"], h["newStart"], h["newLines"]) for h in file["hunks"]] == [
        (0, 1, 1),
        (1, 5, 1),
    ]
    target = {"sessionId": sid, "toolCallId": call_id, "path": file["path"]}
    result = await editor.acp(p.ACP_REVIEW_EDIT, {**target, "action": "reject", "hunk": 1})
    assert result["applied"] is True, result
    # the import stays the agent's; the greeting is the user's again
    assert path.read_text(encoding="utf-8") == CHANGED.replace("Howdy", "Hello")
    await editor.wait_for(
        lambda: (
            [h["status"] for h in with_hunks(editor, sid, path)[1]["hunks"]]
            == ["pending", "rejected"]
        )
    )

    await ended(editor, sid, "Go on.")
    heard = json.dumps(model.turn_requests()[-1].body)
    assert "rejected these" in heard and "greet.py (line 5)" in heard, heard[-2000:]
    await editor.shutdown_session()
    assert not editor.schema_errors, editor.schema_errors
    assert model.unknown_requests() == [], model.unknown_requests()
