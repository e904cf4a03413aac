"""Benchmark section: the session history (issue 12), measured through the real server.

Streaming throughput with history on vs off (alternating, same run), the time an editor
waits for acp/listSessions over 1,000 stored sessions and for acp/getSession of a stored
10,000-message session, and the database size per 1,000 messages.
"""

from __future__ import annotations

import os
from typing import Any

CHUNK_SIZE = 40


def run(r: Any, section: Any, median: Any, fmt: Any) -> Any:
    n = r.p.stream_n
    sessions, messages = (50, 500) if r.p.quick else (1_000, 10_000)
    on: list[float] = []
    off: list[float] = []
    for rep in range(r.p.repeats):
        for mode in ("on", "off") if rep % 2 == 0 else ("off", "on"):
            os.environ["BENCH_HISTORY"] = mode
            try:
                result = r.py("lsp_client.py", "flood", n, CHUNK_SIZE)
            finally:
                os.environ.pop("BENCH_HISTORY", None)
            if "error" not in result:
                (on if mode == "on" else off).append(n / result["seconds"])
    ratios = [a / b for a, b in zip(on, off, strict=False)]
    sec = section(
        "History — throughput with history on vs off, listing and opening stored sessions",
        ["measure", "value"],
        data={"on": on, "off": off},
    )
    ratio = median(ratios)
    sec.rows.append(["streaming chunks/s, history on (median)", fmt(median(on))])
    sec.rows.append(["streaming chunks/s, history off (median)", fmt(median(off))])
    sec.rows.append(["on ÷ off (per-pair median)", f"{ratio:.2f}×"])
    sec.goal(
        "history: throughput on ÷ off",
        f"{ratio:.2f}×",
        "≥ 0.95×",
        ratio >= 0.95 if ratios else None,
    )
    runs = [r.py("history_client.py", sessions, messages) for _ in range(3 if not r.p.quick else 1)]
    good = [x for x in runs if "error" not in x]
    for err in sorted({x["error"] for x in runs if "error" in x}):
        sec.notes.append(err)
    if good:
        page, everything = (
            median([x["list_page_ms"] for x in good]),
            median([x["list_all_ms"] for x in good]),
        )
        search, opened = (
            median([x["search_ms"] for x in good]),
            median([x["open_long_ms"] for x in good]),
        )
        first = median([x["first_list_ms"] for x in good])
        per_k = good[0]["db_bytes"] / ((sessions * 2 + messages) / 1000)
        sec.rows += [
            [
                f"acp/listSessions, first page of 50 of {sessions:,} (store already open)",
                f"{page:.1f} ms",
            ],
            [f"acp/listSessions, all {sessions:,} sessions", f"{everything:.1f} ms"],
            ["acp/listSessions with a search query", f"{search:.1f} ms"],
            [f"acp/getSession of a stored {messages:,}-message session", f"{opened:.1f} ms"],
            ["first acp/listSessions (starts the agent, opens the store)", f"{first:.1f} ms"],
            ["database size per 1,000 messages", f"{per_k / 1024:.0f} KiB"],
        ]
        sec.goal(
            f"history: list {sessions:,} sessions",
            f"{everything:.0f} ms",
            "< 200 ms",
            everything < 200,
        )
        sec.goal(
            f"history: open a {messages:,}-message session",
            f"{opened:.0f} ms",
            "< 200 ms",
            opened < 200,
        )
        sec.data.update({"runs": good, "bytes_per_1000_messages": per_k})
    sec.notes.append(
        "Times are what an editor waits for the response (request sent → result parsed), "
        "medians of 3 runs; messages of the long session are ~170 characters of text."
    )
    return sec
