"""A session's half of bounded memory: old tool calls' large fields live in the history store.

The history's recorder gives the session a ``Loader`` and, after each write, the revisions
it wrote (``tool_calls_stored``); the session then drops the large fields of the calls that
are old (not among the last turn's nor the last ``KEEP_RECENT_TOOL_CALLS``), finished and
unchanged since (``ToolCalls.evict``). Readers of the session
(snapshots, exports, the review) get them back from the store unchanged.
"""

from __future__ import annotations

from acp_lsp.session.toolcalls import UNFINISHED_STATUSES, Loader, ToolCalls

# Tool calls whose large fields stay in memory however old (besides the last turn's and the
# unfinished ones): what editors and the review read most.
KEEP_RECENT_TOOL_CALLS = 16


class ToolCallMemory:
    """Mixed into Session (acp_lsp.session.model), whose tool calls and turn these are."""

    _tool_calls: ToolCalls
    _turn_ids: dict[str, None]  # the tool calls of the turn (the last one, once it ended)

    def set_tool_call_loader(self, loader: Loader | None) -> None:
        """How evicted tool calls are read back (the history store); None: none is evicted."""
        self._tool_calls.loader = loader

    def tool_call_revision(self, tool_call_id: str) -> int:
        """Moves on every change of the call: what the store holds is compared by it."""
        return self._tool_calls.revision(tool_call_id)

    def tool_calls_stored(self, stored_session_id: str, revisions: list[tuple[str, int]]) -> int:
        """The history store now holds these calls as they were at these revisions: drop the
        large fields of those that are old, finished and unchanged since. Returns how many
        were dropped."""
        calls = self._tool_calls
        for tool_call_id, revision in revisions:
            calls.stored(tool_call_id, revision)
        candidates = calls.evictable()
        if not candidates:
            return 0
        recent = calls.last_ids(KEEP_RECENT_TOOL_CALLS)
        dropped = 0
        for tool_call_id in candidates:
            state = calls.peek(tool_call_id)
            if state is None or tool_call_id in recent or tool_call_id in self._turn_ids:
                continue
            status = state.get("status")
            if isinstance(status, str) and status in UNFINISHED_STATUSES:
                continue
            # A review waiting for the user is no reason to keep it: the review keeps its own
            # texts and reads only the status (kept) and the content of the call being
            # updated (the turn's) from the session.
            dropped += calls.evict(tool_call_id, stored_session_id)
        return dropped

    def evicted_tool_calls(self) -> int:
        return self._tool_calls.evicted()

    def tool_call_count(self) -> int:
        """How many tool calls there are (``len(tool_calls())`` reads evicted ones back)."""
        return len(self._tool_calls)

    def restore_tool_calls(self) -> None:
        """Every evicted call back in memory (its stored copy is about to go)."""
        self._tool_calls.restore_all()
