"""What an ACP agent asks of the client: permission, fs and terminals, answered via the editor.

Every request gets exactly one answer; what the bridge does not implement is "method not
found" (-32601), and a request naming an unknown session is "invalid params".
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError, PermissionAnswer
from acp_lsp.backends.wire import RpcError
from acp_lsp.editor_tools.permissions import answer_read

if TYPE_CHECKING:
    from acp_lsp.backends.acp import AcpBackend
    from acp_lsp.session import Session

JsonObject = dict[str, Any]
T = TypeVar("T")


def _str(params: JsonObject, key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise RpcError(p.INVALID_PARAMS, f"{key}: expected a string")
    return value


def _opt_int(params: JsonObject, key: str) -> int | None:
    value = params.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise RpcError(p.INVALID_PARAMS, f"{key}: expected a non-negative integer")
    return value


class AgentRequests:
    def __init__(self, backend: AcpBackend) -> None:
        self.backend = backend
        # session id -> editor work an agent request waits on (an applyEdit, a save)
        self._waiting: dict[str, set[asyncio.Future[Any]]] = {}

    def cancel_session(self, session: Session) -> None:
        """The turn was cancelled: agent requests still waiting on the editor get an answer
        now (-32800), so an editor that never answers cannot keep the agent from stopping."""
        for future in self._waiting.pop(session.session_id, set()):
            future.cancel()

    async def _until_cancelled(self, session: Session, what: str, work: Awaitable[T]) -> T:
        future = asyncio.ensure_future(work)
        waiting = self._waiting.setdefault(session.session_id, set())
        waiting.add(future)
        try:
            return await future
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # we are being cancelled ourselves (the agent is gone)
            raise RpcError(p.REQUEST_CANCELLED, f"{what}: the turn was cancelled") from None
        finally:
            waiting.discard(future)
            if not waiting and self._waiting.get(session.session_id) is waiting:
                del self._waiting[session.session_id]

    def _session(self, params: Any) -> tuple[Session, JsonObject]:
        if not isinstance(params, dict):
            raise RpcError(p.INVALID_PARAMS, "params must be an object")
        session = self.backend.session_for(params.get("sessionId"))
        if session is None:
            raise RpcError(p.INVALID_PARAMS, f"unknown sessionId {params.get('sessionId')!r}")
        return session, params

    async def handle(self, method: str, params: Any) -> Any:
        handler = _HANDLERS.get(method)
        if handler is None:
            raise RpcError(-32601, f"method not found: {method}")
        try:
            return await handler(self, params)
        except BackendError as exc:
            raise RpcError(exc.code, exc.message, exc.data) from None

    async def request_permission(self, params: Any) -> JsonObject:
        session, params = self._session(params)
        tool_call = params.get("toolCall")
        options = params.get("options")
        if not isinstance(tool_call, dict) or not isinstance(tool_call.get("toolCallId"), str):
            raise RpcError(p.INVALID_PARAMS, "toolCall.toolCallId: expected a string")
        if not isinstance(options, list) or not all(isinstance(o, dict) for o in options):
            raise RpcError(p.INVALID_PARAMS, "options: expected an array of PermissionOption")
        editor = self.backend.editor
        self.backend._apply(session, {**tool_call, "sessionUpdate": "tool_call_update"})
        state = session.tool_call(tool_call["toolCallId"]) or tool_call
        unasked = self._editor_read(session, state, options)
        answer = await editor.request_permission(session, state, options, unasked)
        return {"outcome": answer.outcome}

    def _editor_read(
        self, session: Session, tool_call: JsonObject, options: list[JsonObject]
    ) -> PermissionAnswer | None:
        """A read-only call of the session's own editor tools is allowed without a prompt."""
        tools = self.backend._editor_tools
        if tools is None or not tools.serves(session):
            return None
        return answer_read(tool_call, options, self.backend.config.mcp_servers)

    async def read_text_file(self, params: Any) -> JsonObject:
        session, params = self._session(params)
        path = _str(params, "path")
        self.backend.editor.note_paths(session, [path])
        try:
            content = await self.backend.editor.read_text_file(
                session, path, _opt_int(params, "line"), _opt_int(params, "limit")
            )
        except BackendError as exc:
            if exc.code == p.RESOURCE_NOT_FOUND and _missing_reads_empty(self.backend.init_result):
                return {"content": ""}
            raise
        return {"content": content}

    async def write_text_file(self, params: Any) -> JsonObject:
        session, params = self._session(params)
        path = _str(params, "path")
        content = _str(params, "content")
        self.backend.editor.note_paths(session, [path])
        write = self.backend.editor.write_text_file(session, path, content)
        await self._until_cancelled(session, f"write of {path}", write)
        return {}

    async def create_terminal(self, params: Any) -> JsonObject:
        session, params = self._session(params)
        command = _str(params, "command")
        args = params.get("args") or []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise RpcError(p.INVALID_PARAMS, "args: expected an array of strings")
        env: dict[str, str] = {}
        for item in params.get("env") or []:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise RpcError(p.INVALID_PARAMS, "env: expected [{name, value}]")
            env[item["name"]] = str(item.get("value", ""))
        cwd = params.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise RpcError(p.INVALID_PARAMS, "cwd: expected a string")
        if self.backend.sandbox is not None:  # a command it has us run is confined like it
            command, args = self.backend.sandbox.confine(command, args)
        terminal_id = await self.backend.editor.create_terminal(
            session, command, args, env, cwd, _opt_int(params, "outputByteLimit")
        )
        return {"terminalId": terminal_id}

    async def terminal_output(self, params: Any) -> JsonObject:
        session, params = self._session(params)
        return self.backend.editor.terminal_output(session, _str(params, "terminalId"))

    async def wait_for_exit(self, params: Any) -> JsonObject:
        session, params = self._session(params)
        return await self.backend.editor.wait_for_terminal_exit(session, _str(params, "terminalId"))

    async def kill_terminal(self, params: Any) -> JsonObject:
        session, params = self._session(params)
        await self.backend.editor.kill_terminal(session, _str(params, "terminalId"))
        return {}

    async def release_terminal(self, params: Any) -> JsonObject:
        session, params = self._session(params)
        await self.backend.editor.release_terminal(session, _str(params, "terminalId"))
        return {}

    async def elicit(self, params: Any) -> JsonObject:
        """An agent's structured question; tied to a session or (during auth) to none."""
        if not isinstance(params, dict) or not isinstance(params.get("message"), str):
            raise RpcError(p.INVALID_PARAMS, "message: expected a string")
        if params.get("mode") not in ("form", "url"):
            return {"action": "decline"}  # a future mode we cannot show
        session = self.backend.session_for(params.get("sessionId"))
        request = {k: v for k, v in params.items() if k != "sessionId"}
        return await self.backend.editor.elicit(session, self.backend.name, request)


_HANDLERS = {
    "session/request_permission": AgentRequests.request_permission,
    "fs/read_text_file": AgentRequests.read_text_file,
    "fs/write_text_file": AgentRequests.write_text_file,
    "terminal/create": AgentRequests.create_terminal,
    "terminal/output": AgentRequests.terminal_output,
    "terminal/wait_for_exit": AgentRequests.wait_for_exit,
    "terminal/kill": AgentRequests.kill_terminal,
    "terminal/release": AgentRequests.release_terminal,
    "elicitation/create": AgentRequests.elicit,
}


def _missing_reads_empty(init_result: JsonObject) -> bool:
    """Gemini CLI (0.61) tells a missing file only from a JavaScript Error, but the ACP SDK it
    bundles rejects with the plain JSON-RPC error object: every write_file of a new file failed
    ("Error checking existing file", gemini-cli#9280). Its read of a missing file answers an
    empty text instead, from which it creates the file."""
    info = init_result.get("agentInfo")
    return isinstance(info, dict) and info.get("name") == "gemini-cli"
