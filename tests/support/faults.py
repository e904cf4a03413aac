"""Shared pieces of the model-fault e2e tests (tests/e2e/test_production_faults*.py): a
script that answers every turn alike, what the user sees since the last prompt, and the
checks every fault ends with (the agent's error, a normal next answer, the history).

Stable for the tests that import it: ANSWER, TURN, RETRY_AFTER, PERMANENT, Expect,
every_turn_answers, reply, prompt_error, answered, history_is_what_was_shown,
cancel_during_a_stall, a_huge_answer_arrives_whole.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from pygls.exceptions import JsonRpcException

from acp_lsp import protocol as p
from tests.model_server import ModelServer, Say, Script
from tests.model_server.faults import Fault, stall_stream
from tests.model_server.script import HUGE_END
from tests.support.editor_model import view_of
from tests.support.lsp_editor import TestEditor

ANSWER = "one two three four five six"
TURN = 180.0  # a whole turn on a shared 2-core machine: generous, never asserted on
RETRY_AFTER = 2  # seconds, in the 429 a single retry must wait for
PERMANENT = 50  # more turn requests than any bounded retry loop makes


def every_turn_answers(turns: int = 6) -> Script:
    """The same answer in every turn: agents count a failed turn in their history or not."""
    return Script("faults", [[Say(ANSWER, chunks=6)] for _ in range(turns)])


def reply(editor: TestEditor, sid: str) -> str:
    """The agent's text since the last prompt, as the editor shows it."""
    messages = editor.sessions[sid].messages
    last = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=-1)
    return "".join(
        b.get("text", "")
        for m in messages[last + 1 :]
        if m["role"] == "agent"
        for b in m["content"]
        if b.get("type") == "text"
    )


async def prompt_error(editor: TestEditor, sid: str, text: str) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as info:
        await editor.prompt(sid, text, timeout=TURN)
    # the reason, not JSON-RPC's name for the code (acp_start.agent_reason)
    assert "Internal error" not in info.value.message
    # words, not an API's error body or a proxy's page (Gemini CLI passes both on)
    assert '{"error"' not in info.value.message and "<html" not in info.value.message.lower()
    return info.value


async def answered(editor: TestEditor, sid: str, text: str, cut: bool = False) -> None:
    """A prompt that ends normally with the whole answer. After a ``cut`` stream the text
    that streamed before the cut may stand before it: the agent forwards each delta as it
    comes, and whether the last one before the cut got through is a matter of timing."""
    assert await editor.prompt(sid, text, timeout=TURN) == {"stopReason": "end_turn"}
    shown = reply(editor, sid)
    if cut and shown != ANSWER:
        assert shown.endswith(ANSWER), shown
        before = shown.removesuffix(ANSWER)
        assert ANSWER.startswith(before) and before != ANSWER, shown
    else:
        assert shown == ANSWER
    assert editor.statuses[sid][-1]["status"] == "idle"


async def history_is_what_was_shown(editor: TestEditor, sid: str, prompts: int) -> None:
    snapshot = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    assert view_of(snapshot) == editor.sessions[sid].view()
    assert [m["role"] for m in snapshot["messages"]].count("user") == prompts
    assert not editor.schema_errors, editor.schema_errors


@dataclass(frozen=True)
class Expect:
    """What the user sees for one fault."""

    fault: Callable[[int], Fault]  # turn requests it holds for → the fault
    retried: bool  # a single one is retried: the answer shows whole
    error: str | None  # words of the acp/prompt error once it stays (None: not waited out)
    said: str | None = None  # words of the agent message it writes about it
    code: int = p.AGENT_ERROR
    waits: float = 0  # the retry comes no sooner than this (a retry-after), in seconds
    cut: bool = False  # the stream breaks after some text (see answered)


async def cancel_during_a_stall(
    editor: TestEditor, model: ModelServer, sid: str, after: int, shown: str | None = None
) -> None:
    """The stream stalls for a minute after ``after`` events; a cancel ends the turn at once
    and what had streamed (``shown``, when the test knows it exactly) stays."""
    model.inject(stall_stream(after=after, seconds=60))
    turn = asyncio.ensure_future(editor.prompt(sid, "Say something.", timeout=TURN))
    assert await asyncio.to_thread(model.wait_stalled, TURN), "the answer never started"
    if shown is None:
        await editor.wait_for(lambda: bool(reply(editor, sid)), timeout=TURN)
    else:
        await editor.wait_for(lambda: reply(editor, sid) == shown, timeout=TURN)
    assert (await editor.acp(p.ACP_CANCEL, {"sessionId": sid})) == {}
    # at once: well inside the minute the stream stays stalled
    assert await asyncio.wait_for(turn, 20) == {"stopReason": "cancelled"}
    model.release()
    last = editor.statuses[sid][-1]
    assert last == {"sessionId": sid, "status": "idle", "stopReason": "cancelled"}
    kept = reply(editor, sid)  # what had streamed before the stall stays
    assert kept == shown if shown is not None else ANSWER.startswith(kept) and kept != ANSWER
    assert kept
    await answered(editor, sid, "Once more, please.")
    await history_is_what_was_shown(editor, sid, 2)


async def a_huge_answer_arrives_whole(editor: TestEditor, model: ModelServer, sid: str) -> None:
    """The script's first answer (``huge_answer``) reaches the editor character for
    character; the next prompt is answered."""
    huge = model.script.turns[0][0]
    assert isinstance(huge, Say)
    assert await editor.prompt(sid, "Say a lot.", timeout=TURN) == {"stopReason": "end_turn"}
    shown = reply(editor, sid)
    assert len(shown) == len(huge.text) and shown.endswith(HUGE_END)
    assert shown == huge.text
    assert await editor.prompt(sid, "And now?", timeout=TURN) == {"stopReason": "end_turn"}
    assert reply(editor, sid) == "Turn 2: done."
    await history_is_what_was_shown(editor, sid, 2)
