"""Follow-along: the editor shows the file and line a tool call touches.

``window/showDocument {uri, takeFocus: false, selection}`` for tool-call locations (ACP lines
are 1-based, LSP's 0-based), debounced per session (last one wins), only for absolute paths
of existing files, switchable per session. An edit is followed to its first changed line
(``follow_edits``). A call is followed when its target is new, not again on every later change
of the same call, save one: an edit that lands while it is still the call followed last is
shown once more, since the edit moved the editor's view (Neovim's cursor keeps to the line it
was on, now below the inserted ones). The scheduler is injected so tests need no
sleeps.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any, Protocol

from acp_lsp.editor.follow_edits import edit_target

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]


class Handle(Protocol):
    def cancel(self) -> None: ...


Schedule = Callable[[float, Callable[[], None]], Handle]
Show = Callable[[str, int], None]  # (absolute path, 0-based line)


def location_target(loc: Any) -> tuple[str, int] | None:
    """(path, 0-based line) for a location worth following, else None (logged)."""
    if not isinstance(loc, dict):
        return None
    path = loc.get("path")
    if not isinstance(path, str) or not path:
        return None
    if not os.path.isabs(path):
        log.info("follow: ignoring relative path %r", path)
        return None
    if not os.path.isfile(path):
        log.info("follow: ignoring %r (no such file)", path)
        return None
    line = loc.get("line")
    zero_based = (
        line - 1 if isinstance(line, int) and not isinstance(line, bool) and line > 0 else 0
    )
    return path, zero_based


class Follower:
    """Per-session debounced jumps to the latest tool-call location."""

    def __init__(self, schedule: Schedule, show: Show, debounce_s: float = 0.2) -> None:
        self._schedule = schedule
        self._show = show
        self.debounce_s = debounce_s
        self._enabled: dict[str, bool] = {}
        self._pending: dict[str, tuple[str, int]] = {}
        self._timers: dict[str, Handle] = {}
        # (session, toolCallId) -> the target already followed for that call, and whether it was
        # shown as a completed edit: every change to a call re-sends its locations, and a
        # status change must not jump back to it.
        self._followed: dict[tuple[str, str], tuple[tuple[str, int], bool]] = {}
        self._latest: dict[str, tuple[str, str]] = {}  # session -> the call followed last
        self.default = True
        self.jumps = 0

    def enabled(self, session_id: str) -> bool:
        return self._enabled.get(session_id, self.default)

    def set_enabled(self, session_id: str, enabled: bool) -> None:
        self._enabled[session_id] = enabled
        if not enabled:
            self._drop(session_id)

    def on_tool_call(
        self,
        session_id: str,
        tool_call: JsonObject,
        allowed: Callable[[str], bool] = lambda _path: True,
    ) -> None:
        if not self.enabled(session_id):
            return
        target = edit_target(tool_call)  # an edit: its first changed line, not its location
        if target is None or not allowed(target[0]):
            target = self._location(tool_call, allowed)
        if target is None:
            return
        key = (session_id, str(tool_call.get("toolCallId")))
        landed = tool_call.get("kind") == "edit" and tool_call.get("status") == "completed"
        followed, shown_landed = self._followed.get(key, (None, False))
        if followed == target and (
            not landed or shown_landed or self._latest.get(session_id) != key
        ):
            return
        self._followed[key] = (target, landed or shown_landed)
        self._latest[session_id] = key
        self._pending[session_id] = target
        timer = self._timers.pop(session_id, None)
        if timer is not None:
            timer.cancel()
        self._timers[session_id] = self._schedule(self.debounce_s, lambda: self._fire(session_id))

    @staticmethod
    def _location(tool_call: JsonObject, allowed: Callable[[str], bool]) -> tuple[str, int] | None:
        locations = tool_call.get("locations")
        if not isinstance(locations, list):
            return None
        for loc in locations:
            target = location_target(loc)
            if target is not None and allowed(target[0]):
                return target
        return None

    def _fire(self, session_id: str) -> None:
        self._timers.pop(session_id, None)
        target = self._pending.pop(session_id, None)
        if target is not None and self.enabled(session_id):
            self.jumps += 1
            self._show(*target)

    def _drop(self, session_id: str) -> None:
        timer = self._timers.pop(session_id, None)
        if timer is not None:
            timer.cancel()
        self._pending.pop(session_id, None)

    def forget(self, session_id: str) -> None:
        self._drop(session_id)
        self._enabled.pop(session_id, None)
        self._latest.pop(session_id, None)
        for key in [k for k in self._followed if k[0] == session_id]:
            del self._followed[key]
