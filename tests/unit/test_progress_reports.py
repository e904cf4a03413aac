"""Turn progress reports the running tool call's title, at most every REPORT_EVERY_S."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from lsprotocol import types

from acp_lsp.editor import progress as progress_module
from acp_lsp.editor.progress import TurnProgress


class RecordingProgress:
    """The server's work_done_progress, recording what the editor would receive."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.tokens: dict[str | int, Any] = {}

    def begin(self, token: str, value: types.WorkDoneProgressBegin) -> None:
        self.sent.append(("begin", value.title))

    def report(self, token: str, value: types.WorkDoneProgressReport) -> None:
        self.sent.append(("report", value.message))

    def end(self, token: str, value: types.WorkDoneProgressEnd) -> None:
        self.sent.append(("end", value.message))


@pytest.fixture
async def begun(monkeypatch: pytest.MonkeyPatch) -> tuple[TurnProgress, RecordingProgress]:
    """A turn of session s1 whose progress has begun, with a short report interval."""
    monkeypatch.setattr(progress_module, "REPORT_EVERY_S", 0.05)
    recorder = RecordingProgress()
    server = SimpleNamespace(work_done_progress=recorder, client_capabilities=None)
    progress = TurnProgress(server)  # type: ignore[arg-type]
    await progress.begin("s1", "demo", "token-1")
    return progress, recorder


def running(title: str) -> dict[str, Any]:
    return {"toolCallId": title, "title": title, "status": "in_progress"}


async def wait_for_reports(recorder: RecordingProgress, count: int) -> None:
    for _ in range(500):
        if sum(kind == "report" for kind, _ in recorder.sent) >= count:
            return
        await asyncio.sleep(0.01)


async def test_a_burst_of_tool_calls_sends_the_first_and_then_the_newest_title(
    begun: tuple[TurnProgress, RecordingProgress],
) -> None:
    progress, recorder = begun
    for k in range(200):
        progress.report("s1", running(f"Read file {k}"))
    await wait_for_reports(recorder, 2)
    await asyncio.sleep(0.1)  # nothing else is held back
    progress.end("s1", "done")
    assert recorder.sent == [
        ("begin", "demo: working"),
        ("report", "Read file 0"),
        ("report", "Read file 199"),
        ("end", "done"),
    ]


async def test_a_report_held_back_is_dropped_when_the_turn_ends(
    begun: tuple[TurnProgress, RecordingProgress],
) -> None:
    progress, recorder = begun
    progress.report("s1", running("Read a"))
    progress.report("s1", running("Read b"))
    progress.end("s1")
    await asyncio.sleep(0.1)
    assert recorder.sent == [("begin", "demo: working"), ("report", "Read a"), ("end", None)]
    # the next turn of the session starts afresh: its first title is sent at once
    await progress.begin("s1", "demo", "token-2")
    progress.report("s1", running("Read c"))
    assert recorder.sent[-1] == ("report", "Read c")
