"""Model API faults played to Claude (claude-agent-acp) and Qwen Code through acp-lsp.

The scripted model server (tests/model_server/faults.py) answers a turn request with a
production fault: 429 with retry-after, 529/503 overloaded, 500, 401, a proxy's HTML page, a
stream cut mid-message, broken SSE, a stream stalled for a minute; or a 10 MB answer. What is
asserted is what the user sees in the editor:

- a single fault that the agent retries: the whole answer, as if nothing happened;
- a fault that stays (or one the agent does not retry): the turn ends with the agent's own
  words about it (the ``acp/prompt`` error, and the agent message when it writes one);
- a stall: cancel ends the turn at once, with what had streamed kept;
- then the session answers the next prompt, and ``acp/getSession`` holds what was shown (the
  stored copy too, after a restart).

Each agent's retries are bounded so the tests stay fast (docs/reliability.md has the
policies and what a user waits with the defaults): Claude Code with ``CLAUDE_CODE_MAX_RETRIES=2`` (default 10,
backoff from 0.5 s doubling to 32 s, ``retry-after`` honoured as a floor); Qwen Code with
``model.generationConfig.maxRetries: 1`` (the OpenAI SDK's retries and the rate-limit
retries) and short rate-limit delays; its outer retry loop (7 attempts, backoff from 1.5 s,
retry-after honoured for 429 and 503 only) is fixed, so a 500 or 502 that stays (80 s) is
not waited out here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from acp_lsp import protocol as p
from tests.model_server import ModelServer
from tests.model_server.faults import (
    Fault,
    bad_key,
    cut_stream,
    html_page,
    malformed_sse,
    overloaded,
    rate_limited,
    server_error,
)
from tests.model_server.script import huge_answer
from tests.support.editor_model import view_of
from tests.support.faults import (
    ANSWER,
    PERMANENT,
    RETRY_AFTER,
    TURN,
    Expect,
    a_huge_answer_arrives_whole,
    answered,
    cancel_during_a_stall,
    every_turn_answers,
    history_is_what_was_shown,
    prompt_error,
    reply,
)
from tests.support.lsp_editor import TestEditor
from tests.support.production import open_session, start_agent

pytestmark = pytest.mark.timeout(300)
__all__ = [  # test_production_faults_openai_gemini.py imports these from here too
    "ANSWER",
    "PERMANENT",
    "RETRY_AFTER",
    "TURN",
    "answered",
    "every_turn_answers",
    "history_is_what_was_shown",
    "prompt_error",
    "reply",
]


@dataclass(frozen=True)
class Setup:
    """How an agent runs here: its retry bounds, and the session's mode."""

    env: dict[str, str] | None = None
    settings: dict[str, Any] | None = None
    mode: str | None = None


QWEN_RETRIES = {"maxRetries": 1, "retryInitialDelayMs": 100, "retryMaxDelayMs": 200}
SETUPS = {
    # mode default: auto and plan add a notice about the base URL to the first answer
    "claude": Setup(env={"CLAUDE_CODE_MAX_RETRIES": "2"}, mode="default"),
    "qwen": Setup(settings={"model": {"generationConfig": QWEN_RETRIES}}),
}


async def start(tmp_path: Path, model: ModelServer, agent: str) -> tuple[TestEditor, str]:
    ws = tmp_path / "ws"
    ws.mkdir()
    setup = SETUPS[agent]
    editor = await start_agent(tmp_path, ws, agent, model, env=setup.env, settings=setup.settings)
    return editor, await open_session(editor, setup.mode)


def fast_429(times: int) -> Fault:
    """429 with a short retry-after-ms, which every layer of Qwen's retries honours."""
    return Fault("status", 429, {"retry-after-ms": "20"}, times=times)


def fast_503(times: int) -> Fault:
    return Fault("status", 503, {"retry-after-ms": "20"}, times=times)


CLAUDE_FAULTS = {
    "429": Expect(
        lambda n: rate_limited(RETRY_AFTER, n),
        True,
        "API Error: Request rejected (429) · This request would exceed the rate limit",
        said="API Error: Request rejected (429)",
        waits=RETRY_AFTER,
    ),
    "529": Expect(
        lambda n: overloaded(529, n),
        True,
        "API Error: Repeated 529 Overloaded errors",
        said="API Error: Repeated 529 Overloaded errors",
    ),
    "500": Expect(
        server_error,
        True,
        "API Error: 500 Internal server error",
        said="API Error: 500 Internal server error",
    ),
    # a 401 is retried once as a credential re-check; when it stays, Claude asks to log in
    "401": Expect(
        bad_key,
        True,
        "agent 'claude' requires authentication",
        said="Invalid API key",
        code=p.AUTH_REQUIRED,
    ),
    "html": Expect(
        lambda n: html_page(502, n),
        True,
        "API Error: 502 Bad Gateway",
        said="API Error: 502 Bad Gateway",
    ),
    # cut after the first words: seen before the retry's whole answer in 2 runs of 8 under load
    "cut": Expect(
        lambda n: cut_stream(3, n),
        True,
        "API Error: Connection to the API was lost (ECONNRESET)",
        said="Connection to the API was lost",
        cut=True,
    ),
    "malformed": Expect(
        lambda n: malformed_sse(3, n),
        True,
        "API Error: JSON Parse error",
        said="API Error: JSON Parse error",
    ),
}
QWEN_FAULTS = {
    # Qwen answers a 429 that stays with its own words (the API's reason is not passed on)
    "429": Expect(lambda n: rate_limited(RETRY_AFTER, n), True, None, waits=RETRY_AFTER),
    "429-gives-up": Expect(fast_429, True, "Rate limit exceeded. Try again later."),
    "503": Expect(fast_503, True, "503 The server is overloaded or not ready yet."),
    "500": Expect(server_error, True, None),
    "401": Expect(bad_key, False, "401 Incorrect API key provided"),
    "html": Expect(lambda n: html_page(502, n), True, None),
    # Qwen passes a proxy's page on whole; the bridge shows its title (a 503: waited out fast)
    "html-gives-up": Expect(
        lambda n: Fault("html", 503, {"retry-after-ms": "20"}, times=n),
        True,
        "503 Service Unavailable (an HTML error page)",
    ),
    # a cut after some text: Qwen asks the model to go on from there (3 times), then gives
    # up with undici's word for it; the text it got stays
    "cut": Expect(lambda n: cut_stream(3, n), True, "terminated"),
    "malformed": Expect(lambda n: malformed_sse(3, n), False, "Unterminated string in JSON"),
}


async def play(editor: TestEditor, model: ModelServer, sid: str, expect: Expect) -> None:
    """One fault, then the same fault to stay, then a normal prompt."""
    prompts = 1
    model.inject(expect.fault(1))
    if expect.retried:
        await answered(editor, sid, "Say something.", cut=expect.cut)
        refused, retried = model.turn_requests()[:2]
        assert [r for _, r in model.faulted] == [refused]
        assert retried.at - refused.at >= expect.waits
    else:
        error = await prompt_error(editor, sid, "Say something.")
        assert error.code == expect.code and expect.error and expect.error in error.message
        assert editor.statuses[sid][-1]["error"]["message"] == error.message
    if expect.retried and expect.error is not None:
        prompts += 1
        model.inject(expect.fault(PERMANENT))
        error = await prompt_error(editor, sid, "Say it again.")
        model.clear_faults()
        assert error.code == expect.code and expect.error in error.message
        last = editor.statuses[sid][-1]
        assert last["status"] == "idle" and last["error"]["message"] == error.message
        if expect.said is not None:
            assert expect.said in reply(editor, sid)
    prompts += 1
    await answered(editor, sid, "Once more, please.")
    await history_is_what_was_shown(editor, sid, prompts)


@pytest.mark.parametrize(
    ("agent", "name"),
    [
        (a, n)
        for a, faults in (("claude", CLAUDE_FAULTS), ("qwen", QWEN_FAULTS))
        for n in sorted(faults)
    ],
)
async def test_model_fault(tmp_path: Path, model: ModelServer, agent: str, name: str) -> None:
    model.script = every_turn_answers()
    editor, sid = await start(tmp_path, model, agent)
    await play(editor, model, sid, {"claude": CLAUDE_FAULTS, "qwen": QWEN_FAULTS}[agent][name])
    await editor.shutdown_session()


@pytest.mark.parametrize("agent", ["claude", "qwen"])
async def test_cancel_during_a_stalled_stream_ends_the_turn_at_once(
    tmp_path: Path, model: ModelServer, agent: str
) -> None:
    model.script = every_turn_answers()
    editor, sid = await start(tmp_path, model, agent)
    await cancel_during_a_stall(editor, model, sid, after=3)
    await editor.shutdown_session()


@pytest.mark.parametrize("agent", ["claude", "qwen"])
async def test_a_10_mb_answer_reaches_the_editor_whole(
    tmp_path: Path, model: ModelServer, agent: str
) -> None:
    model.script = huge_answer(10 * 1024 * 1024)
    editor, sid = await start(tmp_path, model, agent)
    await a_huge_answer_arrives_whole(editor, model, sid)
    await editor.shutdown_session()


@pytest.mark.parametrize(
    ("agent", "fault"),
    [("claude", cut_stream(3, PERMANENT)), ("qwen", malformed_sse(3, PERMANENT))],
)
async def test_the_stored_history_keeps_a_failed_turn_as_shown(
    tmp_path: Path, model: ModelServer, agent: str, fault: Fault
) -> None:
    """After a restart of acp-lsp the session's stored copy is what the user saw: the
    prompt, the text before the fault, the agent's message about it."""
    model.script = every_turn_answers()
    editor, sid = await start(tmp_path, model, agent)
    model.inject(fault)
    await prompt_error(editor, sid, "Say something.")
    model.clear_faults()
    shown = editor.sessions[sid].view()
    assert reply(editor, sid)  # some text reached the user before the fault
    await editor.shutdown_session()

    editor = await start_agent(tmp_path, tmp_path / "ws", agent, model)
    stored = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    assert stored["status"] == "stored"
    assert view_of(stored)["messages"] == shown["messages"]
    await editor.shutdown_session()
