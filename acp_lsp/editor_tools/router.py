"""Who answers an editor tool call: the editor (``acp/editorTool``), the bridge, or nobody.

Each session gets a random token; the MCP URL carries it, so a call reaches exactly that
session's workspace. Paths are confined like the agent's fs requests (acp_lsp/sandbox.py).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import secrets
import socket
import uuid
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path, to_fs_path

from acp_lsp import protocol as p
from acp_lsp.backends import acp_caps
from acp_lsp.editor_tools import convert
from acp_lsp.editor_tools.tools import (
    BRIDGE_FALLBACK,
    BRIDGE_ONLY,
    CONFINED,
    NO_TIMEOUT,
    TOOLS,
    ToolError,
)
from acp_lsp.sandbox import SandboxError

if TYPE_CHECKING:
    from acp_lsp.config import AgentConfig
    from acp_lsp.editor_tools.http import McpHttp
    from acp_lsp.server import AcpLanguageServer
    from acp_lsp.session import Session

JsonObject = dict[str, Any]

SERVER_NAME = "editor"
START_WAIT_S = 60.0
"""The longest a session waits for the endpoint to start (then it is offered all the same)."""
_READ_ONLY_MODES = ("plan", "read-only", "readonly")


class EditorTools:
    """Tokens -> sessions, and the answer to each tool call."""

    def __init__(self, server: AcpLanguageServer) -> None:
        self.server = server
        self._sessions: dict[str, Session | None] = {}  # token -> session (None: not yet made)
        self._http: McpHttp | None = None
        self._starting: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None
        # (uri, range) of the last code action request: a plain editor's selection
        self.last_selection: tuple[str, types.Range] | None = None

    # -- settings and tokens ---------------------------------------------------------------
    def enabled_for(self, config: AgentConfig) -> bool:
        if config.editor_tools is not None:
            return config.editor_tools
        return self.server.settings.editor_tools.enabled

    def taken_by(self, config: AgentConfig, init_result: JsonObject) -> bool:
        """Whether an agent gets the tools: enabled for it, and its ``initialize`` declares
        HTTP MCP servers (the endpoint's transport)."""
        offered = acp_caps.agent_caps(init_result).get("mcpCapabilities")
        http = isinstance(offered, dict) and offered.get("http") is True
        return http and self.enabled_for(config)

    def warm(self) -> None:
        """Start the endpoint in the background, once an agent that takes HTTP MCP servers
        has answered ``initialize``: the MCP SDK takes about a second of CPU and 40 MB to
        import, which a bridge without such agents never pays."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # outside the server's loop (tests)
            return
        if self._http is None and (self._starting is None or self._starting.done()):
            self._starting = self.server.tasks.spawn(self._start(), name="editor-tools-start")

    async def _start(self) -> None:
        # the event loop keeps serving the editor while the SDK imports
        await asyncio.to_thread(importlib.import_module, "acp_lsp.editor_tools.http")
        from acp_lsp.editor_tools.http import McpHttp

        http = McpHttp(self.call, self.known)
        try:
            await http.start(self.server.tasks, self._listening())
        except BaseException:
            self._close()  # agents given its port are refused, not left waiting
            raise
        self._http = http

    def _listening(self) -> socket.socket:
        """The endpoint's socket, listening from the first session on: an agent that
        connects before the server is up (its start failed or passed ``START_WAIT_S``) waits
        in the backlog."""
        if self._socket is None:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            # uvicorn writes a response's head and body separately: without this, Nagle
            # holds the body until the client's delayed ACK (~40 ms a call); accepted
            # sockets inherit it
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.bind(("127.0.0.1", 0))
            sock.listen(128)
            self._socket = sock
        return self._socket

    def _close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    async def reserve(self) -> tuple[str, JsonObject]:
        """A fresh token and the ACP McpServer entry that reaches it, once the endpoint is up
        (started when the agent answered ``initialize``): agents give a remote MCP server a
        few seconds and then go on without it (Qwen Code 5 s), which a loaded machine's
        import of the MCP SDK passed (its model was never told of the editor's tools)."""
        port = self._listening().getsockname()[1]
        self.warm()
        if self._http is None and self._starting is not None:
            await asyncio.wait([self._starting], timeout=START_WAIT_S)
        token = secrets.token_urlsafe(24)
        self._sessions[token] = None
        url = f"http://127.0.0.1:{port}/mcp/{token}"
        return token, {"type": "http", "name": SERVER_NAME, "url": url, "headers": []}

    def bind(self, token: str, session: Session) -> None:
        self._sessions[token] = session

    def release(self, token: str) -> None:
        self._sessions.pop(token, None)

    def release_session(self, session: Session) -> None:
        for token in [t for t, s in self._sessions.items() if s is session]:
            del self._sessions[token]

    def known(self, token: str) -> bool:
        return token in self._sessions

    def serves(self, session: Session) -> bool:
        """Whether the session's agent was given the editor's tools."""
        return any(s is session for s in self._sessions.values())

    # -- calls -----------------------------------------------------------------------------
    async def call(self, token: str, tool: str, args: JsonObject) -> Any:
        """The tool's answer in MCP shape, or ToolError."""
        if token not in self._sessions:
            raise ToolError("this editor tools URL is no longer valid (the session ended)")
        session = self._sessions[token]
        if session is None:
            raise ToolError("the session is still starting; try again")
        if tool not in TOOLS:
            raise ToolError(f"unknown tool {tool!r} (tools: {', '.join(TOOLS)})")
        if tool == "openDiff" and _read_only(session):
            raise ToolError("openDiff is not allowed in the session's current mode (no edits)")

        def resolve(path: str) -> str:
            return self._resolve(session, path)

        try:
            if tool in BRIDGE_ONLY:
                path = resolve(convert._str(args, "path"))
                if not os.path.isfile(path):
                    raise ToolError(f"openFile: {path} is not a file")
                return await self._open_file(path, args)
            declared = self.server.protocol.client_acp.get(p.CLIENT_CAP_EDITOR_TOOLS)
            if isinstance(declared, list) and tool in declared:
                lsp_args = convert.to_lsp(tool, args, resolve)
                if tool == "diagnostics":
                    lsp_args.update(self._diagnostics_scope(session, "uri" in lsp_args))
                result = await self._ask(session, tool, lsp_args)
                return self._confine(session, tool, convert.from_lsp(tool, result))
            if tool in BRIDGE_FALLBACK:
                return self._confine(session, tool, self._bridge_answer(tool))
        except convert.ToolInputError as exc:
            raise ToolError(f"{tool}: {exc}") from None
        name = self.server.protocol.client_name or "an editor without a name"
        raise ToolError(
            f"{tool} is not available in this editor ({name}): "
            "its acp-lsp front end does not answer it"
        )

    def _diagnostics_scope(self, session: Session, one_file: bool) -> JsonObject:
        """What the editor may leave out of a diagnostics answer: beyond the limit (the worst
        first) and outside the session's folders. Reading and converting a workspace's 10,000
        diagnostics cost the bridge 128 ms; the cut answer is 20 times smaller. The
        answer is confined and capped here all the same."""
        scope: JsonObject = {"limit": convert.MAX_DIAGNOSTICS}
        sandbox = self.server.editor.sandbox(session)
        if not sandbox.allow_outside and not one_file:
            scope["folders"] = list(dict.fromkeys([*sandbox.given, *sandbox.roots]))
        return scope

    def _resolve(self, session: Session, path: str) -> str:
        if not path:
            raise convert.ToolInputError("path is empty")
        if not os.path.isabs(path) and not path.startswith("~"):
            path = os.path.join(session.cwd, path)
        try:
            return self.server.editor.sandbox(session).resolve(path)
        except SandboxError as exc:
            raise ToolError(str(exc)) from None

    def _confine(self, session: Session, tool: str, answer: JsonObject) -> JsonObject:
        """Leave out files outside the session's folders, as path arguments are refused: an
        editor answers for every folder and buffer it has."""
        if tool not in CONFINED:
            return answer
        sandbox = self.server.editor.sandbox(session)
        if sandbox.allow_outside:
            if tool == "diagnostics":
                return convert.cap_diagnostics(answer["files"], answer["total"])
            return answer
        if tool == "selection":
            sel = answer["selection"]
            return answer if sel and sandbox.inside({sel["path"]}) else {"selection": None}
        key = CONFINED[tool]
        inside = sandbox.inside({item["path"] for item in answer[key]})
        kept = [item for item in answer[key] if item["path"] in inside]
        if tool == "diagnostics":
            left_out = sum(len(f["diagnostics"]) for f in answer[key] if f["path"] not in inside)
            return convert.cap_diagnostics(kept, answer["total"] - left_out)
        return {key: kept}

    async def _ask(self, session: Session, tool: str, arguments: JsonObject) -> Any:
        msg_id = f"editorTool-{uuid.uuid4().hex[:12]}"
        params = {"sessionId": session.session_id, "tool": tool, "arguments": arguments}
        timeout = None if tool in NO_TIMEOUT else self.server.settings.editor_tools.timeout_s
        request = self.server.protocol.send_request_async(p.ACP_EDITOR_TOOL, params, msg_id=msg_id)
        try:
            return await asyncio.wait_for(request, timeout)
        except TimeoutError:
            self._withdraw(msg_id)
            raise ToolError(f"the editor did not answer {tool} within {timeout:g}s") from None
        except asyncio.CancelledError:
            self._withdraw(msg_id)  # the agent gave up on the call: so does the editor
            raise
        except JsonRpcException as exc:
            raise ToolError(f"the editor could not answer {tool}: {exc.message}") from None

    def _withdraw(self, msg_id: str) -> None:
        # raw: pygls would try to unstructure a plain dict as CancelParams and fail
        self.server.protocol.send_notification_raw(types.CANCEL_REQUEST, {"id": msg_id})

    # -- what the bridge knows itself --------------------------------------------------------
    def _bridge_answer(self, tool: str) -> Any:
        docs = self.server.workspace.text_documents
        if tool == "selection":
            if self.last_selection is None or self.last_selection[0] not in docs:
                return {"selection": None}
            uri, rng = self.last_selection
            doc = docs[uri]
            start, end = doc.offset_at_position(rng.start), doc.offset_at_position(rng.end)
            sel = convert.selection(
                {
                    "uri": uri,
                    "range": {
                        "start": {"line": rng.start.line, "character": rng.start.character},
                        "end": {"line": rng.end.line, "character": rng.end.character},
                    },
                    "text": doc.source[start:end],
                }
            )
            return {"selection": sel}
        active = self.last_selection[0] if self.last_selection else None
        editors = []
        for uri, doc in docs.items():
            path = to_fs_path(uri) if uri.startswith("file:") else None
            base = self.server.editor.files.bases.base(path) if path else None
            editors.append(
                {
                    "uri": uri,
                    "languageId": doc.language_id or "",
                    "dirty": base is not None and base != doc.source,
                    "active": uri == active,
                }
            )
        return convert.from_lsp("openEditors", {"editors": editors})

    async def _open_file(self, path: str, args: JsonObject) -> JsonObject:
        if not get_capability(
            self.server.client_capabilities, "window.show_document.support", False
        ):
            raise ToolError("this editor cannot be asked to show a file (no window/showDocument)")
        uri = from_fs_path(path)
        if uri is None:
            raise ToolError(f"path {path} cannot be named as a file URI")
        params = types.ShowDocumentParams(uri=uri, take_focus=False)
        if args.get("line") is not None:
            line = convert._int(args, "line") - 1
            end = convert._int(args, "endLine") - 1 if args.get("endLine") is not None else line
            params.selection = types.Range(
                start=types.Position(line=line, character=0),
                end=types.Position(line=max(end, line), character=0),
            )
        timeout = self.server.settings.editor_tools.timeout_s
        try:
            result = await asyncio.wait_for(self.server.window_show_document_async(params), timeout)
        except TimeoutError:
            raise ToolError(f"the editor did not answer openFile within {timeout:g}s") from None
        except JsonRpcException as exc:
            raise ToolError(f"the editor could not show {path}: {exc.message}") from None
        return {"shown": bool(getattr(result, "success", False))}


def _read_only(session: Session) -> bool:
    modes = session.modes or {}
    current = modes.get("currentModeId")
    return isinstance(current, str) and any(m in current.lower() for m in _READ_ONLY_MODES)
