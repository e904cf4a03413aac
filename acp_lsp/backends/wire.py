"""The ACP wire: one agent child process, newline-delimited JSON-RPC 2.0 over its stdio.

The bridge owns this layer instead of the SDK's ClientSideConnection (DESIGN §1): frames are
read in order and never dropped, payloads stay raw JSON, stderr is always drained. It knows
nothing of sessions or LSP.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from acp_lsp.backends.wire_frames import (
    CANCEL_REQUEST,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    REQUEST_CANCELLED,
    AgentGone,
    LineBuffer,
    RpcError,
    describe_exit,
    group_has_live_members,
    signal_group,
)
from acp_lsp.backends.wire_frames import (
    NOT_PARSED as _NOT_PARSED,
)
from acp_lsp.backends.wire_frames import discard_awaitable as _discard
from acp_lsp.backends.wire_frames import dumps_frame as _dumps
from acp_lsp.backends.wire_frames import is_request_id as _is_request_id
from acp_lsp.backends.wire_frames import parse_frame as _parse_frame
from acp_lsp.tasks import TaskOwner

__all__ = [
    "CANCEL_REQUEST",
    "INTERNAL_ERROR",
    "INVALID_REQUEST",
    "REQUEST_CANCELLED",
    "AgentGone",
    "AgentProcess",
    "LineBuffer",
    "RpcError",
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


@dataclass(slots=True)
class _Incoming:
    """An agent→client request we have not answered yet."""

    awaitable: Awaitable[Any] | None
    task: asyncio.Task[None] | None = None
    started: bool = False
    cancel_requested: bool = False


class AgentProcess:
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
        self.name = name
        self._proc = proc
        self._on_notification = on_notification
        self._on_request = on_request
        self._on_stderr = on_stderr
        self._on_exit = on_exit
        self._on_send = on_send
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._incoming: dict[int | str | None, _Incoming] = {}
        self._outbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._stdin_broken = False
        self._stderr_raw = b""
        self._closing = False
        self._gone: AgentGone | None = None
        self._shutdown_task: asyncio.Task[None] | None = None
        self._tasks = TaskOwner(f"wire:{name}")
        self._reader = self._tasks.spawn(self._read_stdout(proc.stdout), f"{name}:stdout")
        self._stderr_reader = self._tasks.spawn(self._drain_stderr(proc.stderr), f"{name}:stderr")
        self._writer = self._tasks.spawn(self._write_stdin(proc.stdin), f"{name}:stdin")
        self._waiter = self._tasks.spawn(proc.wait(), f"{name}:wait")
        self._supervisor = self._tasks.spawn(self._supervise(), f"{name}:supervise")

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
                start_new_session=True,
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
        pgid = self._proc.pid  # start_new_session: the agent leads its own group
        self._outbox.put_nowait(None)  # flush what is queued, then close stdin
        await asyncio.wait({self._writer}, timeout=grace)
        await asyncio.wait({self._waiter}, timeout=max(deadline - loop.time(), 0.0))
        if not self._waiter.done():
            log.info("%s: still running %.1fs after stdin closed; SIGTERM", self.name, grace)
            signal_group(pgid, signal.SIGTERM)
            await asyncio.wait({self._waiter}, timeout=grace)
        if not self._waiter.done():
            log.warning("%s: ignored SIGTERM; SIGKILL", self.name)
            signal_group(pgid, signal.SIGKILL)
            await asyncio.wait({self._waiter}, timeout=_KILL_WAIT)
        await self._reap_group(pgid, grace)
        await asyncio.wait({self._supervisor}, timeout=_EXIT_DRAIN + _STDERR_DRAIN + 1)
        self._mark_gone()
        await self._tasks.close()
        with anyio.move_on_after(_KILL_WAIT):
            await self._proc.aclose()

    async def _reap_group(self, pgid: int, grace: float) -> None:
        """The agent's own children (same group) must not outlive it."""
        if not group_has_live_members(pgid):
            return
        signal_group(pgid, signal.SIGTERM)
        if await self._wait_group(pgid, min(grace, 0.5)):
            return
        signal_group(pgid, signal.SIGKILL)
        if not await self._wait_group(pgid, _GROUP_REAP_WAIT):
            log.error("%s: process group %d survived SIGKILL", self.name, pgid)

    @staticmethod
    async def _wait_group(pgid: int, timeout: float) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while group_has_live_members(pgid):
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.01)
        return True

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

    def _gone_error(self) -> AgentGone:
        """A fresh exception per raise (one instance must not collect many tracebacks)."""
        gone = self._gone
        if gone is None:
            return AgentGone(f"agent {self.name!r} (pid {self.pid}) is shutting down")
        return AgentGone(gone.message, stderr_tail=gone.stderr_tail, returncode=gone.returncode)

    # ------------------------------------------------------------------ outgoing

    async def request(self, method: str, params: Any, *, timeout: float | None = None) -> Any:
        """Send a request and wait for its result.

        Raises RpcError for an error response, TimeoutError (naming the method) when
        ``timeout`` passes first, AgentGone when the agent dies or is closed first.
        """
        rid = self._next_id
        self._next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._send(msg)
        self._pending[rid] = fut
        try:
            if timeout is None:
                return await fut
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            raise TimeoutError(
                f"agent {self.name!r}: no answer to {method} (id {rid}) within {timeout:g}s"
            ) from None
        finally:
            self._pending.pop(rid, None)

    def notify(self, method: str, params: Any) -> None:
        """Queue a notification; never blocks (a stuck agent only grows the queue)."""
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def _send(self, msg: dict[str, Any]) -> None:
        if self._gone is not None or self._closing or self._stdin_broken:
            raise self._gone_error()
        data = _dumps(msg)  # before on_send: an unserialisable message is never reported sent
        if self._on_send is not None:
            self._on_send(msg)
        self._outbox.put_nowait(data)

    async def _write_stdin(self, stdin: ByteSendStream) -> None:
        """The single writer: frames go out whole and in queue order."""
        outbox = self._outbox
        try:
            while True:
                data = await outbox.get()
                if data is None:
                    break
                parts = [data]
                while not outbox.empty():  # coalesce a burst into one write
                    more = outbox.get_nowait()
                    if more is None:
                        outbox.put_nowait(None)
                        break
                    parts.append(more)
                await stdin.send(b"".join(parts) if len(parts) > 1 else data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            self._stdin_broken = True
            level = logging.INFO if self._closing or self._gone else logging.WARNING
            log.log(level, "%s: cannot write to agent stdin: %r", self.name, exc)
        finally:
            with contextlib.suppress(anyio.BrokenResourceError, OSError):
                await stdin.aclose()

    # ------------------------------------------------------------------ incoming

    async def _read_stdout(self, stdout: ByteReceiveStream) -> None:
        """Ordered, lossless NDJSON reader: every complete line is handled as it arrives."""
        handle = self._handle_line
        lines = LineBuffer()
        while True:
            try:
                chunk = await stdout.receive(_READ_CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                break
            for line in lines.feed(chunk):
                handle(line)
        last = lines.flush()
        if last:
            handle(last)

    def _handle_line(self, line: bytes) -> None:
        msg = _parse_frame(line)
        if msg is _NOT_PARSED:
            try:
                msg = json.loads(line.decode())
            except UnicodeDecodeError as exc:
                log.warning("%s: skipped stdout line that is not UTF-8 (%s)", self.name, exc)
                return
            except (ValueError, RecursionError):
                if line.strip():
                    log.warning("%s: skipped stdout line that is not JSON: %.200r", self.name, line)
                return
        if type(msg) is not dict:
            what = "a JSON-RPC batch" if type(msg) is list else "not a JSON object"
            log.warning("%s: skipped stdout line (%s): %.200r", self.name, what, line)
            return
        method = msg.get("method")
        if method is None:
            self._resolve(msg)
        elif type(method) is not str:
            log.warning("%s: skipped message with a non-string method: %.200r", self.name, line)
            rid = msg.get("id")
            if "id" in msg and _is_request_id(rid):
                self._reply_error(rid, RpcError(INVALID_REQUEST, "method must be a string"))
        elif "id" not in msg:
            if method == CANCEL_REQUEST:
                self._cancel_incoming(msg.get("params"))
                return
            try:
                self._on_notification(method, msg.get("params"))
            except Exception:
                log.exception("%s: notification handler failed for %s", self.name, method)
        else:
            self._start_incoming(msg["id"], method, msg.get("params"))

    def _resolve(self, msg: dict[str, Any]) -> None:
        rid = msg.get("id")
        fut = self._pending.pop(rid, None) if type(rid) is int else None
        if fut is None:
            log.warning("%s: ignored response to unknown or abandoned id %.100r", self.name, rid)
            return
        if fut.done():
            return
        if "error" in msg:
            fut.set_exception(RpcError.from_json(msg["error"]))
        elif "result" in msg:
            fut.set_result(msg["result"])
        else:
            fut.set_exception(RpcError(INVALID_REQUEST, "response has neither result nor error"))

    def _start_incoming(self, rid: Any, method: str, params: Any) -> None:
        if not _is_request_id(rid):
            log.warning("%s: skipped request %s with invalid id %.100r", self.name, method, rid)
            return
        if rid in self._incoming:
            log.warning("%s: request id %r is already in flight", self.name, rid)
            self._reply_error(rid, RpcError(INVALID_REQUEST, f"duplicate request id {rid!r}"))
            return
        try:
            awaitable = self._on_request(method, params)
        except RpcError as exc:
            self._reply_error(rid, exc)
            return
        except Exception as exc:
            log.exception("%s: request handler failed for %s", self.name, method)
            self._reply_error(rid, RpcError(INTERNAL_ERROR, str(exc) or type(exc).__name__))
            return
        entry = _Incoming(awaitable)
        self._incoming[rid] = entry
        entry.task = self._tasks.spawn(self._serve(rid, method, entry), f"{self.name}:{method}")

    async def _serve(self, rid: int | str | None, method: str, entry: _Incoming) -> None:
        entry.started = True
        awaitable, entry.awaitable = entry.awaitable, None
        reply: dict[str, Any]
        try:
            if entry.cancel_requested:
                _discard(awaitable)
                raise RpcError(REQUEST_CANCELLED, "Request cancelled")
            assert awaitable is not None
            result = await awaitable
            reply = {"jsonrpc": "2.0", "id": rid, "result": result}
        except RpcError as exc:
            reply = {"jsonrpc": "2.0", "id": rid, "error": exc.to_json()}
        except asyncio.CancelledError:
            if not entry.cancel_requested or self._gone is not None:
                raise  # shutting down: nobody is left to answer
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            reply = {"jsonrpc": "2.0", "id": rid, "error": _CANCELLED.to_json()}
        except Exception as exc:
            log.exception("%s: request handler failed for %s", self.name, method)
            error = RpcError(INTERNAL_ERROR, str(exc) or type(exc).__name__)
            reply = {"jsonrpc": "2.0", "id": rid, "error": error.to_json()}
        finally:
            if self._incoming.get(rid) is entry:
                del self._incoming[rid]
        self._send_reply(reply, method)

    def _cancel_incoming(self, params: Any) -> None:
        rid = params.get("requestId") if isinstance(params, dict) else None
        entry = self._incoming.get(rid) if _is_request_id(rid) else None
        if entry is None or entry.cancel_requested:
            log.debug("%s: $/cancel_request for %r: nothing in flight", self.name, rid)
            return
        entry.cancel_requested = True
        if entry.started and entry.task is not None:
            entry.task.cancel()  # not started yet: _serve answers -32800 without running it

    def _reply_error(self, rid: Any, error: RpcError) -> None:
        self._send_reply({"jsonrpc": "2.0", "id": rid, "error": error.to_json()}, "")

    def _send_reply(self, reply: dict[str, Any], method: str) -> None:
        if self._gone is not None or self._closing or self._stdin_broken:
            log.debug("%s: dropped answer to %r: agent gone", self.name, reply.get("id"))
            return
        try:
            self._send(reply)
        except (TypeError, ValueError) as exc:
            log.error("%s: answer to %s is not JSON-serialisable: %s", self.name, method, exc)
            error = RpcError(INTERNAL_ERROR, f"result is not JSON-serialisable: {exc}")
            self._send({"jsonrpc": "2.0", "id": reply.get("id"), "error": error.to_json()})

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


_CANCELLED = RpcError(REQUEST_CANCELLED, "Request cancelled")
