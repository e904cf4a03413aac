"""Load: a soak of 200 consecutive turns, and 20 concurrent sessions across two agents.

Every turn streams 11 numbered chunks, asks a permission, writes a file through the editor
(applyEdit, landing check, save) and completes a tool call (scripts/soak_turn.json). Checked:
every chunk arrives once and in order, every permission prompt is answered exactly once,
every write lands, the editor's model equals the server's snapshot, and the server's RSS
stays within a bound once warm.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.agents import read_log
from tests.reliability.conftest import (
    Bridge,
    record_figure,
    rss_kib,
    script,
    scripted,
)
from tests.support.editor_model import view_of
from tests.support.lsp_editor import TestEditor

SOAK_TURNS = 200
SESSIONS = 20
TURNS_PER_SESSION = 5
WARM_TURNS = 20
RSS_GROWTH_BOUND_KIB = 16 * 1024  # after warm-up; measured growth was about 1 MiB

TURN_TEXT = re.compile(
    r"^<(\d+)\.0>" + "".join(rf"<\1\.{k}>" for k in range(1, 10)) + r"<\1\.end>$"
)


def check_turns(editor: TestEditor, sid: str, turns: int) -> list[int]:
    """Each turn's agent message is its 11 chunks, whole and in order; returns the turn numbers."""
    texts = editor.sessions[sid].message_texts()
    assert len(texts) == 2 * turns, texts[-4:]
    numbers = []
    for index in range(turns):
        assert texts[2 * index] == f"turn {index}"
        match = TURN_TEXT.match(texts[2 * index + 1])
        assert match, texts[2 * index + 1]
        numbers.append(int(match.group(1)))
    calls = editor.sessions[sid].tool_calls
    assert [calls[f"edit-{n}"]["status"] for n in numbers] == ["completed"] * turns
    return numbers


def permission_answers(log: Path) -> Counter[Any]:
    """How many answers each permission request of the agent got."""
    return Counter(
        m["id"] for m in read_log(log) if "method" not in m and "outcome" in (m.get("result") or {})
    )


async def same_as_server(editor: TestEditor, sid: str) -> None:
    snapshot = await editor.acp("acp/getSession", {"sessionId": sid})
    model = editor.sessions[sid]
    assert model.seq == snapshot["seq"]
    assert model.view() == view_of(snapshot)


@pytest.mark.heavy
@pytest.mark.timeout(300)
async def test_soak_200_turns(bridge: Bridge, tmp_path: Path, workspace: Path) -> None:
    log = tmp_path / "agent.log"
    editor = await bridge.start(
        {"soak": scripted(script("soak_turn"), pids=tmp_path / "p", log=log)}
    )
    pid = bridge.server_pid(editor)
    sid = (await editor.new_session())["sessionId"]
    warm = 0
    peak = 0
    loop = asyncio.get_running_loop()
    started = loop.time()
    for turn in range(SOAK_TURNS):
        assert (await editor.prompt(sid, f"turn {turn}"))["stopReason"] == "end_turn"
        if turn + 1 == WARM_TURNS:
            warm = rss_kib(pid)
        peak = max(peak, rss_kib(pid))
    elapsed = loop.time() - started
    final = rss_kib(pid)

    numbers = check_turns(editor, sid, SOAK_TURNS)
    assert numbers == list(range(1, SOAK_TURNS + 1))
    answers = permission_answers(log)
    assert len(answers) == SOAK_TURNS and set(answers.values()) == {1}
    assert len(editor.permission_requests) == SOAK_TURNS
    target = workspace / "soak" / f"{sid}.txt"
    assert target.read_text(encoding="utf-8") == f"turn {SOAK_TURNS}\n"
    assert editor.doc(target).text == f"turn {SOAK_TURNS}\n"
    await same_as_server(editor, sid)
    assert final - warm < RSS_GROWTH_BOUND_KIB, (warm, final)
    record_figure(
        "soak",
        {
            "turns": SOAK_TURNS,
            "seconds": round(elapsed, 1),
            "rss_warm_kib": warm,
            "rss_final_kib": final,
            "rss_peak_kib": peak,
            "notifications": editor.sessions[sid].seq,
        },
    )


@pytest.mark.heavy
@pytest.mark.timeout(300)
async def test_20_concurrent_sessions_across_two_agents(
    bridge: Bridge, tmp_path: Path, workspace: Path
) -> None:
    logs = {name: tmp_path / f"{name}.log" for name in ("alpha", "beta")}
    agents = {
        name: scripted(
            {**script("soak_turn"), "session_ids": [f"{name}-{i}" for i in range(1, 99)]},
            pids=tmp_path / f"{name}.pids",
            log=log,
        )
        for name, log in logs.items()
    }
    editor = await bridge.start(agents, profile="visual_studio_code")
    rng = random.Random(7)

    async def answer_later(params: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(rng.random() * 0.02)  # prompts overlap and resolve out of order
        return {"outcome": {"outcome": "selected", "optionId": "allow"}}

    editor.permission_policy = answer_later
    sids = [
        (await editor.new_session(agent="alpha" if i % 2 else "beta"))["sessionId"]
        for i in range(SESSIONS)
    ]
    assert len(set(sids)) == SESSIONS  # colliding agent ids get distinct editor ids

    async def run(sid: str) -> None:
        for turn in range(TURNS_PER_SESSION):
            assert (await editor.prompt(sid, f"turn {turn}"))["stopReason"] == "end_turn"

    pid = bridge.server_pid(editor)
    before = rss_kib(pid)
    await asyncio.gather(*(run(sid) for sid in sids))
    after = rss_kib(pid)

    for sid in sids:
        numbers = check_turns(editor, sid, TURNS_PER_SESSION)
        assert numbers == sorted(numbers)  # a session's turns in order
        await same_as_server(editor, sid)
        written = (workspace / "soak" / f"{sid}.txt").read_text(encoding="utf-8")
        assert written == f"turn {numbers[-1]}\n"
    total = SESSIONS * TURNS_PER_SESSION
    answered = sum(permission_answers(log).total() for log in logs.values())
    assert answered == total
    for log in logs.values():
        assert set(permission_answers(log).values()) == {1}
    assert len(editor.permission_requests) == total
    record_figure(
        "concurrency",
        {"sessions": SESSIONS, "turns": total, "rss_before_kib": before, "rss_after_kib": after},
    )
