"""The Session: the single source of truth for one conversation (DESIGN §1, §2, §3).

Pure Python: agent payloads stay raw JSON dicts end to end. ``apply_update`` takes one ACP
``session/update`` ``update`` object (v1, or v2 draft semantics) and returns the editor-facing
SessionUpdates; the caller forwards them. Nothing here knows LSP or a wire format.

Ownership: values passed in (updates, blocks) are never mutated; values returned (updates,
snapshots) share raw agent JSON with the session and must be treated as read-only by callers
(serialise them, don't edit them).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable

from acp_lsp.session.checkpoints import Checkpoints
from acp_lsp.session.jsonish import JSON, Update, brief
from acp_lsp.session.messages import Message
from acp_lsp.session.offload import ToolCallMemory
from acp_lsp.session.timeline import Timeline
from acp_lsp.session.toolcalls import ToolCalls

log = logging.getLogger(__name__)


_CHUNK_ROLES = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}
_MESSAGE_ROLES = {"user_message": "user", "agent_message": "agent", "agent_thought": "thought"}


class Session(ToolCallMemory):
    """One conversation: timeline of messages and tool calls, plan, commands, modes, …"""

    def __init__(
        self,
        session_id: str,
        agent: str,
        cwd: str,
        additional_directories: list[str] | None = None,
    ) -> None:
        self.session_id = session_id
        self.agent = agent
        self.cwd = cwd
        self.additional_directories: list[str] = list(additional_directories or [])
        self.status = "idle"
        self.seq = 0  # owned by the editor side: last acp/sessionUpdate seq it sent
        self.title: str | None = None
        self.updated_at: str | None = None
        self.forked_from: str | None = None
        self.resumed_from: str | None = None  # "agent" | "transcript" after a history resume
        # text blocks sent before the next prompt (a transcript that primes a new agent session)
        self.primer: list[dict[str, JSON]] | None = None
        # what the agent accepts in prompts (ACP promptCapabilities), for front ends
        self.prompt_capabilities: dict[str, JSON] | None = None
        self.queued: int | None = None  # prompts waiting their turn, once any was queued
        self.checkpoints = Checkpoints()
        self.rewound_from: dict[str, JSON] | None = None  # {sessionId, messageIndex}

        self._timeline = Timeline(session_id)
        self._tool_calls = ToolCalls()
        self._turn_ids: dict[str, None] = {}  # ordered set of tool calls since begin_turn

        self._plan: dict[str, JSON] | None = None
        self._commands: list[JSON] | None = None
        self._modes: dict[str, JSON] | None = None
        self._config_options: list[JSON] | None = None
        self._usage: dict[str, JSON] | None = None
        self._terminals: dict[str, dict[str, JSON]] = {}

    # -- agent updates ---------------------------------------------------------------------

    def apply_update(self, update: dict[str, JSON]) -> list[Update]:
        """Apply one raw ACP ``session/update`` ``update``; return the editor-facing updates.

        Never raises on a bad payload: it is logged and dropped (or passed through unchanged
        when it is still a dict with a string ``sessionUpdate``).
        """
        if not isinstance(update, dict):
            log.warning("session %s: update is not an object: %s", self.session_id, brief(update))
            return []
        kind = update.get("sessionUpdate")
        if not isinstance(kind, str):
            log.warning(
                "session %s: update without sessionUpdate: %s", self.session_id, brief(update)
            )
            return []
        role = _CHUNK_ROLES.get(kind)
        try:
            if role is not None:  # a streamed chunk: the hot path, one call shorter
                return self._timeline.on_chunk(update, role)
            handler = _HANDLERS.get(kind)
            if handler is None:
                return [update]  # unknown variant (`_vendor/…`, `notice`, state_update…): verbatim
            return handler(self, update)
        except Exception:  # an agent payload must never take the session down
            log.exception("session %s: cannot apply %s update", self.session_id, kind)
            return []

    def _on_whole_message(self, update: Update) -> list[Update]:
        return self._timeline.on_whole_message(update, _MESSAGE_ROLES[update["sessionUpdate"]])

    def _on_tool_call_content_chunk(self, update: Update) -> list[Update]:
        tool_call_id = update.get("toolCallId")
        item = update.get("content")
        if not isinstance(tool_call_id, str) or not isinstance(item, dict):
            log.warning(
                "session %s: malformed tool_call_content_chunk: %s", self.session_id, brief(update)
            )
            return []
        result, created = self._tool_calls.append_content(tool_call_id, item)
        self._touch_tool_call(tool_call_id, created)
        return [result]

    def _on_plan(self, update: Update) -> list[Update]:
        if isinstance(update.get("entries"), list):
            self._plan = _payload(update)
        else:
            log.warning("session %s: plan without entries array", self.session_id)
        return [update]

    def _on_commands(self, update: Update) -> list[Update]:
        commands = update.get("availableCommands")
        if isinstance(commands, list):
            self._commands = commands
        else:
            log.warning("session %s: available_commands_update without a list", self.session_id)
        return [update]

    def _on_current_mode(self, update: Update) -> list[Update]:
        mode_id = update.get("currentModeId")
        if mode_id is None:
            # Some agents follow the docs' typo (reference/acp.md §5, §13).
            mode_id = update.get("modeId")
            if isinstance(mode_id, str):
                update = {**update, "currentModeId": mode_id}
        if isinstance(mode_id, str):
            self._store_current_mode(mode_id)
        else:
            log.warning("session %s: current_mode_update without a mode id", self.session_id)
        return [update]

    def _on_config_options(self, update: Update) -> list[Update]:
        options = update.get("configOptions")
        if isinstance(options, list):
            self._config_options = options
        else:
            log.warning("session %s: config_option_update without a list", self.session_id)
        return [update]

    def _on_session_info(self, update: Update) -> list[Update]:
        # A patch: omitted keeps, null clears.
        if "title" in update:
            title = update["title"]
            if title is None or isinstance(title, str):
                self.title = title
        if "updatedAt" in update:
            updated_at = update["updatedAt"]
            if updated_at is None or isinstance(updated_at, str):
                self.updated_at = updated_at
        return [update]

    def _on_usage(self, update: Update) -> list[Update]:
        if not isinstance(update.get("used"), int | float) or not isinstance(
            update.get("size"), int | float
        ):
            log.warning(
                "session %s: odd usage_update kept as sent: %s", self.session_id, brief(update)
            )
        self._usage = _payload(update)
        return [update]

    # -- calls from the bridge ---------------------------------------------------------------

    def add_user_prompt(self, blocks: list[dict[str, JSON]]) -> list[Update]:
        """Record the prompt as a new user message; return its user_message_chunk updates.

        The message gets a bridge-made messageId (``acp-lsp:prompt:<n>``) so that editors keep
        two prompts in a row apart. An agent's echo of exactly this prompt during the turn is
        neither stored again nor forwarded.
        """
        return self._timeline.add_prompt(blocks)

    def upsert_tool_call(self, fields: dict[str, JSON]) -> list[Update]:
        """Merge tool-call fields (same rule as ``tool_call_update``); [] if malformed."""
        if not isinstance(fields, dict):
            log.warning(
                "session %s: tool call is not an object: %s", self.session_id, brief(fields)
            )
            return []
        merged = self._tool_calls.upsert(fields)
        if merged is None:
            return []
        result, created = merged
        self._touch_tool_call(fields["toolCallId"], created)
        return [result]

    def _touch_tool_call(self, tool_call_id: str, created: bool) -> None:
        self._turn_ids[tool_call_id] = None
        if created:
            self._timeline.add_tool_call(tool_call_id)

    def tool_call(self, tool_call_id: str) -> dict[str, JSON] | None:
        """The merged state (a copy) of one tool call, or None."""
        return self._tool_calls.get(tool_call_id)

    def tool_calls(self) -> list[dict[str, JSON]]:
        """Copies of every tool call's merged state, in creation order."""
        return self._tool_calls.states()

    def begin_turn(self) -> None:
        """Start a turn: tool calls touched from now on belong to it."""
        self._turn_ids = {}

    def finish_turn(self, final_status: str = "cancelled") -> list[Update]:
        """End the turn: its calls still pending/in progress get ``final_status``."""
        self._timeline.end_echo()
        return self._tool_calls.finish(self._turn_ids, final_status)

    def cancel_unfinished(self) -> list[Update]:
        """Mark the turn's unfinished calls cancelled at once; the turn goes on."""
        return self._tool_calls.finish(self._turn_ids, "cancelled")

    def turn_tool_call_ids(self) -> list[str]:
        """Tool calls created or updated since the last ``begin_turn`` (in first-touch order)."""
        return list(self._turn_ids)

    def set_review(self, tool_call_id: str, review: dict[str, JSON]) -> list[Update]:
        """Set ``toolCall.review`` (acp/reviewEdit); [] for an unknown call."""
        result = self._tool_calls.set_field(tool_call_id, "review", review)
        if result is None:
            log.warning(
                "session %s: review for unknown tool call %s", self.session_id, tool_call_id
            )
            return []
        return [result]

    def set_modes(self, modes: dict[str, JSON] | None) -> None:
        self._modes = modes if isinstance(modes, dict) else None

    def set_config_options(self, options: list[dict[str, JSON]] | None) -> None:
        self._config_options = options if isinstance(options, list) else None

    def set_current_mode(self, mode_id: str) -> list[Update]:
        """After a successful session/set_mode: store it and tell the editor."""
        self._store_current_mode(mode_id)
        return [{"sessionUpdate": "current_mode_update", "currentModeId": mode_id}]

    def _store_current_mode(self, mode_id: str) -> None:
        if self._modes is None:
            self._modes = {"currentModeId": mode_id, "availableModes": []}
        else:
            self._modes = {**self._modes, "currentModeId": mode_id}

    def set_terminal(
        self, terminal_id: str, output: str, truncated: bool, exit_status: dict[str, JSON] | None
    ) -> None:
        """Record a terminal's retained output (for snapshots; live output is streamed)."""
        terminal: dict[str, JSON] = {"output": output, "truncated": truncated}
        if exit_status is not None:
            terminal["exitStatus"] = exit_status
        self._terminals[terminal_id] = terminal

    # -- reading -----------------------------------------------------------------------------

    @property
    def modes(self) -> dict[str, JSON] | None:
        return self._modes

    @property
    def config_options(self) -> list[JSON] | None:
        return self._config_options

    def restore(self, snapshot: dict[str, JSON]) -> None:
        """Rebuild the conversation of a stored snapshot (messages, tool calls, their order)."""
        messages = snapshot.get("messages") or []
        calls = {
            c.get("toolCallId"): c for c in snapshot.get("toolCalls") or [] if isinstance(c, dict)
        }
        for entry in snapshot.get("timeline") or []:
            if "message" in entry and 0 <= entry["message"] < len(messages):
                message = messages[entry["message"]]
                self._timeline.restore_message(
                    message.get("role", "agent"),
                    message.get("messageId"),
                    message.get("content") or [],
                )
            elif entry.get("toolCall") in calls:
                self.upsert_tool_call(dict(calls[entry["toolCall"]]))
        self._turn_ids = {}
        # modes, config options and commands the agent just gave are its truth: a stored
        # "acceptEdits" over the agent's "auto" would show a mode the agent is not in
        for key, attr in (("plan", "_plan"), ("usage", "_usage"), ("modes", "_modes")):
            if isinstance(snapshot.get(key), dict) and (key != "modes" or self._modes is None):
                setattr(self, attr, snapshot[key])
        if isinstance(snapshot.get("configOptions"), list) and self._config_options is None:
            self._config_options = snapshot["configOptions"]
        if isinstance(snapshot.get("commands"), list) and not self._commands:
            self._commands = snapshot["commands"]
        self.title = snapshot.get("title") if isinstance(snapshot.get("title"), str) else self.title

    def entry_count(self) -> int:
        return self._timeline.entry_count()

    def entries_from(self, start: int) -> list[int | str]:
        return self._timeline.entries_from(start)

    def message(self, index: int) -> Message:
        """One message of the timeline (read-only for callers)."""
        return self._timeline.message(index)

    def extras(self) -> dict[str, JSON]:
        """Plan, usage, modes, config options and commands (what history keeps besides the
        timeline)."""
        out = {
            "plan": self._plan,
            "usage": self._usage,
            "modes": self._modes,
            "configOptions": self._config_options,
            "commands": self._commands,
            "checkpoints": self.checkpoints.json(),
            "rewoundFrom": self.rewound_from,
        }
        return {k: v for k, v in out.items() if v is not None}

    def take_history(self, source: Session) -> None:
        """Start from a copy of ``source``'s conversation (ACP session/fork keeps it)."""
        self._timeline = copy.deepcopy(source._timeline)
        self._tool_calls = source._tool_calls.whole_copy()
        self._plan = copy.deepcopy(source._plan)
        self._usage = copy.deepcopy(source._usage)
        self.title = source.title

    def message_count(self) -> int:
        return self._timeline.message_count()

    def message_text(self, index: int) -> str:
        """All text of one message (by timeline message index), non-text blocks skipped."""
        return self._timeline.message(index).text()

    def snapshot(self, *, tool_calls: bool = True) -> dict[str, JSON]:
        """The SessionSnapshot (DESIGN §2), camelCase; optional keys omitted when unset (no
        ``toolCalls`` with ``tool_calls=False``: none is read back from the history store).
        ``plan`` is ACP's Plan (the last ``plan`` update without its discriminator), ``usage``
        likewise; ``commands`` the ``availableCommands`` list, ``modes`` ACP's SessionModeState.
        Containers are fresh; the raw agent values inside are shared: read-only for callers.
        """
        snapshot: dict[str, JSON] = {
            "sessionId": self.session_id,
            "agent": self.agent,
            "cwd": self.cwd,
            "status": self.status,
            "seq": self.seq,
            "messages": self.checkpoints.mark(self._timeline.messages_json()),
            "toolCalls": self._tool_calls.states() if tool_calls else [],
            "timeline": self._timeline.entries_json(),
        }
        optional: dict[str, JSON] = {
            "plan": self._plan,
            "commands": self._commands,
            "modes": self._modes,
            "configOptions": self._config_options,
            "usage": self._usage,
            "terminals": {k: dict(v) for k, v in self._terminals.items()} or None,
            "title": self.title,
            "updatedAt": self.updated_at,
            "additionalDirectories": list(self.additional_directories) or None,
            "forkedFrom": self.forked_from,
            "resumedFrom": self.resumed_from,
            "rewoundFrom": self.rewound_from,
            "promptCapabilities": self.prompt_capabilities,
            "queued": self.queued or None,
        }
        snapshot.update((key, value) for key, value in optional.items() if value is not None)
        return snapshot


def _payload(update: Update) -> dict[str, JSON]:
    return {key: value for key, value in update.items() if key != "sessionUpdate"}


# The other variants (chunks go to the timeline directly, by _CHUNK_ROLES).
_HANDLERS: dict[str, Callable[[Session, Update], list[Update]]] = {
    "user_message": Session._on_whole_message,
    "agent_message": Session._on_whole_message,
    "agent_thought": Session._on_whole_message,
    "tool_call": Session.upsert_tool_call,
    "tool_call_update": Session.upsert_tool_call,
    "tool_call_content_chunk": Session._on_tool_call_content_chunk,
    "plan": Session._on_plan,
    "available_commands_update": Session._on_commands,
    "current_mode_update": Session._on_current_mode,
    "config_option_update": Session._on_config_options,
    "session_info_update": Session._on_session_info,
    "usage_update": Session._on_usage,
}
