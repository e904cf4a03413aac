"""Scripted-agent steps in the exact shapes real agents report edits (reference/editor-clients.md
§1), and the review calls a test makes: shared by the review tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_lsp import protocol as p
from tests.support.lsp_editor import TestEditor

JsonObject = dict[str, Any]


def update(**fields: Any) -> JsonObject:
    return {"update": fields}


def diff(rel: str, old: str | None, new: str) -> JsonObject:
    return {"type": "diff", "path": "{cwd}/" + rel, "oldText": old, "newText": new}


def permission(call_id: str, rel: str, title: str) -> JsonObject:
    return {
        "request": "session/request_permission",
        "params": {
            "sessionId": "{sessionId}",
            "toolCall": {
                "toolCallId": call_id,
                "title": title,
                "rawInput": {"file_path": "{cwd}/" + rel},
            },
            "options": [
                {"optionId": "allow-once", "name": "Yes", "kind": "allow_once"},
                {"optionId": "reject", "name": "No", "kind": "reject_once"},
            ],
        },
    }


def claude_write(call_id: str, rel: str, content: str) -> list[JsonObject]:
    """claude-agent-acp 0.23.1 Write: named in rawInput, allowed, written, then reported with
    ``oldText: null``. (The permission answer also orders the agent's disk write after the
    bridge has seen the tool call, as the model's streaming does for the real agent.)"""
    return [
        update(
            sessionUpdate="tool_call",
            toolCallId=call_id,
            title="Write " + rel,
            kind="edit",
            status="pending",
            rawInput={"file_path": "{cwd}/" + rel, "content": content},
        ),
        permission(call_id, rel, "Write " + rel),
        {"write_file": {"path": rel, "content": content}},
        update(
            sessionUpdate="tool_call_update",
            toolCallId=call_id,
            status="completed",
            content=[diff(rel, None, content)],
            locations=[{"path": "{cwd}/" + rel}],
        ),
    ]


def claude_edit(call_id: str, rel: str, old: str, new: str, after: str) -> list[JsonObject]:
    """claude-agent-acp Edit: locations, snippet diff, permission, disk write, completed."""
    return [
        update(
            sessionUpdate="tool_call",
            toolCallId=call_id,
            title="Edit",
            kind="edit",
            status="pending",
            content=[],
            locations=[],
        ),
        update(
            sessionUpdate="tool_call_update",
            toolCallId=call_id,
            title="Edit " + rel,
            locations=[{"path": "{cwd}/" + rel}],
        ),
        update(
            sessionUpdate="tool_call_update",
            toolCallId=call_id,
            content=[diff(rel, old, new)],
            rawInput={"file_path": "{cwd}/" + rel, "old_string": old, "new_string": new},
        ),
        permission(call_id, rel, "Edit " + rel),
        {"write_file": {"path": rel, "content": after}},
        update(sessionUpdate="tool_call_update", toolCallId=call_id, status="completed"),
    ]


def write_then_report(call_id: str, rel: str, old: str | None, new: str) -> list[JsonObject]:
    """An agent that writes the disk first and reports a full diff afterwards."""
    return [
        {"write_file": {"path": rel, "content": new}},
        update(
            sessionUpdate="tool_call",
            toolCallId=call_id,
            title="Update " + rel,
            kind="edit",
            status="completed",
            content=[diff(rel, old, new)],
            locations=[{"path": "{cwd}/" + rel, "line": 1}],
        ),
    ]


def turns(*steps: list[JsonObject]) -> JsonObject:
    """One prompt per list of steps (the first prompt runs the first list, …)."""
    on: JsonObject = {"session/prompt": steps[0]}
    for n, more in enumerate(steps[1:], start=2):
        on[f"session/prompt#{n}"] = more
    return {"on": on}


# -- helpers -------------------------------------------------------------------------------------
async def run_turn(editor: TestEditor, text: str = "go", sid: str | None = None) -> str:
    if sid is None:
        sid = (await editor.new_session())["sessionId"]
    result = await editor.prompt(sid, text)
    assert result["stopReason"] == "end_turn"
    return sid


async def review(editor: TestEditor, sid: str, action: str, **target: Any) -> JsonObject:
    result: JsonObject = await editor.acp(
        p.ACP_REVIEW_EDIT, {"sessionId": sid, "action": action, **target}
    )
    return result


async def shown_review(editor: TestEditor, sid: str, call_id: str) -> Any:
    """The call's review as the editor shows it (from acp/sessionUpdate)."""
    await editor.wait_for(
        lambda: editor.sessions[sid].tool_calls.get(call_id, {}).get("review") is not None
    )
    snapshot = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    state = editor.sessions[sid].tool_calls[call_id]
    (stored,) = [c for c in snapshot["toolCalls"] if c["toolCallId"] == call_id]
    assert state.get("review") == stored.get("review")
    return state.get("review")


def read(workspace: Path, rel: str) -> str:
    return (workspace / rel).read_text(encoding="utf-8")
