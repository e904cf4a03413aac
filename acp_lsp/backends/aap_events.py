"""AAP v3 content and turn events -> ACP session updates (reference/aap.md §4.3).

Pure mapping, no I/O: ``TurnMapper`` turns the SSE events of one editor turn (and the
messages of a ``stream: "none"`` response or of history, replayed as the same events) into raw
ACP ``session/update`` objects that the backend applies to the Session. It also keeps the
bookkeeping the tool flow needs (aap.md §5): which calls were seen, which have a result, and
which the bridge already answered.
"""

from __future__ import annotations

import json
import logging
import os
import re
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]
Event = tuple[str, Any]

# Both wordings mark a denied call in history: the spec's and the reference SDK's (§10.3).
_DENIAL_PREFIXES = ("Tool call denied", "Tool use denied")

# First match wins; checked against the lower-cased tool name split at _ and -.
_KIND_WORDS: tuple[tuple[str, frozenset[str]], ...] = (
    ("search", frozenset({"search", "find", "grep", "glob", "query", "lookup"})),
    ("fetch", frozenset({"fetch", "http", "web", "url", "download", "browse", "curl"})),
    ("execute", frozenset({"run", "exec", "execute", "shell", "bash", "command", "terminal"})),
    ("delete", frozenset({"delete", "remove", "rm", "unlink", "drop"})),
    ("edit", frozenset({"write", "edit", "update", "patch", "create", "replace", "save"})),
    ("read", frozenset({"read", "get", "view", "open", "list", "cat", "show", "load"})),
)


def guess_kind(name: str) -> str:
    """An ACP ToolKind for a tool name (AAP has no kinds): read/edit/execute/fetch/… or other."""
    words = set(re.split(r"[_\-\s.]+", name.lower()))
    return next((kind for kind, keys in _KIND_WORDS if words & keys), "other")


def new_message_id() -> str:
    return f"aap-{uuid.uuid4().hex[:16]}"


# -- content -----------------------------------------------------------------------------


def acp_block(block: Any) -> JsonObject:
    """One AAP content block as an ACP ContentBlock (unknown blocks become readable text)."""
    if not isinstance(block, dict):
        return {"type": "text", "text": str(block)}
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return {"type": "text", "text": block["text"]}
    if kind == "thinking" and isinstance(block.get("thinking"), str):
        return {"type": "text", "text": block["thinking"]}
    if kind == "image" and isinstance(block.get("url"), str):
        url: str = block["url"]
        match = re.match(r"data:([^;,]+);base64,(.*)", url, re.DOTALL)
        if match:
            return {"type": "image", "mimeType": match.group(1), "data": match.group(2)}
        return {"type": "resource_link", "uri": url, "name": url.rsplit("/", 1)[-1] or url}
    return {"type": "text", "text": json.dumps(block, ensure_ascii=False)}


def acp_blocks(content: Any) -> list[JsonObject]:
    """AAP message content (string or blocks) as ACP ContentBlocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [acp_block(b) for b in content]
    return [] if content is None else [acp_block(content)]


def tool_content(content: Any) -> list[JsonObject]:
    """A tool result as ACP ToolCallContent (string -> one text block)."""
    return [{"type": "content", "content": block} for block in acp_blocks(content)]


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def aap_prompt(blocks: list[JsonObject], image: JsonObject) -> list[JsonObject]:
    """ACP prompt blocks as AAP user content; ``image`` = the agent's image capability."""
    out: list[JsonObject] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            out.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind == "image":
            out.append(_aap_image(block, image))
        elif kind == "resource_link":
            name = block.get("name") or block.get("uri")
            out.append({"type": "text", "text": f"[{name}]({block.get('uri')})"})
        elif kind == "resource" and isinstance(block.get("resource"), dict):
            resource = block["resource"]
            uri = resource.get("uri", "")
            if isinstance(resource.get("text"), str):
                text = f"Contents of {uri}:\n```\n{resource['text']}\n```"
            else:
                text = f"[binary resource {uri} omitted]"
            out.append({"type": "text", "text": text})
        else:
            out.append({"type": "text", "text": f"[{kind} content omitted]"})
    return out


def _aap_image(block: JsonObject, image: JsonObject) -> JsonObject:
    uri = block.get("uri")
    if "data" in image and isinstance(block.get("data"), str):
        mime = block.get("mimeType") or "image/png"
        return {"type": "image", "url": f"data:{mime};base64,{block['data']}"}
    if "http" in image and isinstance(uri, str) and uri.startswith("https://"):
        return {"type": "image", "url": uri}
    return {"type": "text", "text": "[image omitted: the agent does not accept this image]"}


def message_events(messages: Iterable[Any]) -> Iterator[Event]:
    """History messages (or a ``stream: "none"`` response) as message-mode events.

    User messages come out as a ``user`` pseudo-event; system messages are skipped.
    """
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            yield "user", content
        elif role == "tool":
            yield "tool_result", {"toolCallId": message.get("toolCallId"), "content": content}
        elif role == "assistant":
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for block in blocks if isinstance(blocks, list) else []:
                yield from _assistant_block_events(block)


def _assistant_block_events(block: Any) -> Iterator[Event]:
    if not isinstance(block, dict):
        return
    kind = block.get("type")
    if kind == "text":
        yield "text", {"text": block.get("text", "")}
    elif kind == "thinking":
        yield "thinking", {"thinking": block.get("thinking", "")}
    elif kind == "tool_use":
        yield "tool_call", {k: block.get(k) for k in ("toolCallId", "name", "input")}
    else:
        yield "text", {"text": content_text([acp_block(block)])}


def unresolved_tool_uses(history: list[Any]) -> list[JsonObject]:
    """tool_use blocks of the last assistant message with no tool message after it (§5)."""
    last = max(
        (i for i, m in enumerate(history) if isinstance(m, dict) and m.get("role") == "assistant"),
        default=-1,
    )
    if last < 0 or not isinstance(history[last].get("content"), list):
        return []
    later = [m for m in history[last + 1 :] if isinstance(m, dict)]
    if any(m.get("role") == "user" for m in later):
        return []  # a prompt came after them: the conversation moved on
    answered = {m.get("toolCallId") for m in later if m.get("role") == "tool"}
    return [
        b
        for b in history[last]["content"]
        if isinstance(b, dict)
        and b.get("type") == "tool_use"
        and isinstance(b.get("toolCallId"), str)
        and b["toolCallId"] not in answered
    ]


# -- turn events -------------------------------------------------------------------------


@dataclass
class ToolUse:
    tool_call_id: str
    name: str
    input: JsonObject


@dataclass
class TurnMapper:
    """State of one editor turn (which may span several AAP turn requests).

    ``titles`` maps tool names to display titles (ToolSpec.title); ``client_tools`` are the
    names of the bridge's own tools, whose paths are local and become ``locations``.
    """

    cwd: str
    titles: dict[str, str]
    client_tools: frozenset[str]
    calls: dict[str, ToolUse] = field(default_factory=dict)  # in the order seen
    results: set[str] = field(default_factory=set)  # ids with a tool result
    answered: set[str] = field(default_factory=set)  # ids the bridge sent a result/permission for
    granted: set[str] = field(default_factory=set)
    denied: set[str] = field(default_factory=set)
    _segment: tuple[str, str] | None = None  # (delta kind, messageId) of the open message

    def pending(self) -> list[ToolUse]:
        """Calls that still need the client (aap.md §5 steps 1-2)."""
        return [
            c for i, c in self.calls.items() if i not in self.results and i not in self.answered
        ]

    def feed(self, event: str, data: Any) -> list[JsonObject]:
        """ACP session/update objects for one AAP event ([] for events with nothing to show)."""
        if event in ("text_delta", "thinking_delta"):
            delta = data.get("delta") if isinstance(data, dict) else None
            if not isinstance(delta, str) or not delta:
                return []
            return [self._chunk(event.removesuffix("_delta"), delta, joined=True)]
        self._segment = None
        if event in ("text", "thinking"):
            value = data.get(event) if isinstance(data, dict) else None
            return [self._chunk(event, value, joined=False)] if isinstance(value, str) else []
        if event == "tool_call" and isinstance(data, dict):
            return self._tool_call(data)
        if event == "tool_result" and isinstance(data, dict):
            return self._tool_result(data)
        if event == "user":
            message_id = new_message_id()
            return [
                {"sessionUpdate": "user_message_chunk", "content": block, "messageId": message_id}
                for block in acp_blocks(data)
            ]
        if event != "turn_start":
            log.debug("AAP: ignoring event %r", event)
        return []

    def _chunk(self, kind: str, value: str, joined: bool) -> JsonObject:
        if joined and self._segment is not None and self._segment[0] == kind:
            message_id = self._segment[1]
        else:
            message_id = new_message_id()
            self._segment = (kind, message_id) if joined else None
        return {
            "sessionUpdate": "agent_message_chunk" if kind == "text" else "agent_thought_chunk",
            "content": {"type": "text", "text": value},
            "messageId": message_id,
        }

    def track(self, use: ToolUse) -> None:
        self.calls[use.tool_call_id] = use

    def _tool_call(self, data: JsonObject) -> list[JsonObject]:
        call_id = data.get("toolCallId")
        if not isinstance(call_id, str):
            log.warning("AAP: tool_call without toolCallId: %r", data)
            return []
        name = data.get("name") if isinstance(data.get("name"), str) else "tool"
        raw_input = data.get("input")
        args: JsonObject = raw_input if isinstance(raw_input, dict) else {}
        self.track(ToolUse(call_id, str(name), args))
        update: JsonObject = {
            "sessionUpdate": "tool_call",
            "toolCallId": call_id,
            "title": self.titles.get(str(name)) or str(name),
            "kind": guess_kind(str(name)),
            "status": "pending",
            "rawInput": data.get("input"),
        }
        locations = self.locations(str(name), args)
        if locations:
            update["locations"] = locations
        return [update]

    def locations(self, name: str, args: JsonObject) -> list[JsonObject]:
        """Local file locations a client-side call names (server tools' paths are remote)."""
        path = args.get("path")
        if name not in self.client_tools or not isinstance(path, str) or not path:
            return []
        location: JsonObject = {"path": os.path.normpath(os.path.join(self.cwd, path))}
        line = args.get("line")
        if isinstance(line, int) and not isinstance(line, bool) and line > 0:
            location["line"] = line
        return [location]

    def _tool_result(self, data: JsonObject) -> list[JsonObject]:
        call_id = data.get("toolCallId")
        if not isinstance(call_id, str):
            log.warning("AAP: tool_result without toolCallId: %r", data)
            return []
        self.results.add(call_id)
        content = data.get("content")
        update: JsonObject = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call_id,
            "content": tool_content(content),
        }
        if call_id not in self.denied:
            denied = content_text(content).startswith(_DENIAL_PREFIXES)
            update["status"] = "failed" if denied else "completed"
        return [update]
