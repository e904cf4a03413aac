"""A session's running turn, and the prompts queued behind it (DESIGN §2 "Queued prompts"):
``acp/prompt {queue: true}`` while a turn runs waits for its turn instead of failing, in the
order sent.

A waiting prompt holds a place in its session's line. It goes when no turn runs and it is
first; a turn's end wakes the line. A withdrawn place (``$/cancelRequest`` on the prompt, or
``acp/cancel`` of the session) answers ``cancelled`` without reaching the agent. Each change
of a line's length is told to the editor (``changed``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_lsp.backends.base import EditorPort
    from acp_lsp.session import Session


@dataclass
class Turn:
    """A running turn: its task, and how a cancel of it goes."""

    task: asyncio.Task[str]
    cancel_requested: bool = False
    grace: asyncio.Task[None] | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(eq=False)
class _Place:
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    withdrawn: bool = False


class PromptQueue:
    """The lines of queued prompts, per session."""

    def __init__(self, sessions: dict[str, Session], editor: EditorPort) -> None:
        self._lines: dict[str, list[_Place]] = {}
        self._starting: set[str] = set()
        """Sessions whose first queued prompt left to start its turn (until that turn ends)."""
        self._sessions = sessions
        self._editor = editor

    def _changed(self, session_id: str, count: int) -> None:
        """The snapshot's ``queued`` and an ``acp/sessionStatus`` carrying it."""
        session = self._sessions.get(session_id)
        if session is not None:
            session.queued = count
            self._editor.set_status(session, session.status)

    def count(self, session_id: str) -> int:
        return len(self._lines.get(session_id, ()))

    async def wait_turn(self, session_id: str, running: Callable[[], bool]) -> bool:
        """Wait until no turn runs in the session and every prompt queued before has gone.
        False: the prompt was withdrawn (by ``acp/cancel`` or its own ``$/cancelRequest``)."""
        if not running() and not self._lines.get(session_id):
            return True
        place = _Place()
        line = self._lines.setdefault(session_id, [])
        line.append(place)
        self._changed(session_id, len(line))
        try:
            while not place.withdrawn and (
                running() or session_id in self._starting or line[0] is not place
            ):
                place.wake.clear()
                await place.wake.wait()
        except asyncio.CancelledError:
            place.withdrawn = True  # $/cancelRequest: answered cancelled, as a withdrawal
        finally:
            self._leave(session_id, place)
        if not place.withdrawn:
            self._starting.add(session_id)  # the next one waits for the end of this turn
        return not place.withdrawn

    def turn_ended(self, session_id: str) -> None:
        """A turn ended (or a prompt could not start one): the first waiting prompt may go.
        Only the first is woken: the next waits for the end of the turn the first starts."""
        self._starting.discard(session_id)
        line = self._lines.get(session_id)
        if line:
            line[0].wake.set()

    def withdraw_all(self, session_id: str) -> None:
        for place in self._lines.get(session_id, ()):
            place.withdrawn = True
            place.wake.set()

    def _leave(self, session_id: str, place: _Place) -> None:
        line = self._lines.get(session_id, [])
        if place in line:
            first = line[0] is place
            line.remove(place)
            self._changed(session_id, len(line))
            if first and place.withdrawn and line:
                line[0].wake.set()  # the next one is first now (a turn's end wakes it else)
        if not line:
            self._lines.pop(session_id, None)
