"""Streaming plumbing of a demo turn: updates, pauses and client calls, all cancellable.

Every wait races the turn's cancel event, so `cancel()` stops a turn at once: the next
send, pause or client call raises `TurnCancelled` and the turn reports `cancelled`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from acp.interfaces import Client
from acp.schema import SessionNotification

from acp_lsp.demo.agent.catalog import SLOW_DELAY
from acp_lsp.demo.agent.prompt import pieces
from acp_lsp.demo.agent.session import DemoSession

T = TypeVar("T")


class TurnCancelled(Exception):
    """Raised inside a turn once the client cancelled it."""


@dataclass(frozen=True)
class ClientCaps:
    """What the client advertised in `initialize`."""

    read: bool = False
    write: bool = False
    terminal: bool = False
    boolean_config: bool = False

    @staticmethod
    def from_wire(caps: dict[str, Any]) -> ClientCaps:
        fs = caps.get("fs") or {}
        session = caps.get("session") or {}
        return ClientCaps(
            read=fs.get("readTextFile") is True,
            write=fs.get("writeTextFile") is True,
            terminal=caps.get("terminal") is True,
            boolean_config=(session.get("configOptions") or {}).get("boolean") is not None,
        )


class TurnStream:
    """What a turn sends and awaits, with the pacing and cancellation rules."""

    def __init__(
        self, conn: Client, session: DemoSession, caps: ClientCaps, delay: float, slow: bool
    ) -> None:
        self._conn = conn
        self._session = session
        self._caps = caps
        self._slow = slow
        self._delay = max(delay, SLOW_DELAY) if slow else delay
        self._cancelled = asyncio.Event()
        self._n = session.turns
        self._messages = 0

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def _sid(self) -> str:
        return self._session.session_id

    def _check(self) -> None:
        if self._cancelled.is_set():
            raise TurnCancelled

    async def _send(self, update: dict[str, Any], history: dict[str, Any] | None = None) -> None:
        self._check()
        self._session.record(history if history is not None else update)
        note = SessionNotification.model_validate({"sessionId": self._sid, "update": update})
        await self._conn.session_update(session_id=self._sid, update=note.update)

    async def _pause(self, factor: float = 1.0) -> None:
        self._check()
        delay = self._delay * factor
        if delay <= 0:
            await asyncio.sleep(0)
            self._check()
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._cancelled.wait(), delay)
        self._check()

    async def _race(self, call: Callable[[], Awaitable[T]]) -> T:
        """Await a client request unless the turn is cancelled first."""
        self._check()
        task = asyncio.ensure_future(call())
        waiter = asyncio.ensure_future(self._cancelled.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                return task.result()
            raise TurnCancelled
        finally:
            waiter.cancel()
            if not task.done():
                task.cancel()

    async def _say(self, text: str) -> None:
        """Stream `text` as a fresh agent message in small chunks."""
        self._messages += 1
        message_id = f"{self._sid}-t{self._n}-m{self._messages}"
        for piece in pieces(text, words=1 if self._slow else 4):
            await self._send(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": message_id,
                    "content": {"type": "text", "text": piece},
                }
            )
            await self._pause(1.0 if self._slow else 0.2)

    async def _think(self, text: str) -> None:
        message_id = f"{self._sid}-t{self._n}-thought"
        for piece in pieces(text, words=3):
            await self._send(
                {
                    "sessionUpdate": "agent_thought_chunk",
                    "messageId": message_id,
                    "content": {"type": "text", "text": piece},
                }
            )
            await self._pause(1.0 if self._slow else 0.2)

    async def _tool(self, update: dict[str, Any], history: dict[str, Any] | None = None) -> None:
        await self._send(update, history)
        await self._pause()

    def _rel(self, path: Path) -> str:
        try:
            return path.relative_to(self._session.cwd).as_posix()
        except ValueError:
            return str(path)


def text_content(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def status_update(call_id: str, status: str, note: str) -> dict[str, Any]:
    return {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": status,
        "content": [text_content(note)],
    }
