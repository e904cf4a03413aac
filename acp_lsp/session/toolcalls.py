"""Tool calls of one session, merged with ACP v2's upsert rule (DESIGN §3).

One rule serves v1 ``tool_call`` / ``tool_call_update``, v2 ``tool_call_content_chunk`` and the
``toolCall`` of permission requests: keyed by ``toolCallId``; an omitted field keeps its value,
``null`` clears it, a value replaces it; ``content`` and ``locations`` replace whole arrays; an
unknown id creates the call with client defaults. Field values are kept exactly as the agent
sent them (unknown kinds, statuses, content types and fields included), as equal values
whose keys and short strings are interned (``jsonish.compact``: a session keeps thousands).

Every change yields one editor-facing update carrying the merged state, so editors never merge:
``{"sessionUpdate": "tool_call", "toolCall": state}``, or, when content was only appended or
not touched at all, ``{"sessionUpdate": "tool_call", "toolCall": state minus "content",
"contentAppend": items}`` (``items`` empty when nothing was appended).

Bounded memory: once the history store holds a finished call's state exactly as it is
(``stored``), ``evict`` drops its large fields (``content``, ``rawInput``, ``rawOutput``: a
whole-file Write carries the file several times) and every reader gets them back from the
store through the session's ``Loader``; a call that changes again is read back whole first.
"""

from __future__ import annotations

import copy
import itertools
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping

from acp_lsp.session.jsonish import JSON, brief, compact, intern_key

log = logging.getLogger(__name__)


UNFINISHED_STATUSES = frozenset({"pending", "in_progress"})

# The value a required ToolCallState field takes when created without it or cleared with null.
_SCALAR_DEFAULTS: dict[str, str] = {"title": "", "kind": "other", "status": "pending"}
_ARRAY_FIELDS = ("content", "locations")
# Keys of an update that address the call rather than describe it.
_ADDRESS_KEYS = frozenset({"toolCallId", "sessionUpdate"})
# What an evicted call leaves with the store: the large fields.
EVICTED_KEYS = ("content", "rawInput", "rawOutput")

# (stored session id, tool call ids) -> the stored states of those found (history store)
Loader = Callable[[str, list[str]], dict[str, dict[str, JSON]]]


def named_paths(tool_call: Mapping[str, JSON]) -> list[str]:
    """The paths a tool call (or a patch of one) names: its locations and its diff items."""
    paths: list[str] = []
    locations = tool_call.get("locations")
    if isinstance(locations, list):
        for loc in locations:
            if isinstance(loc, dict) and isinstance(loc.get("path"), str):
                paths.append(loc["path"])
    content = tool_call.get("content")
    items = content if isinstance(content, list) else [content] if content else []
    for item in items:
        if isinstance(item, dict) and item.get("type") == "diff":
            path = item.get("path")
            if isinstance(path, str):
                paths.append(path)
    return paths


def new_tool_call(tool_call_id: str) -> dict[str, JSON]:
    """A tool call with every required field at its client default."""
    return {
        "toolCallId": tool_call_id,
        "title": "",
        "kind": "other",
        "status": "pending",
        "content": [],
        "locations": [],
    }


class ToolCalls:
    """The merged state of every tool call, in creation order.

    Stored states are never handed out: updates and accessors return shallow copies (with their
    own ``content`` list, the only value this class mutates in place), so a caller may hold an
    update until it is serialised while later updates keep arriving.
    """

    def __init__(self) -> None:
        self._calls: dict[str, dict[str, JSON]] = {}
        self._revs: dict[str, int] = {}  # moves on every change of a call
        self._stored: dict[str, int] = {}  # the revision the store holds, until evicted
        self._evicted: dict[str, str] = {}  # call -> the session id the store holds it under
        self.loader: Loader | None = None

    def __contains__(self, tool_call_id: object) -> bool:
        return tool_call_id in self._calls

    def __len__(self) -> int:
        return len(self._calls)

    def ids(self) -> Iterator[str]:
        return iter(self._calls)

    def get(self, tool_call_id: str) -> dict[str, JSON] | None:
        state = self._calls.get(tool_call_id)
        if state is None:
            return None
        if tool_call_id in self._evicted:
            return self._loaded([tool_call_id]).get(tool_call_id) or _full_copy(state)
        return _full_copy(state)

    def states(self) -> list[dict[str, JSON]]:
        """Copies of every state, in creation order."""
        loaded = self._loaded(list(self._evicted)) if self._evicted else {}
        return [loaded.get(key) or _full_copy(state) for key, state in self._calls.items()]

    # -- bounded memory: the history store keeps old calls' large fields ---------------------

    def revision(self, tool_call_id: str) -> int:
        return self._revs.get(tool_call_id, 0)

    def stored(self, tool_call_id: str, revision: int) -> None:
        """The store holds ``tool_call_id`` as it was at ``revision`` (the recorder wrote it)."""
        if tool_call_id in self._calls and tool_call_id not in self._evicted:
            self._stored[tool_call_id] = revision

    def evictable(self) -> list[str]:
        """Calls the store holds as they are now, not evicted yet (oldest first)."""
        return [key for key, rev in self._stored.items() if self._revs.get(key, 0) == rev]

    def evict(self, tool_call_id: str, stored_session_id: str) -> bool:
        """Drop the large fields of a call the store holds as it is now; False if it does not
        (or there is no loader to read them back)."""
        state = self._calls.get(tool_call_id)
        rev = self._stored.get(tool_call_id)
        if state is None or self.loader is None or rev != self._revs.get(tool_call_id, 0):
            return False
        del self._stored[tool_call_id]
        if not any(state.get(key) for key in EVICTED_KEYS):
            return False  # nothing large to drop
        state["content"] = []
        state.pop("rawInput", None)
        state.pop("rawOutput", None)
        self._evicted[tool_call_id] = stored_session_id
        return True

    def evicted(self) -> int:
        return len(self._evicted)

    def peek(self, tool_call_id: str) -> dict[str, JSON] | None:
        """The state as held (no copy, large fields absent when evicted): read-only."""
        return self._calls.get(tool_call_id)

    def last_ids(self, count: int) -> set[str]:
        """The ``count`` calls created last."""
        return set(itertools.islice(reversed(self._calls), count))

    def whole_copy(self) -> ToolCalls:
        """A deep copy holding every call whole (evicted ones read back), without a loader."""
        out = ToolCalls()
        loaded = self._loaded(list(self._evicted)) if self._evicted else {}
        for key, state in self._calls.items():
            out._calls[key] = copy.deepcopy(loaded.get(key) or state)
        return out

    def restore_all(self) -> None:
        """Read every evicted call back into memory (the store is about to lose them)."""
        loaded = self._loaded(list(self._evicted))
        for key in list(self._evicted):
            self._restore(key, loaded.get(key))

    def _loaded(self, tool_call_ids: list[str]) -> dict[str, dict[str, JSON]]:
        """The full states of evicted calls, read back from the store (missing ones left out)."""
        by_session: dict[str, list[str]] = {}
        for key in tool_call_ids:
            by_session.setdefault(self._evicted[key], []).append(key)
        found: dict[str, dict[str, JSON]] = {}
        for session_id, keys in by_session.items():
            try:
                assert self.loader is not None  # evict needs one
                found.update(self.loader(session_id, keys))
            except Exception:
                log.exception("tool calls %s: cannot read them back from the history", keys)
        for key, state in found.items():
            # the small fields are the session's (they may have moved on)
            live = self._calls[key]
            found[key] = {**live, **{k: state[k] for k in EVICTED_KEYS if k in state}}
            if not isinstance(found[key].get("content"), list):
                found[key]["content"] = []
        return found

    def _restore(self, tool_call_id: str, full: dict[str, JSON] | None = None) -> None:
        """Before an evicted call changes: its large fields back in memory."""
        if full is None:
            full = self._loaded([tool_call_id]).get(tool_call_id)
        del self._evicted[tool_call_id]
        if full is not None:
            self._calls[tool_call_id].update(
                (intern_key(k), compact(full[k])) for k in EVICTED_KEYS if k in full
            )

    def _changed(self, tool_call_id: str) -> None:
        self._revs[tool_call_id] = self._revs.get(tool_call_id, 0) + 1

    def upsert(self, fields: Mapping[str, JSON]) -> tuple[dict[str, JSON], bool] | None:
        """Merge one patch. Returns (editor update, created) or None for a malformed patch."""
        tool_call_id = fields.get("toolCallId")
        if not isinstance(tool_call_id, str):
            log.warning("tool call update without a string toolCallId: %s", brief(fields))
            return None
        if tool_call_id in self._evicted:
            self._restore(tool_call_id)
        self._changed(tool_call_id)
        state = self._calls.get(tool_call_id)
        created = state is None
        if state is None:
            state = new_tool_call(tool_call_id)
            self._calls[tool_call_id] = state

        # Content is applied last so that "only appended" can be recognised: a v1 agent that
        # streams tool output resends the whole, growing array in each tool_call_update. The
        # other fields are compared only when such a patch is possible.
        track_changes = not created and "content" in fields
        others_changed = False
        has_content = False
        new_content: list[JSON] = []
        for key, value in fields.items():
            if key in _ADDRESS_KEYS:
                continue
            if key in _ARRAY_FIELDS:
                if value is None:
                    value = []
                elif not isinstance(value, list):
                    log.warning("tool call %s: %s is not an array, ignored", tool_call_id, key)
                    continue
                if key == "content":
                    has_content, new_content = True, value
                    continue
            elif value is None:
                if key not in _SCALAR_DEFAULTS:
                    others_changed = others_changed or key in state
                    state.pop(key, None)
                    continue
                value = _SCALAR_DEFAULTS[key]
            if track_changes and not others_changed:
                others_changed = state.get(key, _MISSING) != value
            state[intern_key(key)] = compact(value)

        if has_content:
            old_content: list[JSON] = state["content"]
            old_len = len(old_content)
            if (
                track_changes
                and not others_changed
                and len(new_content) > old_len
                and new_content[:old_len] == old_content
            ):
                appended = compact(new_content[old_len:])
                old_content.extend(appended)
                return _append_update(state, appended), created
            state["content"] = compact(new_content)  # a new list
        elif not created:
            # Content untouched (say, only the status changed): the editor keeps the content it
            # has, so it is not sent again. Resending it on every status change made tool
            # output cost the editor twice its size.
            return _append_update(state, []), created
        return _full_update(state), created

    def append_content(self, tool_call_id: str, item: JSON) -> tuple[dict[str, JSON], bool]:
        """Append one content item (v2 ``tool_call_content_chunk``); an unknown id creates."""
        if tool_call_id in self._evicted:
            self._restore(tool_call_id)
        self._changed(tool_call_id)
        state = self._calls.get(tool_call_id)
        item = compact(item)
        if state is None:
            state = new_tool_call(tool_call_id)
            state["content"].append(item)
            self._calls[tool_call_id] = state
            return _full_update(state), True
        state["content"].append(item)
        return _append_update(state, [item]), False

    def set_field(self, tool_call_id: str, key: str, value: JSON) -> dict[str, JSON] | None:
        """Set one bridge-owned field (e.g. ``review``) of an existing call."""
        state = self._calls.get(tool_call_id)
        if state is None:
            return None
        if key in EVICTED_KEYS and tool_call_id in self._evicted:
            self._restore(tool_call_id)
        self._changed(tool_call_id)  # the small fields stay in memory: no read back
        state[key] = value
        return _append_update(state, [])  # content unchanged: not resent

    def finish(self, tool_call_ids: Iterable[str], final_status: str) -> list[dict[str, JSON]]:
        """Give every listed call still pending/in progress ``final_status``."""
        updates: list[dict[str, JSON]] = []
        for tool_call_id in tool_call_ids:
            state = self._calls.get(tool_call_id)
            if state is None:
                continue
            status = state.get("status")
            # Raw statuses may be any JSON value: only strings can be unfinished.
            if isinstance(status, str) and status in UNFINISHED_STATUSES:
                self._changed(tool_call_id)
                state["status"] = final_status
                updates.append(_append_update(state, []))  # content unchanged: not resent
        return updates


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


def _full_copy(state: dict[str, JSON]) -> dict[str, JSON]:
    copy = dict(state)
    copy["content"] = list(state["content"])
    return copy


def _full_update(state: dict[str, JSON]) -> dict[str, JSON]:
    return {"sessionUpdate": "tool_call", "toolCall": _full_copy(state)}


def _append_update(state: dict[str, JSON], items: list[JSON]) -> dict[str, JSON]:
    without_content = {key: value for key, value in state.items() if key != "content"}
    return {"sessionUpdate": "tool_call", "toolCall": without_content, "contentAppend": items}
