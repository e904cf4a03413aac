"""Agent terminals (ACP ``terminal/*``): real child processes with capped, streamed output.

Each terminal is a child process in its own process group with exactly the environment the
caller composed, stdout and stderr merged into one pipe (so their order is the order the
child wrote them). Output is decoded incrementally as UTF-8 and retained up to a byte limit,
dropping from the start on a character boundary.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import os
import signal
import subprocess
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from acp_lsp.platform.stop import KILL, new_group, signal_group
from acp_lsp.tasks import TaskOwner

log = logging.getLogger(__name__)

# Appends smaller than this are gathered before becoming a chunk, so a child that writes a
# byte at a time does not cost a deque entry (and its object overhead) per byte.
_SMALL_CHUNK = 4096


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


class OutputBuffer:
    """UTF-8 text retained up to ``limit`` bytes, dropping the oldest bytes first.

    The retained text always starts on a character boundary (so it may hold up to three
    bytes less than the limit), and equals the longest such suffix of everything appended.
    Appends and trimming cost time proportional to the bytes appended: chunks sit in a
    deque with a running byte count, and the head chunk is trimmed by an offset.
    """

    def __init__(self, limit: int | None) -> None:
        if limit is not None and limit < 0:
            raise ValueError("output byte limit must not be negative")
        self.limit = limit
        self._chunks: deque[bytes] = deque()
        self._open = bytearray()  # small appends not yet sealed into a chunk
        self._skip = 0  # bytes of _chunks[0] already dropped
        self._nbytes = 0
        self.truncated = False

    @property
    def nbytes(self) -> int:
        """Bytes retained (UTF-8)."""
        return self._nbytes

    def append(self, text: str) -> int:
        """Append ``text``; returns its size in bytes."""
        data = text.encode("utf-8", "surrogatepass")
        if not data:
            return 0
        if len(data) < _SMALL_CHUNK:
            self._open += data
            if len(self._open) >= _SMALL_CHUNK:
                self._seal()
        else:
            self._seal()
            self._chunks.append(data)
        self._nbytes += len(data)
        self._trim()
        return len(data)

    def text(self) -> str:
        """Everything retained."""
        self._seal()
        joined = b"".join(self._chunks)
        return joined[self._skip :].decode("utf-8", "surrogatepass")

    def tail(self, max_bytes: int) -> str:
        """The last at most ``max_bytes`` bytes, starting on a character boundary."""
        want = min(max_bytes, self._nbytes)
        if want <= 0:
            return ""
        self._seal()
        parts: list[bytes] = []
        have = 0
        for chunk in reversed(self._chunks):
            parts.append(chunk)
            have += len(chunk)
            if have >= want:
                break
        data = b"".join(reversed(parts))[-want:]
        start = 0
        while start < len(data) and _is_continuation(data[start]):
            start += 1
        return data[start:].decode("utf-8", "surrogatepass")

    def clear(self) -> None:
        """Forget the retained text (``truncated`` is kept)."""
        self._chunks.clear()
        self._open = bytearray()
        self._skip = 0
        self._nbytes = 0

    def _seal(self) -> None:
        if self._open:
            self._chunks.append(bytes(self._open))
            self._open = bytearray()

    def _trim(self) -> None:
        if self.limit is None or self._nbytes <= self.limit:
            return
        self.truncated = True
        excess = self._nbytes - self.limit
        while excess > 0:
            if not self._chunks:
                self._seal()
            head = self._chunks[0]
            left = len(head) - self._skip
            if left <= excess:
                self._chunks.popleft()
                self._skip = 0
                self._nbytes -= left
                excess -= left
                continue
            self._skip += excess
            self._nbytes -= excess
            excess = 0
            # Chunks hold whole characters, so the boundary is found within this chunk.
            while self._skip < len(head) and _is_continuation(head[self._skip]):
                self._skip += 1
                self._nbytes -= 1
            if self._skip == len(head):
                self._chunks.popleft()
                self._skip = 0


class TerminalError(Exception):
    """A terminal request that cannot be honoured (unknown id, command not found, …)."""


@dataclass(eq=False)
class _Terminal:
    id: str
    owner: str
    output: OutputBuffer
    decoder: codecs.IncrementalDecoder = field(
        default_factory=lambda: codecs.getincrementaldecoder("utf-8")(errors="replace")
    )
    transport: asyncio.SubprocessTransport | None = None
    pid: int = 0
    exit_status: dict[str, Any] | None = None
    process_exited: bool = False
    exited: asyncio.Event = field(default_factory=asyncio.Event)  # exit_status is set
    pipe_closed: asyncio.Event = field(default_factory=asyncio.Event)


class _Protocol(asyncio.SubprocessProtocol):
    """Routes the child's events to the manager.

    A protocol rather than ``Process.wait()``: asyncio only resolves ``wait()`` once every
    pipe is closed, which a background grandchild can postpone forever.
    """

    def __init__(self, manager: TerminalManager, term: _Terminal) -> None:
        self._manager = manager
        self._term = term

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self._term.transport = transport
        self._term.pid = transport.get_pid()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self._manager._received(self._term, data, final=False)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._manager._received(self._term, b"", final=True)
        self._term.pipe_closed.set()

    def process_exited(self) -> None:
        self._term.process_exited = True
        self._manager._process_exited(self._term)


def _exit_status(returncode: int) -> dict[str, Any]:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"SIG{-returncode}"
        return {"exitCode": None, "signal": name}
    return {"exitCode": returncode, "signal": None}


class TerminalManager:
    """Runs agent terminals and reaps them; one manager serves every session."""

    def __init__(
        self,
        on_output: Callable[[str, str, str], None] | None = None,
        on_exit: Callable[[str, str, dict[str, Any]], None] | None = None,
        *,
        drain_grace: float = 1.0,
    ) -> None:
        self._on_output = on_output
        self._on_exit = on_exit
        # After the command exits, how long to wait for the pipe to close: a background
        # grandchild may hold it open forever, and the exit must still be reported.
        self._drain_grace = drain_grace
        self._terminals: dict[str, _Terminal] = {}
        self._tasks = TaskOwner("terminals")
        self._closed = False

    async def create(
        self,
        owner: str,
        command: str,
        args: list[str] | None,
        env: dict[str, str],
        cwd: str,
        output_byte_limit: int | None = None,
    ) -> str:
        """Start ``command`` and return its terminal id at once; it keeps running."""
        if self._closed:
            raise TerminalError("terminals are shut down")
        if output_byte_limit is not None and output_byte_limit < 0:
            raise TerminalError(f"outputByteLimit must not be negative (got {output_byte_limit})")
        if not os.path.isdir(cwd):
            raise TerminalError(f"working directory {cwd} does not exist or is not a directory")
        argv = [command, *(args or [])]
        term = _Terminal(
            id=f"term-{uuid.uuid4().hex[:12]}", owner=owner, output=OutputBuffer(output_byte_limit)
        )
        loop = asyncio.get_running_loop()
        try:
            await loop.subprocess_exec(
                lambda: _Protocol(self, term),
                *argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=env,
                **new_group(),
            )
        except FileNotFoundError as exc:
            raise TerminalError(f"command not found: {command}") from exc
        except PermissionError as exc:
            raise TerminalError(f"command is not executable: {command}") from exc
        except OSError as exc:
            raise TerminalError(f"cannot start {command}: {exc.strerror or exc}") from exc
        self._terminals[term.id] = term
        log.debug("terminal %s (%s): started pid %d: %s", term.id, owner, term.pid, argv)
        return term.id

    def output(self, terminal_id: str) -> dict[str, Any]:
        """``{output, truncated, exitStatus?}`` as of now (no waiting)."""
        term = self._get(terminal_id)
        result: dict[str, Any] = {"output": term.output.text(), "truncated": term.output.truncated}
        if term.exit_status is not None:
            result["exitStatus"] = dict(term.exit_status)
        return result

    async def wait_for_exit(self, terminal_id: str) -> dict[str, Any]:
        """``{exitCode, signal}`` once the command has exited."""
        term = self._get(terminal_id)
        await term.exited.wait()
        assert term.exit_status is not None
        return dict(term.exit_status)

    async def kill(self, terminal_id: str) -> None:
        """Kill the command's process group; the id stays valid."""
        await self._stop(self._get(terminal_id))

    async def release(self, terminal_id: str) -> None:
        """Kill the command if it still runs, then forget the id."""
        term = self._get(terminal_id)
        await self._stop(term)
        self._terminals.pop(terminal_id, None)

    async def release_owner(self, owner: str) -> None:
        """Release every terminal of ``owner`` (a session that ended)."""
        ids = [t.id for t in self._terminals.values() if t.owner == owner]
        await asyncio.gather(*(self.release(i) for i in ids))

    async def close(self) -> None:
        """Kill and reap every terminal; idempotent."""
        self._closed = True
        terms = list(self._terminals.values())
        self._terminals.clear()
        if terms:
            await asyncio.gather(*(self._stop(t) for t in terms))
        await self._tasks.close()

    def pids(self) -> list[int]:
        """Process ids of commands that have not exited yet."""
        return [t.pid for t in self._terminals.values() if not t.process_exited]

    def owner_of(self, terminal_id: str) -> str:
        return self._get(terminal_id).owner

    def _get(self, terminal_id: str) -> _Terminal:
        term = self._terminals.get(terminal_id)
        if term is None:
            raise TerminalError(f"unknown terminal id {terminal_id!r}")
        return term

    async def _stop(self, term: _Terminal) -> None:
        """Kill the group, wait for the exit (bounded) and free the pipe."""
        # The group outlives its leader while grandchildren remain, so kill it even after the
        # command exited (its id is not reused while any member is alive).
        signal_group(term.pid, KILL)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(term.exited.wait(), 5.0)
        if term.transport is not None:
            term.transport.close()

    def _received(self, term: _Terminal, data: bytes, *, final: bool) -> None:
        text = term.decoder.decode(data, final=final)
        if not text:
            return
        term.output.append(text)
        if self._on_output is not None:
            try:
                self._on_output(term.owner, term.id, text)
            except Exception:
                log.exception("terminal %s: output callback failed", term.id)

    def _process_exited(self, term: _Terminal) -> None:
        self._tasks.spawn(self._finish(term), name=f"terminal-exit-{term.id}")

    async def _finish(self, term: _Terminal) -> None:
        try:
            # Let the output the command wrote before exiting arrive first.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(term.pipe_closed.wait(), self._drain_grace)
        finally:
            assert term.transport is not None
            code = term.transport.get_returncode()
            term.exit_status = _exit_status(code if code is not None else -KILL)
            term.exited.set()
        if term.pipe_closed.is_set():
            term.transport.close()
        log.debug("terminal %s exited: %s", term.id, term.exit_status)
        if self._on_exit is not None:
            try:
                self._on_exit(term.owner, term.id, dict(term.exit_status))
            except Exception:
                log.exception("terminal %s: exit callback failed", term.id)
