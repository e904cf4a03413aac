"""A session as Markdown: for acp/exportSession and to prime an agent with a transcript."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

JsonObject = dict[str, Any]

ROLE_HEADINGS = {"user": "## User", "agent": "## Agent", "thought": "### Thinking"}


def _blocks(content: Any) -> str:
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "resource_link":
            parts.append(f"[{block.get('name') or block.get('uri')}]({block.get('uri')})")
        elif kind == "resource":
            resource = block.get("resource") or {}
            parts.append(f"`{resource.get('uri')}`:\n```\n{resource.get('text', '')}\n```")
        elif kind in ("image", "audio"):
            parts.append(f"[{kind}: {block.get('mimeType', '')}]")
    return "".join(parts)


def tool_call_markdown(call: JsonObject) -> str:
    title = call.get("title") or call.get("toolCallId")
    line = f"- **{title}** ({call.get('kind', 'other')}, {call.get('status', '?')})"
    review = call.get("review")
    if isinstance(review, dict) and review.get("status"):
        line += f" — review: {review['status']}"
    out = [line]
    for item in call.get("content") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "diff":
            out.append(f"  - diff of `{item.get('path')}`")
        elif item.get("type") == "content":
            text = _blocks([item.get("content")])
            if text:
                out.append("  " + text.replace("\n", "\n  "))
    return "\n".join(out)


def to_markdown(snapshot: JsonObject, tool_call: Callable[[str], str | None] | None = None) -> str:
    """``tool_call``: a tool call's Markdown by id, for a snapshot taken without tool calls
    (a renderer that keeps finished calls' Markdown instead of reading them back)."""
    title = snapshot.get("title") or f"Session {snapshot.get('sessionId')}"
    lines = [f"# {title}", ""]
    meta = [f"agent: {snapshot.get('agent')}", f"cwd: {snapshot.get('cwd')}"]
    for key in ("createdAt", "updatedAt"):
        if snapshot.get(key):
            meta.append(f"{key}: {snapshot[key]}")
    lines += [", ".join(meta), ""]
    messages = snapshot.get("messages") or []
    calls = {c.get("toolCallId"): c for c in snapshot.get("toolCalls") or []}
    for entry in snapshot.get("timeline") or []:
        if "message" in entry and entry["message"] < len(messages):
            message = messages[entry["message"]]
            text = _blocks(message.get("content"))
            heading = ROLE_HEADINGS.get(message.get("role", ""), "## Agent")
            if message.get("role") == "thought":
                text = "> " + text.replace("\n", "\n> ")
            lines += [heading, "", text, ""]
        elif tool_call is not None and isinstance(entry.get("toolCall"), str):
            if (rendered := tool_call(entry["toolCall"])) is not None:
                lines += [rendered, ""]
        elif entry.get("toolCall") in calls:
            lines += [tool_call_markdown(calls[entry["toolCall"]]), ""]
    plan = snapshot.get("plan")
    if isinstance(plan, dict) and plan.get("entries"):
        lines += ["## Plan", ""]
        for item in plan["entries"]:
            mark = "x" if item.get("status") == "completed" else " "
            lines.append(f"- [{mark}] {item.get('content', '')}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def primer(snapshot: JsonObject) -> JsonObject:
    """The text block a new agent session gets before the first prompt after a resume."""
    return {
        "type": "text",
        "text": (
            "This conversation continues an earlier session whose agent session could not be "
            "restored. Its transcript follows; treat it as what was said and done so far.\n\n"
            f"<transcript>\n{to_markdown(snapshot)}</transcript>\n\n"
        ),
    }
