"""Queued prompts end to end (DESIGN §2 "Queued prompts"): ``acp/prompt {queue: true}``
during a running turn waits its turn; ``acp/cancel`` and ``$/cancelRequest`` withdraw queued
prompts before they reach the agent. The scripted agent sleeps in its first turn and echoes
each later prompt as it received it, so what reached the agent is what the editor shows."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from acp_lsp import protocol as p
from tests.e2e.conftest import scripted_agent, start_editor
from tests.support.lsp_editor import TestEditor
from tests.support.review_script import turns, update

pytestmark = pytest.mark.timeout(60)

JsonObject = dict[str, Any]


def say(text: str) -> JsonObject:
    return update(sessionUpdate="agent_message_chunk", content={"type": "text", "text": text})


def script(first_turn_s: float) -> JsonObject:
    """Turn 1 sleeps (a cancel ends it), every later turn echoes its prompt."""
    echo = [say("heard: {prompt}")]
    return turns([{"sleep": first_turn_s}, say("first done")], echo, echo, echo)


async def start(tmp_path: Path, workspace: Path, first_turn_s: float) -> tuple[TestEditor, str]:
    options = scripted_agent(script(first_turn_s), tmp_path)
    editor = await start_editor(tmp_path, workspace, "visual_studio_code", options)
    sid = (await editor.new_session())["sessionId"]
    return editor, sid


def queued_counts(editor: TestEditor, sid: str) -> list[int]:
    """The queue's length as the status notifications told it, each change once (every
    status of the session carries it once a prompt was queued)."""
    counts = [s["queued"] for s in editor.statuses[sid] if "queued" in s]
    return [n for i, n in enumerate(counts) if i == 0 or counts[i - 1] != n]


def agent_heard(editor: TestEditor, sid: str) -> list[str]:
    return [
        b["text"]
        for m in editor.sessions[sid].messages
        if m["role"] == "agent"
        for b in m["content"]
        if b.get("type") == "text"
    ]


def prompted(editor: TestEditor, sid: str) -> list[str]:
    return [
        b["text"]
        for m in editor.sessions[sid].messages
        if m["role"] == "user"
        for b in m["content"]
    ]


def queue(editor: TestEditor, sid: str, text: str, msg_id: str | None = None) -> Any:
    params = {"sessionId": sid, "prompt": text, "queue": True}
    if msg_id is None:
        return asyncio.ensure_future(editor.acp(p.ACP_PROMPT, params))
    future = editor.protocol.send_request(p.ACP_PROMPT, params, msg_id=msg_id)
    return asyncio.wrap_future(future) if not asyncio.isfuture(future) else future


async def two_queued(editor: TestEditor, sid: str, msg_id: str | None = None) -> tuple[Any, ...]:
    """Turn "one" running, then "two" (with ``msg_id``) and "three" queued behind it."""
    first = asyncio.ensure_future(editor.prompt(sid, "one"))
    await editor.wait_for(lambda: "running" in editor.status_values(sid))
    second, third = queue(editor, sid, "two", msg_id), queue(editor, sid, "three")
    await editor.wait_for(lambda: queued_counts(editor, sid)[-1:] == [2])
    return first, second, third


async def test_a_queued_prompt_runs_when_the_turn_ends(tmp_path: Path, workspace: Path) -> None:
    editor, sid = await start(tmp_path, workspace, 1.5)
    try:
        first, second, third = await two_queued(editor, sid)
        snapshot = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
        assert snapshot["queued"] == 2
        assert (await first)["stopReason"] == "end_turn"
        assert (await second) == {"stopReason": "end_turn"}
        assert (await third) == {"stopReason": "end_turn"}
        # in the order sent, each answered when its own turn ended
        assert prompted(editor, sid) == ["one", "two", "three"]
        assert agent_heard(editor, sid) == ["first done", "heard: two", "heard: three"]
        assert queued_counts(editor, sid) == [1, 2, 1, 0]
        assert "queued" not in await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    finally:
        await editor.shutdown_session()


async def test_cancel_ends_the_turn_and_withdraws_the_queue(
    tmp_path: Path, workspace: Path
) -> None:
    editor, sid = await start(tmp_path, workspace, 30)
    try:
        first, second, third = await two_queued(editor, sid)

        assert await editor.acp(p.ACP_CANCEL, {"sessionId": sid}) == {}

        assert (await first)["stopReason"] == "cancelled"
        assert await second == {"stopReason": "cancelled"}
        assert await third == {"stopReason": "cancelled"}
        assert queued_counts(editor, sid)[-1] == 0
        # they never reached the agent: its next prompt is the next one it hears
        assert (await editor.prompt(sid, "four"))["stopReason"] == "end_turn"
        assert prompted(editor, sid) == ["one", "four"]
        assert agent_heard(editor, sid)[-1] == "heard: four"
    finally:
        await editor.shutdown_session()


async def test_cancel_request_withdraws_one_queued_prompt(tmp_path: Path, workspace: Path) -> None:
    editor, sid = await start(tmp_path, workspace, 2)
    try:
        first, second, third = await two_queued(editor, sid, "queued-two")

        editor.protocol.notify("$/cancelRequest", types.CancelParams(id="queued-two"))

        assert await asyncio.wait_for(second, 15) == {"stopReason": "cancelled"}
        # the running turn and the other queued prompt go on
        assert (await first)["stopReason"] == "end_turn"
        assert await third == {"stopReason": "end_turn"}
        assert prompted(editor, sid) == ["one", "three"]
        assert agent_heard(editor, sid) == ["first done", "heard: three"]
    finally:
        await editor.shutdown_session()


async def test_without_queue_a_second_prompt_is_still_refused(
    tmp_path: Path, workspace: Path
) -> None:
    editor, sid = await start(tmp_path, workspace, 30)
    try:
        first = asyncio.ensure_future(editor.prompt(sid, "one"))
        await editor.wait_for(lambda: "running" in editor.status_values(sid))
        with pytest.raises(Exception) as info:
            await editor.acp(p.ACP_PROMPT, {"sessionId": sid, "prompt": "two"})
        assert getattr(info.value, "code", None) == p.TURN_RUNNING
        await editor.acp(p.ACP_CANCEL, {"sessionId": sid})
        assert (await first)["stopReason"] == "cancelled"
    finally:
        await editor.shutdown_session()


async def test_a_prompt_queued_right_behind_one_just_sent_waits_for_it(
    tmp_path: Path, workspace: Path
) -> None:
    """Sent back to back: the first is still on its way to the agent (the folder's snapshot
    before a prompt takes a git process) when the queued one arrives; it must wait all the
    same, never start a second turn or be refused."""
    editor, sid = await start(tmp_path, workspace, 0.3)
    try:
        for _ in range(3):  # the window is short: a few tries, each must hold
            first = asyncio.ensure_future(
                editor.acp(p.ACP_PROMPT, {"sessionId": sid, "prompt": "go"})
            )
            second = queue(editor, sid, "right behind")
            assert (await first)["stopReason"] == "end_turn"
            assert (await second)["stopReason"] == "end_turn"
        texts = prompted(editor, sid)
        assert texts == ["go", "right behind"] * 3, texts
        # the first "go" sleeps before it answers: a queued prompt run beside it, not after
        # it, would be heard first
        heard = "".join(agent_heard(editor, sid))
        assert heard.index("first done") < heard.index("heard: right behind"), heard
    finally:
        await editor.shutdown_session()
