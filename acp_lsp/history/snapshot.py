"""A stored session read back whole: the SessionSnapshot an editor opens (acp/getSession).

Runs in the store's thread, on its connection (``HistoryStore.snapshot``).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from acp_lsp.session.checkpoints import mark_messages, stored_ordinals

JsonObject = dict[str, Any]


@dataclass
class SessionRow:
    id: str
    agent: str
    created_at: str
    updated_at: str
    agent_session_id: str | None = None
    protocol: str | None = None
    cwd: str | None = None
    title: str | None = None
    status: str | None = None
    message_count: int = 0
    extras: JsonObject | None = None


def stored_snapshot(db: sqlite3.Connection, row: SessionRow) -> JsonObject:
    """The stored SessionSnapshot of ``row``'s session (status "stored")."""
    session_id = row.id
    appended: dict[int, list[str]] = {}
    for idx, text in db.execute(
        "SELECT idx, text FROM message_appends WHERE session_id=? ORDER BY rowid",
        (session_id,),
    ):
        appended.setdefault(idx, []).append(text)
    rows = db.execute(
        "SELECT idx, pos, role, message_id, content FROM messages WHERE session_id=? ORDER BY idx",
        (session_id,),
    ).fetchall()
    # One parse of every row's JSON text joined, not one per row: half the time for a
    # 10,000-message session (the texts are the store's own json.dumps output).
    contents = parse_all([row[4] for row in rows])
    if appended:
        for i, (idx, *_) in enumerate(rows):
            if idx in appended:
                contents[i] = _with_appended(contents[i], appended[idx])
    messages: list[JsonObject] = [
        {"role": role, "content": content}
        if message_id is None
        else {"messageId": message_id, "role": role, "content": content}
        for (_, _, role, message_id, _), content in zip(rows, contents, strict=True)
    ]
    order: list[tuple[int, JsonObject]] = [
        (pos, {"message": i}) for i, (_, pos, *_) in enumerate(rows)
    ]
    call_rows = db.execute(
        "SELECT tool_call_id, pos, state FROM tool_calls WHERE session_id=? ORDER BY pos",
        (session_id,),
    ).fetchall()
    calls: list[JsonObject] = parse_all([row[2] for row in call_rows])
    order += [(pos, {"toolCall": tool_call_id}) for tool_call_id, pos, _ in call_rows]
    order.sort(key=lambda item: item[0])
    snapshot: JsonObject = {
        "sessionId": row.id,
        "agent": row.agent,
        "cwd": row.cwd or "",
        "status": "stored",
        "seq": 0,
        "messages": messages,
        "toolCalls": calls,
        "timeline": [entry for _, entry in order],
        "createdAt": row.created_at,
        "updatedAt": row.updated_at,
    }
    if row.title:
        snapshot["title"] = row.title
    extras = dict(row.extras or {})
    # the trees behind the checkpoints are the bridge's: the editor sees which messages
    # have one
    snapshot["messages"] = mark_messages(messages, stored_ordinals(extras.pop("checkpoints", 0)))
    snapshot.update(extras)
    return snapshot


def parse_all(texts: list[str]) -> list[Any]:
    """The JSON values of ``texts`` (each a whole JSON text), parsed in one call."""
    values: list[Any] = json.loads("[" + ",".join(texts) + "]")
    return values


def _with_appended(blocks: Any, parts: list[str]) -> Any:
    if blocks and isinstance(blocks, list) and isinstance(blocks[-1], dict):
        last = blocks[-1]
        if last.get("type") == "text":
            # Only ever written after a text block (the recorder rewrites the message otherwise).
            blocks[-1] = {**last, "text": str(last.get("text", "")) + "".join(parts)}
    return blocks
