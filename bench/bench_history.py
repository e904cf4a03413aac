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
    # alternately with --against: this tree, then the other one, in each round
    rounds = 1 if r.p.quick else 5
    by_variant: dict[bool, list[Any]] = {before: [] for before in r.variants()}
    for _ in range(rounds):
        for before in r.variants():
            by_variant[before].append(r.py("history_client.py", sessions, messages, before=before))
    for before, runs in by_variant.items():
        _store_rows(sec, runs, sessions, messages, median, before)
    sec.notes.append(
        "Times are what an editor waits for the response (request sent → result parsed), "
        "medians of 5 runs (the slowest in brackets); messages of the long session are ~170 "
        "characters of text. With --against, the rows marked (before) are the other tree's, "
        "measured alternately with this one."
    )
    return sec


def _store_rows(
    sec: Any, runs: list[Any], sessions: int, messages: int, median: Any, before: bool
) -> None:
    good = [x for x in runs if "error" not in x]
    for err in sorted({x["error"] for x in runs if "error" in x}):
        sec.notes.append(err)
    if not good:
        return
    tag = " (before)" if before else ""

    def ms(key: str) -> str:
        values = [x[key] for x in good]
        return f"{median(values):.1f} ms [{max(values):.0f}]"

    everything = median([x["list_all_ms"] for x in good])
    opened = median([x["open_long_ms"] for x in good])
    slowest = max(x["open_long_ms"] for x in good)
    per_k = good[0]["db_bytes"] / ((sessions * 2 + messages) / 1000)
    sec.rows += [
        [
            f"acp/listSessions, first page of 50 of {sessions:,} (store already open){tag}",
            ms("list_page_ms"),
        ],
        [f"acp/listSessions, all {sessions:,} sessions{tag}", ms("list_all_ms")],
        [f"acp/listSessions with a search query{tag}", ms("search_ms")],
        [f"acp/getSession of a stored {messages:,}-message session{tag}", ms("open_long_ms")],
        [f"first acp/listSessions (starts the agent, opens the store){tag}", ms("first_list_ms")],
        [f"database size per 1,000 messages{tag}", f"{per_k / 1024:.0f} KiB"],
    ]
    if before:
        sec.data["before"] = {"runs": good}
        return
    sec.goal(
        f"history: list {sessions:,} sessions", f"{everything:.0f} ms", "< 200 ms", everything < 200
    )
    sec.goal(
        f"history: open a {messages:,}-message session (slowest of {len(good)})",
        f"{opened:.0f} ms (slowest {slowest:.0f})",
        "< 200 ms",
        slowest < 200,
    )
    sec.data.update({"runs": good, "bytes_per_1000_messages": per_k})
