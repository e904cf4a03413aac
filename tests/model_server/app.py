"""The scripted model server: a starlette app mounting every API module, run on a free port.

Each API module (``anthropic``, ``openai_responses``, and when present ``openai_chat`` and
``gemini``) exposes ``routes(state: ServerState) -> list[starlette.routing.Route]``;
:func:`create_app` mounts them all. A request no route takes is recorded (``kind``
"unknown") and answered 404 with a JSON error that names it.

:class:`ModelServer` runs the app with uvicorn on 127.0.0.1 in a background thread, so
sync and async tests use it alike::

    with ModelServer(read_edit_answer(str(ws))) as model:
        ...  # point the agent at model.url
        assert model.turn_requests("anthropic")
"""

from __future__ import annotations

import importlib
import json
import socket
import threading
import time
from types import TracebackType
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from tests.model_server.faults import Fault
from tests.model_server.script import Recorded, Script, ServerState

API_MODULES = ("anthropic", "openai_responses", "openai_chat", "gemini")


async def read_json(request: Request) -> Any:
    """The request body as JSON (None when it is empty or not JSON)."""
    raw = await request.body()
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return raw.decode("utf-8", "replace")


def create_app(state: ServerState) -> Starlette:
    routes: list[BaseRoute] = []
    for name in API_MODULES:
        try:
            module = importlib.import_module(f"tests.model_server.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"tests.model_server.{name}":
                raise
            continue  # written by another helper, not there yet
        routes.extend(module.routes(state))

    async def not_found(request: Request, exc: Exception) -> Response:
        state.record(
            Recorded(
                api="unknown",
                method=request.method,
                path=request.url.path,
                query=request.url.query,
                body=await read_json(request),
                kind="unknown",
            )
        )
        message = f"scripted model server: no route for {request.method} {request.url.path}"
        return JSONResponse({"error": {"type": "not_found", "message": message}}, status_code=404)

    return Starlette(routes=routes, exception_handlers={404: not_found, 405: not_found})


class ModelServer:
    """uvicorn serving :func:`create_app` on a pre-bound free port, in its own thread."""

    def __init__(self, script: Script | None = None, port: int = 0) -> None:
        self.state = ServerState()
        if script is not None:
            self.state.script = script
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets that say so
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", port))
        self.port: int = self._sock.getsockname()[1]
        # An idle keep-alive connection is never closed by the server while a test runs: at
        # uvicorn's default 5 s, an agent reusing its pooled connection just as the server
        # closed it got ECONNRESET (Claude's soak, once: it retries nothing here). The agents'
        # own HTTP clients close idle connections sooner, as with the real APIs.
        config = uvicorn.Config(
            create_app(self.state),
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=1,
            timeout_keep_alive=600,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no path: each agent appends its own, e.g. ``/v1``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def script(self) -> Script:
        return self.state.script

    @script.setter
    def script(self, script: Script) -> None:
        self.state.script = script

    @property
    def requests(self) -> list[Recorded]:
        return self.state.requests

    def turn_requests(self, api: str | None = None) -> list[Recorded]:
        """Requests that were part of a turn (not side requests, not unknown routes)."""
        return self.state.turn_requests(api)

    def unknown_requests(self) -> list[Recorded]:
        return [r for r in self.state.requests if r.kind == "unknown"]

    def inject(self, *faults: Fault) -> None:
        """Play ``faults`` (tests/model_server/faults.py) on the next turn requests, in
        order, ``times`` each; side requests are never faulted."""
        self.state.inject(*faults)

    def clear_faults(self) -> None:
        """Drop the faults not yet played (a permanent fault, once the test has seen enough)."""
        with self.state.lock:
            self.state.faults.clear()

    @property
    def faulted(self) -> list[tuple[Fault, Recorded]]:
        """(fault, request) of every request served with a fault, in order."""
        with self.state.lock:
            return list(self.state.faulted)

    def release(self) -> None:
        """Let a stalled stream (``Say(stall_after=…)``) go on."""
        self.state.release()

    def wait_stalled(self, timeout: float = 60) -> bool:
        """Block until a stream stalls (use ``asyncio.to_thread`` from async code)."""
        return self.state.stalled.wait(timeout)

    def start(self, timeout: float = 10.0) -> ModelServer:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("scripted model server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.state.closing.set()  # a stalled stream ends
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self._sock.close()

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
