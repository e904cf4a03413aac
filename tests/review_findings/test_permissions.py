"""Permission prompts (DESIGN §2 "Permission", §3 "Cancellation"; reference/acp.md §6, §7)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from acp_lsp import protocol as p
from tests.review_findings.helpers import (
    answers,
    permission,
    scripted_editor,
    wait_until,
)
from tests.support.lsp_editor import pick

pytestmark = pytest.mark.timeout(60)


async def test_permission_asked_after_cancel_is_answered_cancelled(
    tmp_path: Path, workspace: Path
) -> None:
    # The agent notices the cancel late: it still asks to run a tool after session/cancel.
    steps = [{"wait_cancel": 10}, permission("late", kind="execute")]
    editor, log = await scripted_editor(tmp_path, workspace, steps)
    sid = (await editor.new_session())["sessionId"]
    turn = asyncio.ensure_future(editor.prompt(sid, "go"))
    await editor.wait_for(lambda: "running" in editor.status_values(sid))
    await editor.acp(p.ACP_CANCEL, {"sessionId": sid})
    assert (await turn)["stopReason"] == "cancelled"
    await editor.shutdown_session()

    # The user cancelled the turn: nothing more may be approved in it.
    late = answers(log)["late"]
    assert editor.permission_requests == [], "the user was asked after cancelling the turn"
    assert late.get("result", {}).get("outcome") == {"outcome": "cancelled"}, late


# Found in this review and fixed meanwhile (permissions.rule_matches normalises paths): kept
# as a regression test.
async def test_path_rule_does_not_allow_paths_that_escape_with_dotdot(
    tmp_path: Path, workspace: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n", encoding="utf-8")
    rules = [{"kind": "read", "path": f"{workspace}/*", "action": "allow"}]
    steps = [
        permission("inside", kind="read", locations=[{"path": "{cwd}/src/app.py"}]),
        permission("escape", kind="read", locations=[{"path": "{cwd}/../outside.txt"}]),
    ]
    editor, log = await scripted_editor(
        tmp_path, workspace, steps, options={"permissions": {"rules": rules}}
    )
    editor.permission_policy = pick("reject_once")
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "go")
    await editor.shutdown_session()

    got = answers(log)
    # control: a path inside the workspace is allowed by the rule without asking
    assert got["inside"]["result"]["outcome"] == {"outcome": "selected", "optionId": "yes"}
    # the escaping path is not inside the workspace: the rule must not approve it
    assert got["escape"]["result"]["outcome"] != {"outcome": "selected", "optionId": "yes"}
    assert [r["toolCall"]["toolCallId"] for r in editor.permission_requests] == ["escape"]


# Found in this review and fixed meanwhile (a bad pattern matches nothing): regression test.
async def test_bad_title_regex_rule_does_not_break_permission_prompts(
    tmp_path: Path, workspace: Path
) -> None:
    rules = [{"title": "(unclosed", "action": "allow"}]
    steps = [permission("p1", kind="edit")]
    editor, log = await scripted_editor(
        tmp_path, workspace, steps, options={"permissions": {"rules": rules}}
    )
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "go")
    await wait_until(lambda: "p1" in answers(log))
    await editor.shutdown_session()

    answer = answers(log)["p1"]
    assert "error" not in answer, f"the agent got an error for its permission request: {answer}"
    assert len(editor.permission_requests) == 1


async def test_path_rule_does_not_allow_paths_that_escape_through_a_symlink(
    tmp_path: Path, workspace: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n", encoding="utf-8")
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    rules = [{"kind": "read", "path": f"{workspace}/*", "action": "allow"}]
    steps = [permission("escape", kind="read", locations=[{"path": "{cwd}/link/secret.txt"}])]
    editor, log = await scripted_editor(
        tmp_path, workspace, steps, options={"permissions": {"rules": rules}}
    )
    editor.permission_policy = pick("reject_once")
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "go")
    await editor.shutdown_session()
    assert answers(log)["escape"]["result"]["outcome"] == {"outcome": "selected", "optionId": "no"}
    assert len(editor.permission_requests) == 1, "the rule approved a file outside the workspace"


async def test_bad_title_regex_rule_is_reported_as_a_bad_setting(
    tmp_path: Path, workspace: Path
) -> None:
    rules = [{"title": "(unclosed", "action": "allow"}]
    editor, _log = await scripted_editor(
        tmp_path, workspace, [], options={"permissions": {"rules": rules}}
    )
    await editor.acp(p.ACP_LIST_AGENTS)  # initialization is over
    messages = [m.message for m in editor.messages]
    await editor.shutdown_session()
    assert any("permissions" in m and "title" in m for m in messages), messages
