"""Agent terminals wired to the editor: ownership per session and live acp/terminalOutput.

A terminal runs with a small base environment (as agents do) plus the ``env`` it was asked
for: with nothing at all, PATH and HOME would be missing and most commands would fail.

Each terminal's output is streamed through a TerminalStream (coalesced, never more than
about twice what is kept), flushed on a timer at the stream's own ``due()`` time.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError
from acp_lsp.config import BASE_ENV_KEYS
from acp_lsp.terminal_stream import TerminalStream
from acp_lsp.terminals import TerminalError, TerminalManager

JsonObject = dict[str, Any]


def base_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """What every terminal starts from: the small base an agent gets too (PATH, HOME, locale,
    TERM …), never the editor's whole environment; the agent's ``env`` goes on top."""
    return {key: environ[key] for key in BASE_ENV_KEYS if key in environ}


class Terminals:
    def __init__(
        self,
        send: Callable[[JsonObject], None],
        base_env: Callable[[], dict[str, str]] = lambda: base_environment(os.environ),
    ) -> None:
        self._send = send
        self._base_env = base_env
        self.manager = TerminalManager(on_output=self._on_output, on_exit=self._on_exit)
        self._streams: dict[str, TerminalStream] = {}
        self._owners: dict[str, str] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def of_session(self, session_id: str) -> list[str]:
        return [tid for tid, owner in self._owners.items() if owner == session_id]

    async def create(
        self,
        session_id: str,
        command: str,
        args: list[str],
        env: dict[str, str],
        cwd: str,
        output_byte_limit: int | None,
    ) -> str:
        try:
            terminal_id = await self.manager.create(
                session_id, command, args, {**self._base_env(), **env}, cwd, output_byte_limit
            )
        except TerminalError as exc:
            raise BackendError(p.INVALID_PARAMS, str(exc)) from None
        self._owners[terminal_id] = session_id

        def send(message: JsonObject, terminal_id: str = terminal_id) -> None:
            self._send({"sessionId": session_id, "terminalId": terminal_id, **message})

        self._streams[terminal_id] = TerminalStream(output_byte_limit, send, clock=time.monotonic)
        return terminal_id

    def _check(self, session_id: str, terminal_id: str) -> None:
        if self._owners.get(terminal_id) != session_id:
            raise BackendError(p.INVALID_PARAMS, f"unknown terminalId {terminal_id!r}")

    def output(self, session_id: str, terminal_id: str) -> JsonObject:
        self._check(session_id, terminal_id)
        return self.manager.output(terminal_id)

    async def wait_for_exit(self, session_id: str, terminal_id: str) -> JsonObject:
        self._check(session_id, terminal_id)
        return await self.manager.wait_for_exit(terminal_id)

    async def kill(self, session_id: str, terminal_id: str) -> None:
        self._check(session_id, terminal_id)
        await self.manager.kill(terminal_id)

    async def release(self, session_id: str, terminal_id: str) -> None:
        self._check(session_id, terminal_id)
        await self.manager.release(terminal_id)
        self._owners.pop(terminal_id, None)

    async def release_session(self, session_id: str) -> None:
        await self.manager.release_owner(session_id)
        for terminal_id in self.of_session(session_id):
            self._owners.pop(terminal_id, None)

    async def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        await self.manager.close()

    def pids(self) -> list[int]:
        return self.manager.pids()

    # -- streaming -------------------------------------------------------------------------
    def _on_output(self, _owner: str, terminal_id: str, text: str) -> None:
        stream = self._streams.get(terminal_id)
        if stream is None:
            return
        stream.feed(text)
        self._arm(terminal_id, stream)

    def _on_exit(self, _owner: str, terminal_id: str, exit_status: dict[str, Any]) -> None:
        timer = self._timers.pop(terminal_id, None)
        if timer is not None:
            timer.cancel()
        stream = self._streams.pop(terminal_id, None)
        if stream is not None:
            stream.exit(exit_status)

    def _arm(self, terminal_id: str, stream: TerminalStream) -> None:
        if terminal_id in self._timers:
            return
        due = stream.due()
        if due is None:
            return
        loop = asyncio.get_running_loop()
        delay = max(0.0, due - time.monotonic())

        def fire() -> None:
            self._timers.pop(terminal_id, None)
            current = self._streams.get(terminal_id)
            if current is not None:
                current.flush()
                self._arm(terminal_id, current)

        self._timers[terminal_id] = loop.call_later(delay, fire)
