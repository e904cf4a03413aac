"""JSON-RPC 2.0 over newline-delimited JSON, both ways: requests with their answers, ordered
notifications, and the agent's own requests answered from their tasks. What it runs over (a
child process's stdio) is acp_lsp.backends.wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from acp_lsp.backends.wire_frames import (
    CANCEL_REQUEST,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    REQUEST_CANCELLED,
    AgentGone,
    LineBuffer,
    RpcError,
)
from acp_lsp.backends.wire_frames import (
    NOT_PARSED as _NOT_PARSED,
)
from acp_lsp.backends.wire_frames import discard_awaitable as _discard
from acp_lsp.backends.wire_frames import dumps_frame as _dumps
from acp_lsp.backends.wire_frames import is_request_id as _is_request_id
from acp_lsp.backends.wire_frames import parse_frame as _parse_frame
from acp_lsp.tasks import TaskOwner

log = logging.getLogger(__name__)

_READ_CHUNK = 1 << 16


@dataclass(slots=True)
class _Incoming:
    """An agent→client request we have not answered yet."""

    awaitable: Awaitable[Any] | None
    task: asyncio.Task[None] | None = None
    started: bool = False
    cancel_requested: bool = False


class JsonRpcPeer:
    """One end of the wire: what ``request``/``notify`` send, and what arrives."""

    def __init__(
        self,
        *,
        name: str,
        on_notification: Callable[[str, Any], None],
        on_request: Callable[[str, Any], Awaitable[Any]],
        on_send: Callable[[dict[str, Any]], None] | None,
    ) -> None:
        self.name = name
        self._on_notification = on_notification
        self._on_request = on_request
        self._on_send = on_send
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._incoming: dict[int | str | None, _Incoming] = {}
        self._outbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._stdin_broken = False
        self._closing = False
        self._gone: AgentGone | None = None
        self._tasks = TaskOwner(f"wire:{name}")

    @property
    def pid(self) -> int:
        raise NotImplementedError

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


_CANCELLED = RpcError(REQUEST_CANCELLED, "Request cancelled")
