"""The ACP wire: one agent child process, newline-delimited JSON-RPC 2.0 over its stdio.

The bridge owns this layer instead of the SDK's ClientSideConnection (DESIGN §1): frames are
read in order and never dropped, payloads stay raw JSON, stderr is always drained. It knows
nothing of sessions or LSP.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, Process

from acp_lsp.backends.wire_frames import (
    CANCEL_REQUEST,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    REQUEST_CANCELLED,
    AgentGone,
    LineBuffer,
    RpcError,
    describe_exit,
)
from acp_lsp.backends.wire_frames import discard_awaitable as _discard
from acp_lsp.backends.wire_rpc import JsonRpcPeer
from acp_lsp.backends.wire_tree import Proc, descendants, noted_with, started, stop_tree
from acp_lsp.platform.stop import KILL, new_group, signal_group

__all__ = [
    "CANCEL_REQUEST",
    "INTERNAL_ERROR",
    "INVALID_REQUEST",
    "REQUEST_CANCELLED",
    "AgentGone",
    "AgentProcess",
    "LineBuffer",
    "RpcError",
    "describe_exit",
]

log = logging.getLogger(__name__)


_READ_CHUNK = 1 << 16
_STDERR_KEEP = 16 * 1024  # raw bytes kept for stderr_tail()
_STDERR_MAX_LINE = 64 * 1024  # a longer stderr "line" is passed on in pieces
_EXIT_DRAIN = 1.0  # after the process exits: how long its last stdout may take to arrive
_STDOUT_EOF_EXIT_WAIT = 2.0  # after stdout closes: how long to wait for the exit code
_STDERR_DRAIN = 0.5  # how long the stderr tail may take to settle before reporting
_KILL_WAIT = 5.0
_GROUP_REAP_WAIT = 2.0
_ORPHAN_GRACE = 0.5  # a dead agent's children: SIGTERM, then SIGKILL after this
_TREE_NOTE_EVERY = 0.2  # how often the agent's tree is noted besides at each request


class AgentProcess(JsonRpcPeer):
    """A running agent: spawn it with :meth:`start`, talk with :meth:`request`/:meth:`notify`.

    Incoming notifications go to ``on_notification`` synchronously, in arrival order. Incoming
    requests call ``on_request(method, params)`` synchronously in arrival order too (so a plain
    function may record state before returning its awaitable); the awaitable then runs in its
    own task and its result, or the RpcError it raises, is sent back.
    """

    def __init__(
        self,
        proc: Process,
        *,
        name: str,
        on_notification: Callable[[str, Any], None],
        on_request: Callable[[str, Any], Awaitable[Any]],
        on_stderr: Callable[[str], None] | None,
        on_exit: Callable[[int | None], None] | None,
        on_send: Callable[[dict[str, Any]], None] | None,
    ) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        super().__init__(
            name=name, on_notification=on_notification, on_request=on_request, on_send=on_send
        )
        self._proc = proc
        self._leader_start = started(proc.pid)  # tells the agent's tree from a reused pid
        self._seen_tree: list[Proc] = []  # its descendants noted so far, while they run
        self._on_stderr = on_stderr
        self._on_exit = on_exit
        self._stderr_raw = b""
        self._shutdown_task: asyncio.Task[None] | None = None
        self._reader = self._tasks.spawn(self._read_stdout(proc.stdout), f"{name}:stdout")
        self._stderr_reader = self._tasks.spawn(self._drain_stderr(proc.stderr), f"{name}:stderr")
        self._writer = self._tasks.spawn(self._write_stdin(proc.stdin), f"{name}:stdin")
        self._waiter = self._tasks.spawn(proc.wait(), f"{name}:wait")
        self._supervisor = self._tasks.spawn(self._supervise(), f"{name}:supervise")
        self._tasks.spawn(self._keep_noting_tree(), f"{name}:tree")

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def start(
        cls,
        command: str,
        args: list[str],
        *,
        env: dict[str, str],
        cwd: str | None,
        on_notification: Callable[[str, Any], None],
        on_request: Callable[[str, Any], Awaitable[Any]],
        on_stderr: Callable[[str], None] | None = None,
        on_exit: Callable[[int | None], None] | None = None,
        on_send: Callable[[dict[str, Any]], None] | None = None,
        name: str = "agent",
        startup_grace: float = 0.05,
    ) -> AgentProcess:
        """Spawn ``command`` in its own process group with exactly ``env``.

        Raises AgentGone if it cannot be started, or if it exits within ``startup_grace``
        seconds (the message then carries its exit code and stderr tail).
        """
        try:
            proc = await anyio.open_process(
                [command, *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=env,
                **new_group(),
            )
        except FileNotFoundError as exc:
            if cwd is not None and exc.filename == cwd:
                raise AgentGone(f"agent {name!r}: working directory not found: {cwd}") from exc
            path = env.get("PATH", os.defpath)
            raise AgentGone(
                f"agent {name!r}: command not found: {command!r} (PATH={path})"
            ) from exc
        except PermissionError as exc:
            raise AgentGone(f"agent {name!r}: not executable: {command!r} ({exc})") from exc
        except OSError as exc:
            raise AgentGone(f"agent {name!r}: cannot start {command!r}: {exc}") from exc
        agent = cls(
            proc,
            name=name,
            on_notification=on_notification,
            on_request=on_request,
            on_stderr=on_stderr,
            on_exit=on_exit,
            on_send=on_send,
        )
        log.info("%s: started %s (pid %d)", name, command, proc.pid)
        if startup_grace <= 0:
            return agent
        try:
            await asyncio.wait({agent._waiter}, timeout=startup_grace)
            if agent._waiter.done():
                await asyncio.wait({agent._supervisor}, timeout=_EXIT_DRAIN + _STDERR_DRAIN + 1)
        except BaseException:  # cancelled while waiting: leave no process behind
            await agent.close(grace=0.1)
            raise
        if agent._waiter.done():
            await agent.close(grace=0.1)
            raise AgentGone(
                f"agent {name!r} exited at once ({describe_exit(proc.returncode)})",
                stderr_tail=agent.stderr_tail(),
                returncode=proc.returncode,
            )
        return agent

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    @property
    def alive(self) -> bool:
        return self._gone is None and not self._closing and self._proc.returncode is None

    def stderr_tail(self, max_bytes: int = 4000) -> str:
        """The last ``max_bytes`` bytes the agent wrote to stderr, decoded."""
        raw = self._stderr_raw[-max_bytes:] if max_bytes > 0 else b""
        start = 0
        while start < len(raw) and raw[start] & 0xC0 == 0x80:  # cut inside a UTF-8 char
            start += 1
        return raw[start:].decode("utf-8", errors="replace").rstrip()

    async def close(self, grace: float = 2.0) -> None:
        """Stop the agent: EOF on stdin, then SIGTERM, then SIGKILL to its whole process group.

        Idempotent; survives cancellation of the caller (the shutdown runs to completion).
        """
        if self._shutdown_task is None:
            self._shutdown_task = asyncio.get_running_loop().create_task(
                self._shutdown(grace), name=f"{self.name}:close"
            )
        await asyncio.shield(self._shutdown_task)

    async def _shutdown(self, grace: float) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        self._closing = True
        pgid = self._proc.pid  # new_group(): the agent leads its own group
        self._outbox.put_nowait(None)  # flush what is queued, then close stdin
        await asyncio.wait({self._writer}, timeout=grace)
        await asyncio.wait({self._waiter}, timeout=max(deadline - loop.time(), 0.0))
        if not self._waiter.done():
            log.info("%s: still running %.1fs after stdin closed; SIGTERM", self.name, grace)
            signal_group(pgid, signal.SIGTERM)
            await asyncio.wait({self._waiter}, timeout=grace)
        if not self._waiter.done():
            log.warning("%s: ignored SIGTERM; SIGKILL", self.name)
            signal_group(pgid, KILL)
            await asyncio.wait({self._waiter}, timeout=_KILL_WAIT)
        await self._reap_tree(grace)
        await asyncio.wait({self._supervisor}, timeout=_EXIT_DRAIN + _STDERR_DRAIN + 1)
        self._mark_gone()
        await self._tasks.close()
        with anyio.move_on_after(_KILL_WAIT):
            await self._proc.aclose()

    async def _reap_tree(self, grace: float) -> None:
        """Nothing the agent started may outlive it: its group, and the commands it ran in
        sessions of their own (Claude Code's Bash), which signalling the group misses."""
        left = await stop_tree(
            self.pid, self._leader_start, min(grace, 0.5), _GROUP_REAP_WAIT, self._seen_tree
        )
        if left:
            log.error("%s: processes %s survived SIGKILL", self.name, [p.pid for p in left])

    async def request(self, method: str, params: Any, *, timeout: float | None = None) -> Any:
        self._note_tree()  # what it runs for this request is noted from its start
        return await super().request(method, params, timeout=timeout)

    def _note_tree(self) -> None:
        """Note the agent's descendants: a command it ran in a session of its own is
        orphaned when it dies, and only this note still links the two (~0.1 ms)."""
        if self._gone is None:
            found = descendants(self.pid)
            if started(self.pid) == self._leader_start:  # a dead agent has no children left
                # kept, not replaced: a note taken between the death of the agent's program
                # and its wrapper's exit no longer sees what the program orphaned
                self._seen_tree = noted_with(self._seen_tree, found)

    async def _keep_noting_tree(self) -> None:
        while self._gone is None:
            await asyncio.sleep(_TREE_NOTE_EVERY)
            self._note_tree()

    async def _supervise(self) -> None:
        """Decide when the agent is gone: its process exited, or its stdout closed."""
        await asyncio.wait({self._reader, self._waiter}, return_when=asyncio.FIRST_COMPLETED)
        if not self._reader.done():
            # Exited, but a grandchild may hold stdout open: read what is there, then stop.
            await asyncio.wait({self._reader}, timeout=_EXIT_DRAIN)
            self._reader.cancel()
        elif not self._waiter.done():
            await asyncio.wait({self._waiter}, timeout=_STDOUT_EOF_EXIT_WAIT)
        await asyncio.wait({self._stderr_reader}, timeout=_STDERR_DRAIN)
        self._mark_gone()
        if not self._closing:
            # it died on its own (crash, kill -9): what it started is orphaned; stop it
            await self._reap_tree(_ORPHAN_GRACE)

    def _mark_gone(self) -> None:
        """Fail everything that waits on the agent and report its exit, exactly once."""
        if self._gone is not None:
            return
        rc = self._proc.returncode
        if self._closing:
            what = "was closed"
        elif rc is None:
            what = "closed its stdout"
        else:
            what = f"exited ({describe_exit(rc)})"
        tail = self.stderr_tail()
        self._gone = AgentGone(
            f"agent {self.name!r} (pid {self.pid}) {what}", stderr_tail=tail, returncode=rc
        )
        log.log(logging.INFO if self._closing else logging.WARNING, "%s", self._gone)
        pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(self._gone_error())
        incoming, self._incoming = self._incoming, {}
        for entry in incoming.values():
            if not entry.started:
                _discard(entry.awaitable)
            if entry.task is not None:
                entry.task.cancel()
        self._outbox.put_nowait(None)
        if self._on_exit is not None:
            try:
                self._on_exit(rc)
            except Exception:
                log.exception("%s: on_exit callback failed", self.name)

    async def _drain_stderr(self, stderr: ByteReceiveStream) -> None:
        """Read stderr continuously (an undrained pipe blocks the agent) and keep its tail."""
        partial = b""
        while True:
            try:
                chunk = await stderr.receive(_READ_CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                break
            self._stderr_raw = (self._stderr_raw + chunk)[-_STDERR_KEEP:]
            if self._on_stderr is None:
                continue
            lines = (partial + chunk).split(b"\n") if partial else chunk.split(b"\n")
            partial = lines.pop()
            if len(partial) > _STDERR_MAX_LINE:
                lines.append(partial)
                partial = b""
            for line in lines:
                self._emit_stderr(line)
        if partial:
            self._emit_stderr(partial)

    def _emit_stderr(self, line: bytes) -> None:
        assert self._on_stderr is not None
        try:
            self._on_stderr(line.decode("utf-8", errors="replace").rstrip("\r"))
        except Exception:
            log.exception("%s: on_stderr callback failed", self.name)
