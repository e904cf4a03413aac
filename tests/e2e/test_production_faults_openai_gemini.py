"""Model API faults played to Codex (codex-acp, OpenAI Responses) and Gemini CLI through acp-lsp.

The scripted model server (tests/model_server/faults.py) answers a turn request with a
production fault: 429 with retry-after, 503/529 overloaded, 500, 401, a proxy's HTML page, a
stream cut mid-message, broken SSE, a stream stalled for a minute; or a 10 MB answer. What is
asserted is what the user sees in the editor:

- a single fault the agent retries: the whole answer, and the agent's retry line in the log
  where it writes one (neither agent says anything in the conversation while it retries);
- a fault that stays (or one the agent does not retry): the turn ends with the ``acp/prompt``
  error (-32007) in the agent's own words, its error in ``data``; what had streamed stays;
- a stall: cancel ends the turn at once; Codex's idle timeout ends one by itself;
- then the session answers the next prompt, and ``acp/getSession`` holds what was shown.

Retries are bounded so the tests stay fast (tests/support/faults_openai_gemini.py says how
and what each agent does unbounded).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from acp_lsp import protocol as p
from tests.model_server import ModelServer, Say
from tests.model_server.faults import (
    Fault,
    bad_key,
    cut_stream,
    html_page,
    malformed_sse,
    overloaded,
    rate_limited,
    server_error,
    stall_stream,
)
from tests.model_server.script import huge_answer
from tests.support.faults import (
    ANSWER,
    PERMANENT,
    RETRY_AFTER,
    TURN,
    a_huge_answer_arrives_whole,
    answered,
    cancel_during_a_stall,
    every_turn_answers,
    history_is_what_was_shown,
    prompt_error,
    reply,
)
from tests.support.faults_openai_gemini import agent_log, start
from tests.support.lsp_editor import TestEditor

pytestmark = pytest.mark.timeout(300)

# events before the first text of an answer: Responses has created, output_item.added and
# content_part.added; Gemini none
TEXT_AFTER = {"codex": 3, "gemini": 0}


@dataclass(frozen=True)
class Expect:
    """What the user sees for one fault."""

    fault: Callable[[int], Fault]  # turn requests it holds for → the fault
    retried: bool  # a single one is retried: the answer shows whole
    # words of the acp/prompt error once it stays (or at once, when not retried); None: the
    # agent reads past it, the answer shows whole without a retry
    error: str | None
    data: dict[str, Any] = field(default_factory=dict)  # in the agent's error (error.data)
    notice: str | None = None  # the agent's retry line in the log (window/logMessage)
    waits: float = 0  # the retry comes no sooner than this, in seconds
    partial: bool = False  # the text streamed before the fault stays shown


CODEX_FAULTS = {
    # Codex never retries a 429 (its request layer leaves 429 out), retry-after or not
    "429": Expect(
        lambda n: rate_limited(RETRY_AFTER, n),
        False,
        "exceeded retry limit, last status: 429 Too Many Requests",
        {"codex_error_info": {"response_too_many_failed_attempts": {"http_status_code": 429}}},
    ),
    # 5xx, 401 and a proxy's page are retried silently (no line anywhere)
    "503": Expect(
        lambda n: overloaded(503, n),
        True,
        "unexpected status 503 Service Unavailable: The server is overloaded or not ready yet.",
        {"codex_error_info": "other"},
    ),
    "529": Expect(
        lambda n: overloaded(529, n),
        True,
        "unexpected status 529",
        {"codex_error_info": "other"},
    ),
    "500": Expect(
        server_error,
        True,
        "We're currently experiencing high demand, which may cause temporary errors.",
        {"codex_error_info": "internal_server_error"},
    ),
    "401": Expect(
        bad_key,
        True,
        "unexpected status 401 Unauthorized: Incorrect API key provided",
        {"codex_error_info": "other"},
    ),
    "html": Expect(
        lambda n: html_page(502, n),
        True,
        "unexpected status 502 Bad Gateway",
        {"codex_error_info": "other"},
    ),
    # a broken stream is tried again as a whole turn step, with a line on its stderr
    "cut": Expect(
        lambda n: cut_stream(TEXT_AFTER["codex"], n),
        True,
        "stream disconnected before completion",
        notice="Reconnecting... 1/2",
    ),
    # a line of broken JSON amid the events is skipped
    "malformed": Expect(lambda n: malformed_sse(TEXT_AFTER["codex"] + 2, n), True, None),
}
# Gemini retries after 5 s ±30 % (retry-after is not read); its retry lines are held with all
# of its stderr until it exits, so the user sees nothing while it waits
BACKOFF = 3.5
GEMINI_FAULTS = {
    "429": Expect(
        lambda n: rate_limited(RETRY_AFTER, n),
        True,
        "Resource has been exhausted (e.g. check quota).",
        {"code": 429},
        waits=BACKOFF,
    ),
    "503": Expect(
        lambda n: overloaded(503, n),
        True,
        "The model is overloaded. Please try again later.",
        {"code": 503},
        waits=BACKOFF,
    ),
    "529": Expect(lambda n: overloaded(529, n), True, "Overloaded", {"code": 529}, waits=BACKOFF),
    "500": Expect(
        server_error, True, "An internal error has occurred.", {"code": 500}, waits=BACKOFF
    ),
    # the API's error JSON is the whole message
    "401": Expect(bad_key, False, "API key not valid. Please pass a valid API key.", {"code": 401}),
    "html": Expect(
        lambda n: html_page(502, n),
        True,
        "502 Bad Gateway",
        {"code": 502},
        waits=BACKOFF,
    ),
    # a stream that broke after it started is not retried; its text stays
    "cut": Expect(lambda n: cut_stream(2, n), False, "terminated", {"code": 500}, partial=True),
    "malformed": Expect(
        lambda n: malformed_sse(2, n), False, "in JSON at position", {"code": 500}, partial=True
    ),
}


async def fails(editor: TestEditor, sid: str, expect: Expect) -> None:
    """The prompt ends with the agent's error: its words, its data, the session idle."""
    assert expect.error is not None
    error = await prompt_error(editor, sid, "Say it again.")
    assert error.code == p.AGENT_ERROR and expect.error in error.message, error.message
    data = error.data if isinstance(error.data, dict) else {}
    agent_error = data.get("data") if isinstance(data.get("data"), dict) else data
    assert expect.data.items() <= agent_error.items(), data
    last = editor.statuses[sid][-1]
    assert last["status"] == "idle" and last["error"]["message"] == error.message
    if expect.partial:
        shown = reply(editor, sid)
        assert shown and ANSWER.startswith(shown) and shown != ANSWER
    else:
        assert reply(editor, sid) == ""


async def play(editor: TestEditor, model: ModelServer, sid: str, expect: Expect) -> None:
    """One fault, then the same fault to stay (retried ones), then a normal prompt."""
    prompts = 2
    model.inject(expect.fault(1))
    if expect.retried:
        await answered(editor, sid, "Say something.")
        refused, *others = model.turn_requests()
        assert [r for _, r in model.faulted] == [refused]
        if expect.notice is not None:
            assert agent_log(editor, expect.notice)
        if expect.error is not None:
            assert others[0].at - refused.at >= expect.waits
        prompts += 1
        model.inject(expect.fault(PERMANENT))
    if expect.error is None:
        await answered(editor, sid, "Say it again.")
        assert len(model.turn_requests()) == 2  # no retry
    else:
        await fails(editor, sid, expect)
    model.clear_faults()
    await answered(editor, sid, "Once more, please.")
    await history_is_what_was_shown(editor, sid, prompts)


@pytest.mark.parametrize(
    ("agent", "name"),
    [
        (a, n)
        for a, faults in (("codex", CODEX_FAULTS), ("gemini", GEMINI_FAULTS))
        for n in sorted(faults)
    ],
)
async def test_model_fault(tmp_path: Path, model: ModelServer, agent: str, name: str) -> None:
    model.script = every_turn_answers()
    editor, sid = await start(tmp_path, model, agent)
    await play(editor, model, sid, {"codex": CODEX_FAULTS, "gemini": GEMINI_FAULTS}[agent][name])
    await editor.shutdown_session()


@pytest.mark.parametrize(
    ("fault", "notice"),
    [
        (cut_stream(TEXT_AFTER["codex"] + 2), "Reconnecting... 1/2"),
        (stall_stream(TEXT_AFTER["codex"] + 2, 60), "idle timeout waiting for SSE"),
    ],
    ids=["cut", "stall"],
)
async def test_codex_reconnect_shows_the_cut_text_and_then_the_whole_answer(
    tmp_path: Path, model: ModelServer, fault: Fault, notice: str
) -> None:
    """A stream lost after some text, by a cut or Codex's idle timeout: Codex asks again
    and streams the whole answer after what was shown; nothing tells the editor to drop it."""
    model.script = every_turn_answers()
    editor, sid = await start(tmp_path, model, "codex", stream_idle_timeout_ms=2000)
    say = model.script.turns[0][0]
    assert isinstance(say, Say)
    model.inject(fault)
    assert await editor.prompt(sid, "Say something.", timeout=TURN) == {"stopReason": "end_turn"}
    # the two pieces streamed before the fault, then the retry's whole answer, one message
    assert reply(editor, sid) == "".join(say.pieces()[:2]) + ANSWER
    assert [m["role"] for m in editor.sessions[sid].messages] == ["user", "agent"]
    assert agent_log(editor, notice)
    model.release()
    await answered(editor, sid, "Once more, please.")
    await history_is_what_was_shown(editor, sid, 2)
    await editor.shutdown_session()


@pytest.mark.parametrize("agent", ["codex", "gemini"])
async def test_cancel_during_a_stalled_stream_ends_the_turn_at_once(
    tmp_path: Path, model: ModelServer, agent: str
) -> None:
    model.script = every_turn_answers()
    editor, sid = await start(tmp_path, model, agent)
    say = model.script.turns[0][0]
    assert isinstance(say, Say)
    shown = "".join(say.pieces()[:2])  # the two pieces before the stall
    await cancel_during_a_stall(editor, model, sid, TEXT_AFTER[agent] + 2, shown)
    await editor.shutdown_session()


@pytest.mark.parametrize("agent", ["codex", "gemini"])
async def test_a_10_mb_answer_reaches_the_editor_whole(
    tmp_path: Path, model: ModelServer, agent: str
) -> None:
    model.script = huge_answer(10 * 1024 * 1024, turns=3)
    editor, sid = await start(tmp_path, model, agent)
    await a_huge_answer_arrives_whole(editor, model, sid)
    await editor.shutdown_session()
