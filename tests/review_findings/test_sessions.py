"""Session lifecycle: failed sessions, reloads, id collisions (DESIGN §1 "Process model", §2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_lsp import protocol as p
from tests.e2e.conftest import start_editor, with_fast_demo
from tests.review_findings.helpers import (
    Step,
    agent_config,
    answers,
    error_of,
    received,
    req,
    scripted_editor,
)

pytestmark = pytest.mark.timeout(60)

CRASH = [{"exit": 3}]


async def test_reloaded_failed_session_keeps_its_additional_directories(
    tmp_path: Path, workspace: Path
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "notes.txt").write_text("extra notes\n", encoding="utf-8")
    steps = [req("fs/read_text_file", "r1", path=str(extra / "notes.txt"))]
    editor, log = await scripted_editor(tmp_path, workspace, steps)
    snap = await editor.new_session(additionalDirectories=[str(extra)])
    sid = snap["sessionId"]
    assert snap["additionalDirectories"] == [str(extra)]
    # the agent goes away (here: restarted); the session fails and is loaded back
    await editor.acp(p.ACP_RESTART_AGENT, {"agent": "scripted"})
    await editor.wait_for(lambda: "failed" in editor.status_values(sid))
    loaded = await editor.acp(p.ACP_LOAD_SESSION, {"agent": "scripted", "sessionId": sid})
    assert loaded["sessionId"] == sid
    await editor.prompt(sid, "read the notes")
    await editor.shutdown_session()
    assert answers(log)["r1"].get("result") == {"content": "extra notes\n"}, answers(log)["r1"]
    assert loaded.get("additionalDirectories") == [str(extra)]


async def test_set_mode_on_failed_session_is_agent_unavailable(
    tmp_path: Path, workspace: Path
) -> None:
    script = {
        "new_session": {
            "modes": {
                "currentModeId": "ask",
                "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
            }
        }
    }
    editor, log = await scripted_editor(tmp_path, workspace, CRASH, script=script)
    sid = (await editor.new_session())["sessionId"]
    crash = await error_of(editor.prompt(sid, "go"))
    assert crash["code"] == p.AGENT_UNAVAILABLE
    assert editor.status_values(sid)[-1] == "failed"
    # prompt is refused on a failed session (DESIGN: `failed` is a session whose agent is gone)
    assert (await error_of(editor.prompt(sid, "again")))["code"] == p.AGENT_UNAVAILABLE
    error = await error_of(editor.acp(p.ACP_SET_MODE, {"sessionId": sid, "modeId": "code"}))
    starts = len(received(log, "initialize"))
    await editor.shutdown_session()
    assert error["code"] == p.AGENT_UNAVAILABLE
    assert starts == 1, "a new agent was started behind the user's back"


# Found in this review and fixed meanwhile (AcpBackend._failed keeps the agent id): regression.
async def test_reload_of_a_renamed_session_uses_the_agents_id(
    tmp_path: Path, workspace: Path
) -> None:
    logs = {name: tmp_path / f"{name}.log" for name in ("a", "b")}
    script = {"session_ids": ["same", "same-2"]}
    agents = {name: agent_config(script, tmp_path, log) for name, log in logs.items()}
    editor = await start_editor(
        tmp_path, workspace, "visual_studio_code", with_fast_demo({"agents": agents})
    )
    assert (await editor.new_session(agent="a"))["sessionId"] == "same"
    renamed = (await editor.new_session(agent="b"))["sessionId"]
    assert renamed != "same"  # control: the collision is resolved for the editor
    await editor.acp(p.ACP_RESTART_AGENT, {"agent": "b"})
    await editor.wait_for(lambda: "failed" in editor.status_values(renamed))
    await editor.acp(p.ACP_LOAD_SESSION, {"agent": "b", "sessionId": renamed})
    await editor.shutdown_session()
    loads = [m["params"]["sessionId"] for m in received(logs["b"], "session/load")]
    assert loads == ["same"], f"agent b was asked to load {loads}"


async def test_no_session_update_after_failed_status(tmp_path: Path, workspace: Path) -> None:
    steps: list[Step] = [
        {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "Run tests",
                "kind": "execute",
                "status": "in_progress",
            }
        },
        *CRASH,
    ]
    editor, _log = await scripted_editor(tmp_path, workspace, steps)
    sid = (await editor.new_session())["sessionId"]
    await error_of(editor.prompt(sid, "go"))
    await editor.shutdown_session()
    mine = [(m, n) for m, n in editor.notifications if n.get("sessionId") == sid]
    failed_at = next(i for i, (m, n) in enumerate(mine) if n.get("status") == "failed")
    late = [n for m, n in mine[failed_at + 1 :] if m == "acp/sessionUpdate"]
    assert late == [], f"updates after the session failed: {late}"


async def test_session_ids_stay_unique_across_agent_restarts(
    tmp_path: Path, workspace: Path
) -> None:
    editor, _log = await scripted_editor(tmp_path, workspace, [])
    ids = [(await editor.new_session())["sessionId"]]
    for _ in range(2):
        await editor.acp(p.ACP_RESTART_AGENT, {"agent": "scripted"})
        ids.append((await editor.new_session())["sessionId"])
    listed = (await editor.acp(p.ACP_LIST_SESSIONS, {"agent": "scripted"}))["sessions"]
    await editor.shutdown_session()
    assert len(set(ids)) == 3, f"editor ids handed out: {ids}"
    assert len(listed) == 3, f"sessions the bridge still knows: {listed}"


async def test_close_of_a_failed_session_does_not_ask_the_new_agent(
    tmp_path: Path, workspace: Path
) -> None:
    unknown = {"error": {"code": -32602, "message": "Session not found"}}
    editor, log = await scripted_editor(
        tmp_path, workspace, [], script={"on": {"session/close": [unknown]}}
    )
    sid = (await editor.new_session())["sessionId"]
    await editor.acp(p.ACP_RESTART_AGENT, {"agent": "scripted"})  # the old process is gone
    await editor.wait_for(lambda: "failed" in editor.status_values(sid))
    try:
        result = await editor.acp(p.ACP_CLOSE_SESSION, {"sessionId": sid})
    finally:
        await editor.shutdown_session()
    assert result == {}
    assert received(log, "session/close") == []
