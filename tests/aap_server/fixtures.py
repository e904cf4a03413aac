"""Run the AAP test server on 127.0.0.1 (a free port) in a background thread, for pytest.

Use the ``aap_server`` fixture (load this module as a plugin in a test module or conftest)::

    pytest_plugins = ["tests.aap_server.fixtures"]

    async def test_x(aap_server: AapServer) -> None:
        aap_server.state.api_key = "k"          # change settings
        ...                                     # talk to aap_server.url
        assert aap_server.state.turn_bodies(sid)  # inspect what the client sent

One server runs per test process (started on first use); every test gets fresh state.
"""

from __future__ import annotations

import atexit
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn

from tests.aap_server.app import BASE_PATH, create_app
from tests.aap_server.state import AapServer, ServerState


class ServerThread:
    """uvicorn serving the test app on a pre-bound socket, in its own thread and event loop."""

    def __init__(self, state: ServerState, port: int = 0) -> None:
        self.state = state
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets that say so, and
        # without it Nagle + delayed ACK add ~40 ms to every keep-alive request.
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", port))
        self.port: int = self._sock.getsockname()[1]
        config = uvicorn.Config(
            create_app(state),
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{BASE_PATH}"

    def start(self, timeout: float = 10.0) -> None:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("AAP test server did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=5)
        self._sock.close()


_shared: ServerThread | None = None


def shared_server() -> ServerThread:
    """The process-wide test server, started on first use and stopped at exit."""
    global _shared
    if _shared is None:
        _shared = ServerThread(ServerState())
        _shared.start()
        atexit.register(_shared.stop)
    return _shared


@pytest.fixture
def aap_server() -> Iterator[AapServer]:
    server = shared_server()
    server.state.reset()
    yield AapServer(url=server.url, state=server.state)
    server.state.reset()
