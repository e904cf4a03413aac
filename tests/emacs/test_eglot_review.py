"""Review by hunk in real Emacs 28 + eglot 1.9, plain LSP (DESIGN §2 "Review by hunk").

A scripted agent, asked through eglot's code action, changes src/app.py on disk in two
places with a shell command (as Codex and Claude's Bash do). The user goes to the second
change, opens eglot's code actions there and picks "Reject this change": that change alone
goes back, on disk and in the buffer, and the first one stays (harness.el, HARNESS_FLOW=hunk).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agents import scripted_command
from tests.emacs.emacs import ROOT, init_options, run_emacs, workspace
from tests.support.review_script import turns, update

pytestmark = pytest.mark.timeout(240)

ORIGINAL = (ROOT / "acp_lsp" / "demo" / "workspace" / "src" / "app.py").read_text(encoding="utf-8")
CHANGED = ORIGINAL.replace("Hello, ", "Howdy, ").replace("raise SystemExit", "sys.exit")
DONE = "Changed the greeting and the exit."


def test_a_hunk_rejected_through_its_code_action(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    steps = [
        update(
            sessionUpdate="tool_call",
            toolCallId="sed1",
            title="sed -i src/app.py",
            kind="execute",
            status="in_progress",
        ),
        {"write_file": {"path": "src/app.py", "content": CHANGED}},
        update(sessionUpdate="tool_call_update", toolCallId="sed1", status="completed"),
        update(sessionUpdate="agent_message_chunk", content={"type": "text", "text": DONE}),
    ]
    argv = scripted_command(turns(steps), tmp_dir=tmp_path)
    settings = {
        "agents": {"scripted": {"command": argv[0], "args": argv[1:]}},
        "defaultAgent": "scripted",
    }
    result = run_emacs(
        tmp_path,
        ws,
        "Ask",
        {
            "HARNESS_FLOW": "hunk",
            "HARNESS_INIT_OPTIONS": init_options(settings),
            "HARNESS_DONE": DONE,
            "HARNESS_AT": "sys.exit",
            "HARNESS_HUNK_ACTION": "Reject this change",
        },
    )
    assert result["edited_disk"] == CHANGED
    assert result["edited"] == CHANGED  # the clean buffer followed the agent's change
    # eglot's menu at that line offered the review of that change and of the whole file
    assert any("Pick an action" in str(q) for q in result["asked"]), result["asked"]
    assert {
        "Keep this change (line 20)",
        "Reject this change (line 20)",
        "Keep every change in this file",
        "Reject every change in this file",
    } <= set(result["menu"]), result["menu"]
    kept = CHANGED.replace("sys.exit", "raise SystemExit")
    assert result["after_disk"] == kept  # the exit is back, the greeting stays the agent's
    assert result["after"] == kept
