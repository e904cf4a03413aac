"""Production faults the scripted model server can play on turn requests.

A :class:`Fault` is queued with ``ModelServer.inject(*faults)`` (``ServerState.inject``);
each applies to the next ``times`` turn requests, in order (side requests are never
faulted), and ``ModelServer.faulted`` lists what was served with one. An API module's turn
handler hands its finished response to :func:`serve`, which either answers an error instead
(``status``: the dialect's own error JSON; ``html``: a proxy's page) or wraps the dialect's
stream at the event level (``cut``: the connection closes after ``after`` events;
``stall``: the stream stops for ``seconds``; ``malformed``: a line of broken JSON comes
after ``after`` events), so the stream faults work the same for every dialect. A response
that is not streamed counts as two events (its body's halves).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.types import Send

if TYPE_CHECKING:
    from tests.model_server.script import Recorded, ServerState

KINDS = ("status", "html", "cut", "stall", "malformed")
CUT_LOG = "ASGI callable returned without completing response."


@dataclass(frozen=True)
class Fault:
    """One fault; see the module docstring for the kinds."""

    kind: str
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    # None: the API dialect's own error JSON for ``status``
    body: str | None = None
    after: int = 2
    seconds: float = 60
    times: int = 1

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r} (one of {KINDS})")

    def __hash__(self) -> int:  # headers is a dict
        headers = tuple(sorted(self.headers.items()))
        return hash((self.kind, self.status, headers, self.body, self.after, self.seconds))


def rate_limited(retry_after: float = 1, times: int = 1) -> Fault:
    """429 with ``retry-after`` (seconds)."""
    return Fault("status", 429, {"retry-after": f"{retry_after:g}"}, times=times)


def overloaded(status: int = 529, times: int = 1) -> Fault:
    """Anthropic's 529 ``overloaded_error``; 503 for the other APIs."""
    return Fault("status", status, times=times)


def server_error(times: int = 1) -> Fault:
    return Fault("status", 500, times=times)


def bad_key(times: int = 1) -> Fault:
    return Fault("status", 401, times=times)


def html_page(status: int = 502, times: int = 1) -> Fault:
    """A proxy's ``text/html`` error page instead of the API's JSON."""
    return Fault("html", status, times=times)


def cut_stream(after: int = 2, times: int = 1) -> Fault:
    """The connection closes after ``after`` events, the message unfinished."""
    return Fault("cut", after=after, times=times)


def stall_stream(after: int = 2, seconds: float = 60) -> Fault:
    """The stream stops after ``after`` events for ``seconds``, then goes on."""
    return Fault("stall", after=after, seconds=seconds)


def malformed_sse(after: int = 2, times: int = 1) -> Fault:
    """A ``data:`` line of broken JSON after ``after`` events (the stream then goes on)."""
    return Fault("malformed", after=after, times=times)


# -- error bodies per dialect ------------------------------------------------------------------

ANTHROPIC_ERRORS = {
    400: ("invalid_request_error", "Invalid request"),
    401: ("authentication_error", "invalid x-api-key"),
    403: (
        "permission_error",
        "Your API key does not have permission to use the specified resource.",
    ),
    404: ("not_found_error", "The requested resource could not be found."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "This request would exceed the rate limit for your organization."),
    500: ("api_error", "Internal server error"),
    529: ("overloaded_error", "Overloaded"),
}
OPENAI_ERRORS = {
    400: ("invalid_request_error", "invalid_request", "Invalid request."),
    401: (
        "invalid_request_error",
        "invalid_api_key",
        "Incorrect API key provided: sk-scripted. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
    ),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests."),
    500: (
        "server_error",
        None,
        "The server had an error while processing your request. Sorry about that!",
    ),
    503: ("server_error", None, "The server is overloaded or not ready yet."),
}
GEMINI_ERRORS = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    401: ("UNAUTHENTICATED", "API key not valid. Please pass a valid API key."),
    403: ("PERMISSION_DENIED", "The caller does not have permission."),
    404: ("NOT_FOUND", "Requested entity was not found."),
    429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    500: ("INTERNAL", "An internal error has occurred. Please retry or report it."),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
    504: ("DEADLINE_EXCEEDED", "The request timed out. Please try again."),
}


def error_json(api: str, status: int) -> dict[str, Any]:
    """The error body the real API sends for ``status`` (``api`` as in ``Recorded.api``)."""
    phrase = _phrase(status)
    if api == "anthropic":
        kind, message = ANTHROPIC_ERRORS.get(
            status, ("overloaded_error" if status == 503 else "api_error", phrase)
        )
        return {"type": "error", "error": {"type": kind, "message": message}}
    if api == "gemini":
        name, message = GEMINI_ERRORS.get(status, ("UNKNOWN", phrase))
        return {"error": {"code": status, "message": message, "status": name}}
    kind, code, message = OPENAI_ERRORS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None, phrase)
    )
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def html_body(status: int) -> str:
    """An nginx-style error page, as a proxy in front of the API sends it."""
    title = f"{status} {_phrase(status)}"
    return (
        f"<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n"
        f"<center><h1>{title}</h1></center>\r\n<hr><center>nginx</center>\r\n"
        "</body>\r\n</html>\r\n"
    )


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Overloaded" if status == 529 else "Error"


def error_response(api: str, fault: Fault) -> Response:
    if fault.kind == "html":
        body = fault.body if fault.body is not None else html_body(fault.status)
        return Response(body, fault.status, fault.headers, media_type="text/html")
    if fault.body is not None:
        return Response(fault.body, fault.status, fault.headers, media_type="application/json")
    return JSONResponse(error_json(api, fault.status), fault.status, fault.headers)


# -- stream faults -----------------------------------------------------------------------------


class CutResponse(StreamingResponse):
    """A stream whose message never finishes: no closing chunk, so uvicorn closes the
    connection with the response incomplete (what a dropped connection looks like)."""

    async def stream_response(self, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        async for chunk in self.body_iterator:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})


class _QuietCut(logging.Filter):
    """uvicorn logs every cut as an error; a cut here is on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != CUT_LOG


logging.getLogger("uvicorn.error").addFilter(_QuietCut())


def garbage(previous: bytes) -> bytes:
    """A broken event in the style of ``previous`` (same event name and line ends)."""
    sep = b"\r\n\r\n" if previous.endswith(b"\r\n\r\n") else b"\n\n"
    lines = previous.replace(b"\r\n", b"\n").split(b"\n")
    event = next((ln + sep[: len(sep) // 2] for ln in lines if ln.startswith(b"event:")), b"")
    return event + b'data: {"scripted": "malformed' + sep


async def _stall(state: ServerState, seconds: float) -> None:
    state.stalled.set()
    deadline = time.monotonic() + seconds
    # polls: the gate is a threading.Event set from the test's thread
    while time.monotonic() < deadline and not (state.released.is_set() or state.closing.is_set()):
        await asyncio.sleep(0.02)


async def faulty(
    state: ServerState, fault: Fault, events: AsyncIterable[str | bytes | memoryview]
) -> AsyncIterator[bytes]:
    """``events`` with ``fault`` played after ``fault.after`` of them."""
    sent = 0
    previous = b""
    async for item in events:
        event = item.encode() if isinstance(item, str) else bytes(item)
        if sent == fault.after:
            if fault.kind == "cut":
                return
            if fault.kind == "stall":
                await _stall(state, fault.seconds)
            elif fault.kind == "malformed":
                yield garbage(previous)
        yield event
        previous = event
        sent += 1
    if sent <= fault.after and fault.kind == "malformed":
        yield garbage(previous)  # a stream shorter than ``after``: the garbage comes last


async def _halves(body: bytes) -> AsyncIterator[bytes]:
    yield body[: len(body) // 2]
    yield body[len(body) // 2 :]


def serve(state: ServerState, entry: Recorded, response: Response) -> Response:
    """``response``, or what the next queued fault makes of it (turn requests only)."""
    fault = state.take_fault(entry)
    if fault is None:
        return response
    if fault.kind in ("status", "html"):
        return error_response(entry.api, fault)
    events: AsyncIterable[str | bytes | memoryview]
    if isinstance(response, StreamingResponse):
        events, after = response.body_iterator, fault.after
    else:
        events, after = _halves(bytes(response.body)), min(fault.after, 1)
    wrapped = faulty(state, Fault(fault.kind, after=after, seconds=fault.seconds), events)
    headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
    kind = CutResponse if fault.kind == "cut" else StreamingResponse
    return kind(wrapped, response.status_code, headers, media_type=response.media_type)
