"""A reference editor: what an editor knows after applying `acp/sessionUpdate` updates.

Written from the editor protocol contract (DESIGN §2), independently of acp_lsp.session, so
tests can check that an editor applying the bridge's updates ends up with exactly what the
session snapshot says. Tool calls follow the one rule editors get: a `tool_call` update
replaces the call's state, except that `contentAppend` keeps the content and appends to it.
An editor never merges tool-call fields itself, so a raw `tool_call_update` or
`tool_call_content_chunk` reaching it is a contract violation (AssertionError).

Usage:

    editor = EditorModel()                      # or EditorModel(session.snapshot())
    editor.apply_all(updates)                   # SessionUpdate objects, in order
    editor.apply_notification(params)           # {sessionId, seq, updates}: drops stale seq
    assert editor.view() == view_of(session.snapshot())
"""

from __future__ import annotations

import copy
import json
from typing import Any

JSON = Any

CHUNK_ROLES = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}
MESSAGE_ROLES = {"user_message": "user", "agent_message": "agent", "agent_thought": "thought"}

# Snapshot keys an editor can rebuild from updates alone.
VIEW_KEYS = (
    "messages",
    "toolCalls",
    "timeline",
    "plan",
    "commands",
    "modes",
    "configOptions",
    "usage",
    "title",
    "updatedAt",
)


def view_of(snapshot: dict[str, JSON]) -> dict[str, JSON]:
    """The part of a SessionSnapshot an editor rebuilds from updates (JSON round-tripped)."""
    view: dict[str, JSON] = json.loads(
        json.dumps({k: snapshot[k] for k in VIEW_KEYS if k in snapshot})
    )
    return without_checkpoint_marks(view)


def without_checkpoint_marks(view: dict[str, JSON]) -> dict[str, JSON]:
    """A view without the user messages' ``checkpoint`` marks: a snapshot's (DESIGN §2), no
    update carries them, so a model built from a snapshot and updates may hold stale ones."""
    for message in view.get("messages") or []:
        message.pop("checkpoint", None)
    return view


def _is_text(block: JSON) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


def _without_text(block: dict[str, JSON]) -> dict[str, JSON]:
    return {k: v for k, v in block.items() if k != "text"}


class EditorModel:
    def __init__(self, snapshot: dict[str, JSON] | None = None, *, wire: bool = True) -> None:
        """Start empty or from a snapshot. ``wire``: JSON round-trip every update first."""
        self.wire = wire
        self.seq = 0
        self.messages: list[dict[str, JSON]] = []
        self.tool_calls: dict[str, dict[str, JSON]] = {}
        self.timeline: list[dict[str, JSON]] = []
        self.other: dict[str, JSON] = {}  # plan, commands, modes, configOptions, usage, title…
        self.unknown: list[dict[str, JSON]] = []  # variants passed through untouched
        if snapshot is not None:
            snap = json.loads(json.dumps(snapshot))
            self.seq = snap.get("seq", 0)
            self.messages = snap["messages"]
            self.tool_calls = {call["toolCallId"]: call for call in snap["toolCalls"]}
            self.timeline = snap["timeline"]
            self.other = {k: snap[k] for k in VIEW_KEYS[3:] if k in snap}

    # -- applying ----------------------------------------------------------------------------

    def apply_notification(self, params: dict[str, JSON]) -> bool:
        """An `acp/sessionUpdate` notification; False (and ignored) when its seq is stale."""
        if params["seq"] <= self.seq:
            return False
        assert params["seq"] == self.seq + 1, f"seq jumped from {self.seq} to {params['seq']}"
        self.seq = params["seq"]
        self.apply_all(params["updates"])
        return True

    def apply_all(self, updates: list[dict[str, JSON]]) -> None:
        for update in updates:
            self.apply(update)

    def apply(self, update: dict[str, JSON]) -> None:
        update = json.loads(json.dumps(update)) if self.wire else copy.deepcopy(update)
        kind = update["sessionUpdate"]
        if kind in CHUNK_ROLES:
            self._chunk(CHUNK_ROLES[kind], update)
        elif kind in MESSAGE_ROLES:
            self._whole_message(MESSAGE_ROLES[kind], update)
        elif kind == "tool_call":
            self._tool_call(update)
        elif kind in ("tool_call_update", "tool_call_content_chunk"):
            raise AssertionError(f"editor received a raw {kind}: {update!r}")
        elif kind == "plan":
            self.other["plan"] = _payload(update)
        elif kind == "available_commands_update":
            self.other["commands"] = update["availableCommands"]
        elif kind == "current_mode_update":
            modes = self.other.get("modes") or {"availableModes": []}
            self.other["modes"] = {**modes, "currentModeId": update["currentModeId"]}
        elif kind == "config_option_update":
            self.other["configOptions"] = update["configOptions"]
        elif kind == "session_info_update":
            for key in ("title", "updatedAt"):
                if key in update:
                    if update[key] is None:
                        self.other.pop(key, None)
                    else:
                        self.other[key] = update[key]
        elif kind == "usage_update":
            self.other["usage"] = _payload(update)
        else:
            self.unknown.append(update)

    def _message_index(self, role: str, message_id: str | None) -> int | None:
        if message_id is not None:
            for index, message in enumerate(self.messages):
                if message["role"] == role and message.get("messageId") == message_id:
                    return index
            return None
        if self.timeline and "message" in self.timeline[-1]:
            last: int = self.timeline[-1]["message"]
            if self.messages[last]["role"] == role:
                return last
        return None

    def _new_message(self, role: str, message_id: str | None) -> int:
        message: dict[str, JSON] = {"role": role, "content": []}
        if message_id is not None:
            message = {"messageId": message_id, **message}
        self.messages.append(message)
        self.timeline.append({"message": len(self.messages) - 1})
        return len(self.messages) - 1

    def _chunk(self, role: str, update: dict[str, JSON]) -> None:
        message_id = update.get("messageId")
        index = self._message_index(role, message_id)
        if index is None:
            index = self._new_message(role, message_id)
        content = self.messages[index]["content"]
        block = update["content"]
        # Adjacent text blocks that differ only in their text read as one block.
        if (
            content
            and _is_text(content[-1])
            and _is_text(block)
            and _without_text(content[-1]) == _without_text(block)
        ):
            content[-1] = {**content[-1], "text": content[-1]["text"] + block["text"]}
        else:
            content.append(block)

    def _whole_message(self, role: str, update: dict[str, JSON]) -> None:
        message_id = update["messageId"]
        index = self._message_index(role, message_id)
        if index is None:
            index = self._new_message(role, message_id)
        if "content" in update:
            self.messages[index]["content"] = update["content"] or []

    def _tool_call(self, update: dict[str, JSON]) -> None:
        state = update["toolCall"]
        tool_call_id = state["toolCallId"]
        previous = self.tool_calls.get(tool_call_id)
        if "contentAppend" in update:
            assert previous is not None, f"contentAppend for unknown tool call {tool_call_id}"
            assert "content" not in state, "contentAppend with a full content array"
            state = {**state, "content": previous["content"] + update["contentAppend"]}
        if previous is None:
            self.timeline.append({"toolCall": tool_call_id})
        self.tool_calls[tool_call_id] = state

    # -- reading -----------------------------------------------------------------------------

    def view(self) -> dict[str, JSON]:
        """Same shape as ``view_of(snapshot)``."""
        result: dict[str, JSON] = {
            "messages": self.messages,
            "toolCalls": list(self.tool_calls.values()),
            "timeline": self.timeline,
        }
        result.update(self.other)
        view: dict[str, JSON] = json.loads(json.dumps(result))
        return without_checkpoint_marks(view)

    def message_texts(self) -> list[str]:
        return [
            "".join(b["text"] for b in message["content"] if _is_text(b))
            for message in self.messages
        ]


def _payload(update: dict[str, JSON]) -> dict[str, JSON]:
    return {k: v for k, v in update.items() if k != "sessionUpdate"}
