"""Answering the tool calls a ``tool_use`` stop left open (reference/aap.md §5).

Client-side tools run in the bridge; every other call (an untrusted server tool, or one the
bridge never saw declared) becomes a permission prompt. The answers go back together in one
turn request. Tool-call state changes are applied to the Session and published as they happen.
"""

from __future__ import annotations

from typing import Any

from acp_lsp.backends.aap_events import ToolUse, TurnMapper, tool_content, unresolved_tool_uses
from acp_lsp.backends.aap_tools import run_client_tool
from acp_lsp.backends.base import EditorPort
from acp_lsp.session import Session

JsonObject = dict[str, Any]

PERMISSION_OPTIONS: tuple[JsonObject, ...] = (
    {"optionId": "allow_once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
)
CANCELLED_CALL = "Tool call cancelled by the user"
CANCELLED_REASON = "cancelled by the user"


def upsert(editor: EditorPort, session: Session, fields: JsonObject) -> None:
    updates = session.upsert_tool_call(fields)
    if updates:
        editor.publish(session, updates)


async def resolve_calls(
    editor: EditorPort,
    session: Session,
    client_tools: frozenset[str],
    mapper: TurnMapper,
    pending: list[ToolUse],
) -> list[JsonObject]:
    """Run client tools and ask about the rest, in call order; the turn's answer messages."""
    answers: list[JsonObject] = []
    for call in pending:
        if call.name in client_tools:
            answers.append(await _run_client_tool(editor, session, mapper, call))
        else:
            answers.append(await _ask_permission(editor, session, mapper, call))
        mapper.answered.add(call.tool_call_id)
    return answers


async def _run_client_tool(
    editor: EditorPort, session: Session, mapper: TurnMapper, call: ToolUse
) -> JsonObject:
    call_id = call.tool_call_id
    paths = [loc["path"] for loc in mapper.locations(call.name, call.input)]
    if paths:
        editor.note_paths(session, paths)
    upsert(editor, session, {"toolCallId": call_id, "status": "in_progress"})
    outcome = await run_client_tool(editor, session, call.name, call.input)
    status = "completed" if outcome.ok else "failed"
    upsert(editor, session, {"toolCallId": call_id, "status": status, "content": outcome.display})
    return {"role": "tool", "toolCallId": call_id, "content": outcome.result}


async def _ask_permission(
    editor: EditorPort, session: Session, mapper: TurnMapper, call: ToolUse
) -> JsonObject:
    call_id = call.tool_call_id
    tool_call = session.tool_call(call_id) or {"toolCallId": call_id, "title": call.name}
    answer = await editor.request_permission(
        session, tool_call, [dict(o) for o in PERMISSION_OPTIONS]
    )
    if answer.option_id == "allow_once":
        mapper.granted.add(call_id)
        upsert(editor, session, {"toolCallId": call_id, "status": "in_progress"})
        return {"role": "tool_permission", "toolCallId": call_id, "granted": True}
    # rejected, dismissed or cancelled: all deny
    mapper.denied.add(call_id)
    reason = answer.reason or None
    text = f"Tool call denied: {reason}" if reason else "Tool call denied"
    upsert(
        editor, session, {"toolCallId": call_id, "status": "failed", "content": tool_content(text)}
    )
    message: JsonObject = {"role": "tool_permission", "toolCallId": call_id, "granted": False}
    if reason:
        message["reason"] = reason
    return message


def cancelled_answers(history: list[Any], client_tools: frozenset[str]) -> list[JsonObject]:
    """ "Cancelled" answers for the calls an interrupted turn left open in ``history``."""
    answers: list[JsonObject] = []
    for block in unresolved_tool_uses(history):
        call_id = block["toolCallId"]
        if block.get("name") in client_tools:
            answers.append({"role": "tool", "toolCallId": call_id, "content": CANCELLED_CALL})
        else:
            answers.append(
                {
                    "role": "tool_permission",
                    "toolCallId": call_id,
                    "granted": False,
                    "reason": CANCELLED_REASON,
                }
            )
    return answers
