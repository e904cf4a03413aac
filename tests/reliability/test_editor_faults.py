"""An editor that never answers (a permission prompt, an applyEdit), refuses or skips edits,
or names sessions and agents that do not exist.

Whatever the editor does, the agent gets exactly one answer to each request once the turn is
cancelled, the user's text is never lost, and a bad request is a precise error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from acp_lsp import protocol as p
from tests.agents import read_log
from tests.reliability.conftest import Bridge, error_of, responses, scripted
from tests.support.lsp_editor import TestEditor

pytestmark = pytest.mark.timeout(60)

OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


def replace_handler(
    editor: TestEditor, method: str, handler: Callable[[Any], Awaitable[Any]]
) -> None:
    """Swap one of the scripted editor's request handlers (e.g. for one that never answers)."""
    editor.protocol.fm._features[method] = handler


def never_answering(editor: TestEditor, method: str) -> list[asyncio.Future[Any]]:
    """Make the editor leave every ``method`` request open; returns the open requests."""
    waiting: list[asyncio.Future[Any]] = []

    async def handler(_params: Any) -> Any:
        waiting.append(asyncio.get_running_loop().create_future())
        return await waiting[-1]

    replace_handler(editor, method, handler)
    return waiting


PROMPTS = 3  # open at once: prompts never block the server or each other


def permission_script() -> dict[str, Any]:
    steps: list[dict[str, Any]] = []
    for i in range(PROMPTS):
        steps += [
            {
                "update": {
                    "sessionUpdate": "tool_call",
                    "toolCallId": f"t{i}",
                    "title": f"Run migration {i}",
                    "kind": "execute",
                    "status": "pending",
                }
            },
            {
                "request": "session/request_permission",
                "id": f"perm{i}",
                "wait": False,
                "params": {
                    "sessionId": "{sessionId}",
                    "toolCall": {"toolCallId": f"t{i}"},
                    "options": OPTIONS,
                },
            },
        ]
    steps += [{"wait_cancel": 10}, {"sleep": 0.3}, {"respond": {"stopReason": "cancelled"}}]
    return {"on": {"session/prompt": steps}}


def answering_late(editor: TestEditor) -> list[asyncio.Future[Any]]:
    """An editor that ignores the withdrawal and answers "allow" anyway, after the cancel."""
    waiting: list[asyncio.Future[Any]] = []

    async def handler(_params: Any) -> Any:
        mine: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        waiting.append(mine)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            mine.cancel()  # noted, and then answered anyway
        return {"outcome": {"outcome": "selected", "optionId": "allow"}}

    replace_handler(editor, "acp/requestPermission", handler)
    return waiting


@pytest.mark.parametrize(
    "editor_kind",
    ["never-answers", "plain-never-answers", "answers-after-cancel"],
)
async def test_open_permission_prompts_are_answered_once_on_cancel(
    bridge: Bridge, tmp_path: Path, editor_kind: str
) -> None:
    log = tmp_path / "agent.log"
    rich = editor_kind != "plain-never-answers"
    agent = scripted(permission_script(), pids=tmp_path / "p", log=log)
    editor = await bridge.start({"agent": agent}, rich=rich)
    if editor_kind == "answers-after-cancel":
        waiting = answering_late(editor)
    else:
        method = "acp/requestPermission" if rich else types.WINDOW_SHOW_MESSAGE_REQUEST
        waiting = never_answering(editor, method)
    sid = (await editor.new_session())["sessionId"]
    turn = asyncio.ensure_future(editor.prompt(sid, "migrate"))
    await editor.wait_for(lambda: len(waiting) == PROMPTS)
    assert editor.status_values(sid)[-1] == "awaiting_permission"
    await editor.acp("acp/cancel", {"sessionId": sid})
    assert (await turn)["stopReason"] == "cancelled"
    # every prompt withdrawn from the editor, every one answered exactly once: cancelled
    await editor.wait_for(lambda: all(w.cancelled() for w in waiting))
    answers = [m for m in read_log(log) if "method" not in m and "id" in m]
    assert sorted(m["id"] for m in answers) == [f"perm{i}" for i in range(PROMPTS)]
    assert all(m["result"] == {"outcome": {"outcome": "cancelled"}} for m in answers)
    calls = editor.sessions[sid].tool_calls
    assert [calls[f"t{i}"]["status"] for i in range(PROMPTS)] == ["cancelled"] * PROMPTS
    assert editor.status_values(sid) == ["running", "awaiting_permission", "cancelling", "idle"]


def write_script(path: str, content: str) -> dict[str, Any]:
    return {
        "on": {
            "session/prompt#1": [
                {
                    "request": "fs/write_text_file",
                    "id": "write",
                    "params": {"sessionId": "{sessionId}", "path": path, "content": content},
                },
                {"wait_cancel": 0.2},
            ]
        }
    }


async def test_unanswered_apply_edit_is_answered_on_cancel(
    bridge: Bridge, tmp_path: Path, workspace: Path
) -> None:
    log = tmp_path / "agent.log"
    target = workspace / "src" / "app.py"
    original = target.read_text(encoding="utf-8")
    agent = scripted(write_script(str(target), "agent text\n"), pids=tmp_path / "p", log=log)
    editor = await bridge.start({"agent": agent})
    editor.open(target)
    editor.type_text(target, original + "# the user's unsaved line\n")
    waiting = never_answering(editor, types.WORKSPACE_APPLY_EDIT)
    sid = (await editor.new_session())["sessionId"]
    turn = asyncio.ensure_future(editor.prompt(sid, "edit"))
    await editor.wait_for(lambda: bool(waiting))
    await editor.acp("acp/cancel", {"sessionId": sid})
    assert (await turn)["stopReason"] == "cancelled"
    answer = responses(log)["write"]
    assert answer["error"]["code"] == p.REQUEST_CANCELLED
    assert "cancelled" in answer["error"]["message"]
    # nothing of the user's was lost: buffer and disk as they were
    assert editor.doc(target).text == original + "# the user's unsaved line\n"
    assert target.read_text(encoding="utf-8") == original
    assert (await editor.prompt(sid, "again"))["stopReason"] == "end_turn"  # usable


@pytest.mark.parametrize(
    ("mode", "reason"),
    [("refuse", "refused the edit"), ("skip", "does not show it")],
    ids=["refused", "reported-applied-but-skipped"],
)
async def test_refused_or_skipped_edit_is_an_error_to_the_agent(
    bridge: Bridge, tmp_path: Path, workspace: Path, mode: str, reason: str
) -> None:
    log = tmp_path / "agent.log"
    target = workspace / "src" / "util.py"
    original = target.read_text(encoding="utf-8")
    agent = scripted(write_script(str(target), "replaced\n"), pids=tmp_path / "p", log=log)
    editor = await bridge.start({"agent": agent})
    editor.open(target)
    editor.edit_mode = mode
    sid = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(sid, "edit"))["stopReason"] == "end_turn"
    answer = responses(log)["write"]
    assert reason in answer["error"]["message"], answer
    assert editor.doc(target).text == original
    assert target.read_text(encoding="utf-8") == original


SESSION_METHODS: list[tuple[str, dict[str, Any]]] = [
    ("acp/getSession", {}),
    ("acp/prompt", {"prompt": "hi"}),
    ("acp/cancel", {}),
    ("acp/setMode", {"modeId": "code"}),
    ("acp/setConfigOption", {"configId": "x", "value": "y"}),
    ("acp/closeSession", {}),
    ("acp/setFollow", {"enabled": False}),
    ("acp/reviewEdit", {"action": "accept"}),
]
AGENT_METHODS: list[tuple[str, dict[str, Any]]] = [
    ("acp/newSession", {"agent": "nope"}),
    ("acp/listSessions", {"agent": "nope"}),
    ("acp/loadSession", {"agent": "nope", "sessionId": "s"}),
    ("acp/restartAgent", {"agent": "nope"}),
    ("acp/authenticate", {"agent": "nope", "methodId": "m"}),
    ("acp/deleteSession", {"agent": "nope", "sessionId": "s"}),
]


async def test_unknown_sessions_and_agents(bridge: Bridge, tmp_path: Path) -> None:
    editor = await bridge.start({"agent": scripted({}, pids=tmp_path / "p")})
    for method, params in SESSION_METHODS:
        error = await error_of(editor.acp(method, {"sessionId": "no-such-session", **params}))
        assert error["code"] == p.UNKNOWN_SESSION, (method, error)
        assert "no-such-session" in error["message"]
    for method, params in AGENT_METHODS:
        error = await error_of(editor.acp(method, params))
        assert error["code"] == p.UNKNOWN_AGENT, (method, error)
        assert "demo" in error["data"]["agents"] and "agent" in error["data"]["agents"]
    # a closed session is unknown from then on
    sid = (await editor.new_session())["sessionId"]
    await editor.acp("acp/closeSession", {"sessionId": sid})
    error = await error_of(editor.prompt(sid, "hi"))
    assert error["code"] == p.UNKNOWN_SESSION
    assert editor.status_values(sid)[-1] == "closed"
    # and the server is fine
    fresh = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(fresh, "hi"))["stopReason"] == "end_turn"


async def test_second_prompt_during_a_turn_is_refused(bridge: Bridge, tmp_path: Path) -> None:
    slow = {"on": {"session/prompt#1": [{"sleep": 30}]}}
    editor = await bridge.start({"agent": scripted(slow, pids=tmp_path / "p")})
    sid = (await editor.new_session())["sessionId"]
    turn = asyncio.ensure_future(editor.prompt(sid, "first"))
    await editor.wait_for(lambda: editor.status_values(sid)[-1:] == ["running"])
    error = await error_of(editor.prompt(sid, "second"))
    assert error["code"] == p.TURN_RUNNING
    await editor.acp("acp/cancel", {"sessionId": sid})
    assert (await turn)["stopReason"] == "cancelled"
    assert editor.sessions[sid].message_texts() == ["first"]  # the refused text never went in
