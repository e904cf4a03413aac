"""A bare LSP client over the server's stdio pipes, for tests where the editor vanishes.

pytest-lsp's client owns the server process and its shutdown; here the test does: it can
close the server's stdin mid-turn, send ``exit`` without ``shutdown``, or signal the server,
and then check by pid that nothing the server started is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import sys
from pathlib import Path
from typing import Any

JsonObject = dict[str, Any]


class RawLspClient:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.notifications: list[tuple[str, Any]] = []
        self.server_requests: list[JsonObject] = []
        self._pending: dict[int, asyncio.Future[JsonObject]] = {}
        self._ids = itertools.count(1)
        self._reader = asyncio.ensure_future(self._read())
        self._changed = asyncio.Event()

    @classmethod
    async def start(cls, env: dict[str, str], log_file: Path) -> RawLspClient:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "acp_lsp",
            "-v",
            "--log-file",
            str(log_file),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
        )
        return cls(proc)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send(self, message: JsonObject) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: Any = None) -> asyncio.Future[JsonObject]:
        msg_id = next(self._ids)
        future: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        self.send({"id": msg_id, "method": method, "params": params})
        return future

    async def call(self, method: str, params: Any = None, timeout: float = 30) -> Any:
        response = await asyncio.wait_for(self.request(method, params), timeout)
        assert "error" not in response, response
        return response.get("result")

    async def initialize(self, root: Path, options: JsonObject) -> None:
        await self.call(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": {"experimental": {"acp": {"requestPermission": True}}},
                "initializationOptions": options,
            },
        )
        self.notify("initialized", {})

    async def wait_for(self, predicate: Any, timeout: float = 15) -> None:
        async def loop() -> None:
            while not predicate():
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), 0.1)

        await asyncio.wait_for(loop(), timeout)

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    async def wait_exit(self, timeout: float = 15) -> int:
        return await asyncio.wait_for(self.proc.wait(), timeout)

    async def aclose(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        self._reader.cancel()

    async def _read(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        while True:
            length = 0
            while True:
                line = await stdout.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            message = json.loads(await stdout.readexactly(length))
            self._dispatch(message)
            self._changed.set()

    def _dispatch(self, message: JsonObject) -> None:
        if "method" not in message:
            future = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
            if future is not None and not future.done():
                future.set_result(message)
        elif "id" in message:
            self.server_requests.append(message)  # left unanswered: the editor is busy
        else:
            self.notifications.append((message["method"], message.get("params")))
