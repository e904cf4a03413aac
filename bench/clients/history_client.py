"""Client: the session history store through the real server.

    history_client.py SESSIONS MESSAGES

Fills a fresh store with SESSIONS small sessions and one of MESSAGES messages (written with
the store's own code, as the recorder would), then starts ``python -m acp_lsp`` on it and
times, as an editor sees them: acp/listSessions (a first page of 50, and everything),
a search, and acp/getSession of the long session. Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, emit
from lsp_client import request, start, stop

sys.path.insert(0, str(ROOT))
from acp_lsp.history.store import Batch, HistoryStore, SessionRow


def fill(path: Path, sessions: int, messages: int) -> None:
    store = HistoryStore(path)
    store.open()
    batch = Batch()
    for i in range(sessions):
        sid = f"s-{i:05d}"
        stamp = f"2026-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000000Z"
        batch.sessions.append(SessionRow(sid, "demo", stamp, stamp, cwd="/w", title=f"task {i}"))
        for idx, text in enumerate((f"please do task {i}", f"done with task {i}")):
            content = json.dumps([{"type": "text", "text": text}])
            batch.messages.append(
                (sid, idx, idx, "user" if idx == 0 else "agent", None, content, text)
            )
    stamp = "2026-02-01T00:00:00.000000Z"
    batch.sessions.append(
        SessionRow("long", "demo", stamp, stamp, cwd="/w", message_count=messages)
    )
    for idx in range(messages):
        text = f"message {idx}: " + "a sentence of a long conversation, " * 4
        content = json.dumps([{"type": "text", "text": text}])
        batch.messages.append(("long", idx, idx, "agent", None, content, text.casefold()))
    store.write(batch)
    store.close()


async def timed(editor: object, method: str, params: dict[str, object]) -> tuple[float, object]:
    t0 = time.perf_counter()
    result = await request(editor, method, params)  # type: ignore[arg-type]
    return (time.perf_counter() - t0) * 1000, result


async def main(sessions: int, messages: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / ".data"
        fill(data / "history.sqlite3", sessions, messages)
        size = (data / "history.sqlite3").stat().st_size
        os.environ["ACP_LSP_DATA_DIR"] = str(data)
        editor, _pid, _init = await start(work, {})
        try:
            out: dict[str, float] = {}
            # the first request opens the store: report it apart
            out["first_list_ms"], _ = await timed(
                editor, "acp/listSessions", {"agent": "demo", "limit": 50}
            )
            out["list_page_ms"], _ = await timed(
                editor, "acp/listSessions", {"agent": "demo", "limit": 50}
            )
            out["list_all_ms"], everything = await timed(
                editor, "acp/listSessions", {"agent": "demo"}
            )
            out["search_ms"], found = await timed(editor, "acp/listSessions", {"query": "TASK 777"})
            out["open_long_ms"], snap = await timed(editor, "acp/getSession", {"sessionId": "long"})
        finally:
            await stop(editor)
    assert len(everything["sessions"]) == sessions + 1, len(everything["sessions"])  # type: ignore[index]
    assert len(snap["messages"]) == messages  # type: ignore[index]
    emit(
        {
            **out,
            "db_bytes": size,
            "sessions": sessions,
            "messages": messages,
            "found": len(found["sessions"]),
        }
    )  # type: ignore[index]


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
