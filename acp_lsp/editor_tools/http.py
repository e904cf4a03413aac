"""The MCP server: streamable HTTP on 127.0.0.1, one port for every session, served by
uvicorn inside the bridge's event loop (an owned task).

``/mcp/<token>`` is the only route; the token picks the session (acp_lsp.editor_tools.router).
Stateless mode: each HTTP request is served on its own, so the token of the request at hand
(a context variable the per-request task inherits) is the one a tool call runs under.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import Any

import mcp_types as mt
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Message, Receive, Scope, Send

from acp_lsp import __version__
from acp_lsp.editor_tools.tools import TOOLS, ToolError
from acp_lsp.tasks import TaskOwner

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]
Call = Callable[[str, str, JsonObject], Awaitable[Any]]
Known = Callable[[str], bool]

_token: ContextVar[str] = ContextVar("editor_tools_token")
# set when the HTTP client of the request at hand hangs up (an agent that gave up on a call)
_gone: ContextVar[asyncio.Event] = ContextVar("editor_tools_gone")
_PREFIX = "/mcp/"


class _QuietServer(uvicorn.Server):
    """uvicorn without its signal handlers: the bridge owns SIGTERM/SIGINT."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _result(value: JsonObject) -> mt.CallToolResult:
    # compact: a workspace's 10,000 diagnostics are ~200 KB smaller (what the model reads)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    # every answer is an object, sent as text and the same structuredContent (MCP
    # 2025-06-18): Gemini CLI copies parsed text there and refuses a list or null
    return mt.CallToolResult(content=[mt.TextContent(text=text)], structured_content=value)


def _error(message: str) -> mt.CallToolResult:
    return mt.CallToolResult(content=[mt.TextContent(text=message)], is_error=True)


class McpHttp:
    """One MCP endpoint for all sessions of this bridge."""

    def __init__(self, call: Call, known: Known) -> None:
        self._call = call
        self._known = known
        self._task: asyncio.Task[None] | None = None

    def _mcp_server(self) -> Server[Any]:
        async def list_tools(_ctx: Any, _params: Any) -> mt.ListToolsResult:
            return mt.ListToolsResult(
                tools=[
                    mt.Tool(name=name, description=text, input_schema=schema)
                    for name, (text, schema) in TOOLS.items()
                ]
            )

        async def call_tool(_ctx: Any, params: mt.CallToolRequestParams) -> mt.CallToolResult:
            args = dict(params.arguments or {})
            call = asyncio.ensure_future(self._call(_token.get(), params.name, args))
            gone = asyncio.ensure_future(_gone.get().wait())
            try:
                await asyncio.wait({call, gone}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                gone.cancel()
                if not call.done():  # the agent hung up: withdraw what the editor was asked
                    call.cancel()
                    await asyncio.wait({call})
            if call.cancelled():
                return _error(f"{params.name}: the client went away")
            try:
                value = call.result()
            except ToolError as exc:
                return _error(str(exc))
            except Exception as exc:  # a bug must not take the endpoint down
                log.exception("editor tool %s failed", params.name)
                return _error(f"{params.name} failed in acp-lsp: {exc}")
            return _result(value)

        return Server(
            "acp-lsp editor",
            version=__version__,
            instructions="The user's editor: diagnostics, navigation, open files, selection.",
            on_list_tools=list_tools,
            on_call_tool=call_tool,
        )

    async def start(self, tasks: TaskOwner, sock: socket.socket) -> None:
        """Serve on ``sock`` (bound and listening already) as an owned task."""
        manager = StreamableHTTPSessionManager(
            app=self._mcp_server(),
            stateless=True,
            json_response=True,
            security_settings=TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=["127.0.0.1:*", "localhost:*"],
                allowed_origins=["http://127.0.0.1:*", "http://localhost:*"],
            ),
        )

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                return
            path: str = scope.get("path", "")
            token = path[len(_PREFIX) :].rstrip("/") if path.startswith(_PREFIX) else ""
            if not token or "/" in token or not self._known(token):
                await _not_found(send)
                return
            _token.set(token)
            gone = asyncio.Event()
            _gone.set(gone)
            inbox: asyncio.Queue[Message] = asyncio.Queue()

            async def listen() -> None:
                # the request body, then (only if it comes first) the client's hang-up
                while True:
                    message = await receive()
                    inbox.put_nowait(message)
                    if message["type"] == "http.disconnect":
                        gone.set()
                        return

            listener = asyncio.ensure_future(listen())
            try:
                await manager.handle_request(scope, inbox.get, send)
            finally:
                listener.cancel()

        config = uvicorn.Config(
            app, lifespan="off", log_config=None, access_log=False, log_level="warning"
        )
        server = _QuietServer(config)

        async def serve() -> None:
            try:
                async with manager.run():
                    await server.serve(sockets=[sock])
            finally:
                sock.close()

        self._task = tasks.spawn(serve(), name="editor-tools-mcp")
        while not server.started and not self._task.done():
            await asyncio.sleep(0.01)
        if self._task.done():
            self._task.result()  # raises what stopped it
            raise RuntimeError("the editor tools MCP server stopped at start")


async def _not_found(send: Send) -> None:
    body = b'{"error": "unknown MCP endpoint"}'
    await send(
        {
            "type": "http.response.start",
            "status": 404,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})
