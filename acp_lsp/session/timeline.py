"""The ordered timeline of one session: messages (by messageId) and tool calls (by first sight).

Message chunk rule: chunks with the same ``(role, messageId)`` form one message; a chunk
without ``messageId`` appends to the last message if it has the same role and is the last
timeline entry, else starts a new message. v2 whole-message upserts (``user_message``,
``agent_message``, ``agent_thought``) replace a message's content (null clears, omitted keeps).

The user's own prompt is recorded by the bridge; an agent echo of exactly that prompt during
the turn is swallowed (not stored, not forwarded), and its messageId becomes an alias of the
prompt message. Updates naming an alias are forwarded with the prompt's id, so editors that
only ever saw that id file them under the same message.
"""

from __future__ import annotations

import logging

from acp_lsp.session.jsonish import JSON, Update, brief
from acp_lsp.session.messages import Message, PromptEcho

log = logging.getLogger(__name__)


class _Keep:
    """Marks an omitted field of a patch (distinct from null, which clears)."""


_KEEP = _Keep()


class Timeline:
    __slots__ = (
        "_echo",
        "_entries",
        "_last_entry_message",
        "_message_ids",
        "_messages",
        "_prompt_index",
        "_prompts",
        "_session_id",
    )

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id  # for log lines only
        self._messages: list[Message] = []
        self._message_ids: dict[tuple[str, str], int] = {}  # (role, messageId) -> index
        # int = index into _messages, str = toolCallId; dicts are built only for snapshots.
        self._entries: list[int | str] = []
        self._last_entry_message: int | None = None  # index if the last entry is a message
        self._echo: PromptEcho | None = None
        self._prompts = 0
        self._prompt_index = -1  # the message of the last prompt

    # -- messages ------------------------------------------------------------------------

    def on_whole_message(self, update: Update, role: str) -> list[Update]:
        """v2 ``user_message`` / ``agent_message`` / ``agent_thought``: upsert one message."""
        message_id = update.get("messageId")
        if not isinstance(message_id, str):
            log.warning("session %s: message upsert without messageId", self._session_id)
            return [update]
        content = update.get("content", _KEEP)
        if content is not _KEEP and content is not None and not isinstance(content, list):
            log.warning(
                "session %s: message %s content is not an array", self._session_id, message_id
            )
            content = _KEEP
        echo = self._echo
        if role == "user" and echo is not None and ("user", message_id) not in self._message_ids:
            self._echo = None
            if not echo.started and echo.matches_whole(content):
                self._message_ids["user", message_id] = self._prompt_index
                return []
            replayed = [out for held in echo.held for out in self.on_chunk(held, "user")]
            return [*replayed, *self._upsert_message(role, message_id, content, update)]
        return self._upsert_message(role, message_id, content, update)

    def add_prompt(self, blocks: list[dict[str, JSON]]) -> list[Update]:
        """Record the user's prompt as a new message (with a bridge-made messageId)."""
        if not blocks:
            return []
        self._prompts += 1
        message_id = f"acp-lsp:prompt:{self._prompts}"
        self._prompt_index = self._new_message("user", message_id)
        self._messages[self._prompt_index].extend(blocks)
        echo = PromptEcho(blocks)
        self._echo = None if echo.done else echo
        return [
            {"sessionUpdate": "user_message_chunk", "messageId": message_id, "content": block}
            for block in blocks
        ]

    def end_echo(self) -> None:
        """The turn is over: an echo that has not come (or only partly) is not waited for."""
        self._echo = None

    def on_chunk(self, update: Update, role: str) -> list[Update]:
        """A ``*_message_chunk`` / ``agent_thought_chunk``: store it; it is forwarded as is.

        Also stores what an echo held back, once ``_echo`` is None again (one method, not
        two: it runs once per streamed chunk)."""
        if role == "user" and self._echo is not None:
            return self._on_chunk_during_echo(update, self._echo)
        content = update.get("content")
        if not isinstance(content, dict):
            log.warning(
                "session %s: chunk without a content block: %s", self._session_id, brief(update)
            )
            return [update]
        message_id = update.get("messageId")
        if message_id is not None and not isinstance(message_id, str):
            log.warning("session %s: non-string messageId %s", self._session_id, brief(message_id))
            message_id = None
        if message_id is None:
            last = self._last_entry_message
            if last is not None and self._messages[last].role == role:
                index = last
            else:
                index = self._new_message(role, None)
        else:
            found = self._message_ids.get((role, message_id))
            index = self._new_message(role, message_id) if found is None else found
        message = self._messages[index]
        message.append(content)
        if message_id is not None and message.message_id != message_id:
            return [{**update, "messageId": message.message_id}]
        return [update]

    def _on_chunk_during_echo(self, update: Update, echo: PromptEcho) -> list[Update]:
        if echo.feed(update.get("content")):
            echo.held.append(update)
            if echo.done:
                self._echo = None
                for held in echo.held:
                    message_id = held.get("messageId")
                    if isinstance(message_id, str):
                        self._message_ids.setdefault(("user", message_id), self._prompt_index)
            return []
        # Not (or no longer) the prompt: what was held back is ordinary user content.
        self._echo = None
        updates: list[Update] = []
        for held in echo.held:
            updates.extend(self.on_chunk(held, "user"))
        updates.extend(self.on_chunk(update, "user"))
        return updates

    def _upsert_message(
        self, role: str, message_id: str, content: JSON, update: Update
    ) -> list[Update]:
        index = self._message_ids.get((role, message_id))
        if index is None:
            index = self._new_message(role, message_id)
        message = self._messages[index]
        if content is not _KEEP:
            message.replace(content or [])
        if message.message_id != message_id:
            return [{**update, "messageId": message.message_id}]
        return [update]

    def _new_message(self, role: str, message_id: str | None) -> int:
        self._compact_last()
        index = len(self._messages)
        self._messages.append(Message(role, message_id))
        if message_id is not None:
            self._message_ids[role, message_id] = index
        self._entries.append(index)
        self._last_entry_message = index
        return index

    def _compact_last(self) -> None:
        """The last entry stops being last: join its streamed parts (once per message)."""
        if self._last_entry_message is not None:
            self._messages[self._last_entry_message].compact()

    # -- tool calls and reading --------------------------------------------------------------

    def add_tool_call(self, tool_call_id: str) -> None:
        """A tool call was created: it takes the next timeline entry."""
        self._compact_last()
        self._entries.append(tool_call_id)
        self._last_entry_message = None

    def restore_message(self, role: str, message_id: str | None, content: list[JSON]) -> None:
        """A stored message comes back (history): appended as it was."""
        index = self._new_message(role, message_id)
        self._messages[index].extend(b for b in content if isinstance(b, dict))
        if role == "user" and isinstance(message_id, str) and message_id.startswith("acp-lsp:"):
            self._prompts += 1  # new prompts must not reuse a stored prompt's id

    def entry_count(self) -> int:
        return len(self._entries)

    def entries_from(self, start: int) -> list[int | str]:
        """Timeline entries from ``start`` on: message indexes and tool call ids."""
        return self._entries[start:]

    def message_count(self) -> int:
        return len(self._messages)

    def message(self, index: int) -> Message:
        return self._messages[index]

    def messages_json(self) -> list[dict[str, JSON]]:
        return [message.to_json() for message in self._messages]

    def entries_json(self) -> list[dict[str, JSON]]:
        return [
            {"message": entry} if isinstance(entry, int) else {"toolCall": entry}
            for entry in self._entries
        ]
