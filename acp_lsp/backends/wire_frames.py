"""The pieces of the ACP wire that hold no process: errors, frames, line splitting.

Split from acp_lsp.backends.wire, which re-exports the public names.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import signal
from collections.abc import Awaitable
from typing import Any

from pydantic_core import from_json as _from_json

log = logging.getLogger(__name__)

INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
CANCEL_REQUEST = "$/cancel_request"


class RpcError(Exception):
    """A JSON-RPC error: raised for error responses, and by request handlers to answer one."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_json(cls, error: Any) -> RpcError:
        if isinstance(error, dict):
            code, message = error.get("code"), error.get("message")
            if type(code) is int and isinstance(message, str):
                return cls(code, message, error.get("data"))
        return cls(INTERNAL_ERROR, f"malformed error response: {error!r:.200}")


class AgentGone(Exception):
    """The agent process exited or its pipes closed (or it could not be started)."""

    def __init__(
        self, message: str, *, stderr_tail: str = "", returncode: int | None = None
    ) -> None:
        full = f"{message}\n--- stderr (tail) ---\n{stderr_tail}" if stderr_tail else message
        super().__init__(full)
        self.message = message
        self.stderr_tail = stderr_tail
        self.returncode = returncode


def describe_exit(returncode: int | None) -> str:
    """'exit code 3', 'killed by SIGKILL', or 'still running'."""
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


def dumps_frame(msg: dict[str, Any]) -> bytes:
    return (json.dumps(msg, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def discard_awaitable(awaitable: Awaitable[Any] | None) -> None:
    """Dispose of a handler awaitable that will never be awaited (no 'never awaited' noise)."""
    if inspect.iscoroutine(awaitable):
        awaitable.close()
    elif isinstance(awaitable, asyncio.Future):
        awaitable.cancel()


NOT_PARSED: Any = object()


def parse_frame(line: bytes) -> Any:
    """``json.loads(line)`` for a line that is one JSON value, else ``NOT_PARSED``.

    The hot path: parsing was a third of the bridge's time per streamed chunk. pydantic's own
    JSON parser (pydantic-core, installed with pydantic) is ~30% cheaper than json's scanner
    and shares the few keys every frame repeats. Where the two differ it refuses what json
    takes (lone surrogates in escapes, nesting deeper than 200); that, and anything invalid,
    is left to the caller's json.loads, which parses or reports it as before.
    """
    try:
        return _from_json(line, cache_strings="keys")
    except ValueError:
        return NOT_PARSED


def is_request_id(value: object) -> bool:
    return value is None or (type(value) is int) or isinstance(value, str)


class LineBuffer:
    """Splits a byte stream on b"\\n"; lines of any size; linear in the bytes fed."""

    def __init__(self) -> None:
        self._partial: list[bytes] = []

    def feed(self, chunk: bytes) -> list[bytes]:
        lines = chunk.split(b"\n")
        if len(lines) == 1:
            if chunk:
                self._partial.append(chunk)
            return []
        if self._partial:
            self._partial.append(lines[0])
            lines[0] = b"".join(self._partial)
            self._partial.clear()
        rest = lines.pop()
        if rest:
            self._partial.append(rest)
        return lines

    def flush(self) -> bytes:
        """The unterminated remainder (a last line without its newline)."""
        rest = b"".join(self._partial)
        self._partial.clear()
        return rest
