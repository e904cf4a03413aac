"""Messages of one session: streamed chunks joined cheaply, and the live prompt's echo.

A stored message keeps its content blocks as received, except that adjacent text blocks that
differ only in their text are joined into one block. The trailing text block is kept as a list
of string parts and joined lazily, so appending a chunk is O(1) amortized however long the
message grows (20 000 chunks cost one block, not 20 000, and no quadratic concatenation).

Blocks are raw agent JSON and are never mutated: the same dicts may still sit, unserialised,
in updates handed to the editor side.
"""

from __future__ import annotations

from collections.abc import Iterable

from acp_lsp.session.jsonish import JSON, intern_key

# Message.stream_mark: (revision, open block's text length, times its parts were joined, parts)
StreamMark = tuple[int, int, int, int]


def _text_of(block: JSON) -> str | None:
    """The text of a text block, or None for any other block (or a text block without text)."""
    if not isinstance(block, dict) or block.get("type") != "text":
        return None
    text = block.get("text")
    return text if isinstance(text, str) else None


def _extras(block: dict[str, JSON]) -> dict[str, JSON]:
    return {key: value for key, value in block.items() if key != "text"}


def _joinable(
    head: dict[str, JSON], head_extras: dict[str, JSON] | None, block: dict[str, JSON]
) -> bool:
    """Whether a text block may be joined onto the open text block ``head``."""
    if head_extras is None:
        # head is a plain {"type": "text", "text": ...}; so must block be.
        return len(block) == 2
    return len(block) == len(head) and _extras(block) == head_extras


class Message:
    """One message of the timeline: role, optional messageId, content blocks."""

    __slots__ = (
        "_blocks",
        "_head",
        "_head_extras",
        "_joins",
        "_open_len",
        "_parts",
        "_rev",
        "_tail",
        "message_id",
        "role",
    )

    def __init__(self, role: str, message_id: str | None = None) -> None:
        self.role = role
        self.message_id = message_id
        self._blocks: list[dict[str, JSON]] = []
        # The open trailing text block: its first block (for the non-text keys), its text parts,
        # and a cache of the joined block (None until asked for, reset by every append).
        self._head: dict[str, JSON] | None = None
        self._head_extras: dict[str, JSON] | None = None
        self._parts: list[str] = []
        self._tail: dict[str, JSON] | None = None
        # For readers that copy only what was appended (the history): the open block's text
        # length, and a revision that moves on every change other than appending to it.
        self._open_len = 0
        self._rev = 0
        self._joins = 0  # times _parts were joined into one (a mark's part count is then stale)

    def append(self, block: dict[str, JSON]) -> None:
        if self._head is not None and self._head_extras is None and len(block) == 2:
            # The hot path, _text_of and _joinable inlined: plain text onto plain text.
            text = block.get("text")
            if block.get("type") == "text" and isinstance(text, str):
                self._parts.append(text)
                self._open_len += len(text)
                self._tail = None
                return
        text = _text_of(block)
        if text is None:
            self._close_tail()
            self._blocks.append(block)
            return
        head = self._head
        if head is not None and _joinable(head, self._head_extras, block):
            self._parts.append(text)
            self._open_len += len(text)
            self._tail = None
            return
        self._close_tail()
        if self._blocks:
            # A text block after a closed text block with the same extras (e.g. after a
            # whole-message replace) joins it too: reopen that block.
            last = self._blocks[-1]
            last_text = _text_of(last)
            if last_text is not None:
                last_extras = None if len(last) == 2 else _extras(last)
                if _joinable(last, last_extras, block):
                    self._blocks.pop()
                    self._open(last, last_text)
                    self._parts.append(text)
                    self._open_len += len(text)
                    return
        self._open(block, text)

    def extend(self, blocks: Iterable[dict[str, JSON]]) -> None:
        for block in blocks:
            self.append(block)

    def replace(self, blocks: list[dict[str, JSON]]) -> None:
        """Replace the whole content, verbatim (a v2 whole-message upsert)."""
        self._head = self._head_extras = self._tail = None
        self._parts = []
        self._blocks = list(blocks)
        self._rev += 1

    def compact(self) -> None:
        """Join the open text block's parts into one string (content unchanged).

        Called once the message stops being the timeline's last entry, when a chunk without a
        messageId can no longer reach it: one string instead of one per streamed chunk, and
        the agent's first chunk block no longer held.
        """
        if self._head is None or len(self._parts) < 2:
            return
        tail = self._joined_tail()
        self._head = self._tail = {intern_key(key): value for key, value in tail.items()}

    def content(self) -> list[dict[str, JSON]]:
        """The content blocks (a new list; the blocks themselves must not be mutated)."""
        if self._head is None:
            return list(self._blocks)
        return [*self._blocks, self._joined_tail()]

    def text(self) -> str:
        """All text of the message, concatenated (non-text blocks skipped)."""
        return "".join(t for t in (_text_of(b) for b in self.content()) if t is not None)

    def to_json(self) -> dict[str, JSON]:
        if self.message_id is None:
            return {"role": self.role, "content": self.content()}
        return {"messageId": self.message_id, "role": self.role, "content": self.content()}

    def _open(self, head: dict[str, JSON], text: str) -> None:
        self._head = head
        self._head_extras = None if len(head) == 2 else _extras(head)
        self._parts = [text]
        self._tail = None
        self._open_len = len(text)
        self._rev += 1

    def _joined_tail(self) -> dict[str, JSON]:
        tail = self._tail
        if tail is None:
            head = self._head
            assert head is not None
            if len(self._parts) == 1 and head.get("text") is self._parts[0]:
                tail = head  # a single, unjoined block: keep the agent's own dict
            else:
                joined = "".join(self._parts)
                self._parts = [joined]  # later snapshots and appends start from one part
                self._joins += 1
                tail = {**head, "text": joined}
            self._tail = tail
        return tail

    def _close_tail(self) -> None:
        if self._head is not None:
            self._blocks.append(self._joined_tail())
            self._head = self._head_extras = self._tail = None
            self._parts = []
            self._rev += 1

    def stream_mark(self) -> StreamMark | None:
        """Where the open trailing text block stands now, or None when there is none."""
        if self._head is None:
            return None
        return (self._rev, self._open_len, self._joins, len(self._parts))

    def text_since(self, mark: StreamMark, overlap: int = 0) -> str | None:
        """The text appended to the open block since ``mark`` (with up to ``overlap`` characters
        before it), or None when the message changed in any other way since.

        Costs what was appended, not the message's length: a long streamed answer is not
        copied again on every read.
        """
        rev, length, joins, count = mark
        if self._head is None or rev != self._rev or length > self._open_len:
            return None
        need = self._open_len - max(0, length - overlap)
        if need == 0:
            return ""
        parts = self._parts
        # Parts only appended since the mark: the new ones are parts[count:], joined in one C
        # call (a Python loop over them cost more than the rest of a flush) and only the
        # overlap is walked back; after a join, walk back from the end.
        start, got = (count, self._open_len - length) if joins == self._joins else (len(parts), 0)
        while got < need:
            start -= 1
            got += len(parts[start])
        joined = "".join(parts[start:])
        return joined[len(joined) - need :]


class PromptEcho:
    """Recognises an agent's echo of the prompt just sent, so it is not stored twice.

    The expected prompt is a sequence of text runs (adjacent text blocks joined, extras ignored)
    and non-text blocks. Echoed blocks are fed in order; each must continue the prompt. The
    caller holds back the echoed updates and replays them as ordinary ones on a mismatch, so a
    user message that only starts like the prompt loses nothing.
    """

    __slots__ = ("_items", "_offset", "_pos", "held")

    def __init__(self, blocks: Iterable[dict[str, JSON]]) -> None:
        items: list[str | dict[str, JSON]] = []
        for block in blocks:
            text = _text_of(block)
            if text is None:
                items.append(block)
            elif items and isinstance(items[-1], str):
                items[-1] += text
            else:
                items.append(text)
        self._items = [item for item in items if item != ""]
        self._pos = 0
        self._offset = 0
        self.held: list[dict[str, JSON]] = []

    @property
    def started(self) -> bool:
        return self._pos > 0 or self._offset > 0 or bool(self.held)

    @property
    def done(self) -> bool:
        return self._pos >= len(self._items)

    def feed(self, block: JSON) -> bool:
        """Consume one echoed block; False when it does not continue the prompt."""
        if not isinstance(block, dict) or self.done:
            return False
        expected = self._items[self._pos]
        text = _text_of(block)
        if text is None:
            if block != expected:
                return False
            self._pos += 1
            return True
        if not isinstance(expected, str) or not expected.startswith(text, self._offset):
            return False
        self._offset += len(text)
        if self._offset == len(expected):
            self._pos += 1
            self._offset = 0
        return True

    def matches_whole(self, blocks: JSON) -> bool:
        """Whether ``blocks`` (a whole message's content) is exactly the prompt."""
        if not isinstance(blocks, list):
            return False
        probe = PromptEcho([])
        probe._items = self._items
        return all(probe.feed(block) for block in blocks) and probe.done
