"""The line of queued prompts (acp_lsp/turn_queue.py): order, one start per turn's end,
withdrawals."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_lsp.turn_queue import PromptQueue


class Running:
    """Whether the session's turn runs, as the hub would say."""

    def __init__(self) -> None:
        self.now = True

    def __call__(self) -> bool:
        return self.now


def queue() -> PromptQueue:
    editor: Any = None  # no session is known: nothing is told
    return PromptQueue({}, editor)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_no_turn_and_no_line_goes_at_once() -> None:
    assert await queue().wait_turn("s", lambda: False) is True


async def test_one_goes_per_turn_end_in_order_even_before_its_turn_registers() -> None:
    q, running = queue(), Running()
    a = asyncio.ensure_future(q.wait_turn("s", running))
    b = asyncio.ensure_future(q.wait_turn("s", running))
    await settle()
    assert q.count("s") == 2
    running.now = False
    q.turn_ended("s")
    await settle()
    assert a.done() and a.result() is True and not b.done()
    # a's turn has not registered yet (running is still False), and something wakes the
    # line: b must not slip in beside it
    for place in q._lines["s"]:
        place.wake.set()
    await settle()
    assert not b.done()
    q.turn_ended("s")  # a's turn ended
    await settle()
    assert b.result() is True and q.count("s") == 0


async def test_withdrawn_all_and_one_by_cancel() -> None:
    q, running = queue(), Running()
    a = asyncio.ensure_future(q.wait_turn("s", running))
    b = asyncio.ensure_future(q.wait_turn("s", running))
    c = asyncio.ensure_future(q.wait_turn("s", running))
    await settle()
    b.cancel()  # $/cancelRequest on b: answered as withdrawn, not an error
    await settle()
    assert b.result() is False and q.count("s") == 2
    q.withdraw_all("s")
    await settle()
    assert a.result() is False and c.result() is False and q.count("s") == 0
