"""The history's end never drops a write under way (acp_lsp/history/recorder.py).

The server's end (``shutdown``, then ``exit``) cancels the periodic writer and writes once
more. A batch the writer had already taken, waiting for the store's thread (a slow disk, a
loaded machine), was dropped with the cancel: the session's row said three messages, its
stored copy had none (tests/reliability/test_server_ends.py, once in a full run).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from acp_lsp.history.store import HistoryStore
from tests.unit.test_history_appends import Harness, chunk


async def test_a_write_waiting_for_the_store_when_the_history_closes_is_stored(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path / "h.sqlite3")
    h.recorder.interval = 0.0
    await h.start()
    store = await h.recorder.store()
    assert store is not None
    busy = threading.Event()
    store.submit(busy.wait)  # the store's thread is held up
    h.recorder.observe(h.session, h.session.apply_update(chunk("There are three zebras.")))
    await asyncio.sleep(0.1)  # the periodic writer took the batch; its write waits
    asyncio.get_running_loop().call_later(0.2, busy.set)
    await h.recorder.close()

    reopened = HistoryStore(h.path)
    await reopened.run(reopened.open)
    stored: dict[str, Any] = await reopened.run(reopened.snapshot, "s1")
    reopened.shutdown()
    assert [m["content"] for m in stored["messages"]] == [
        [{"type": "text", "text": "There are three zebras."}]
    ]


async def test_a_read_after_a_flush_under_way_sees_its_write(tmp_path: Path) -> None:
    # acp/loadSession reads the stored copy after a flush: when the periodic writer had just
    # taken the batch, its write must already be queued before that read (once it was not:
    # the read found no session, and Claude's resume failed instead of priming)
    h = Harness(tmp_path / "h.sqlite3")
    await h.start()
    h.recorder.observe(h.session, h.session.apply_update(chunk("There are three zebras.")))
    writer = asyncio.ensure_future(h.recorder.flush())  # as the periodic writer does
    await asyncio.sleep(0)  # it took the batch and waits for its write
    await h.recorder.flush()  # nothing left to take
    stored = await h.stored()
    await writer
    assert len(stored["messages"]) == 1
