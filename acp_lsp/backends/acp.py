"""ACP backend: one agent process per configured agent, shared by its sessions.

The bridge owns the wire (acp_lsp.backends.wire): payloads stay raw JSON, updates are applied
in arrival order, and everything the agent may ask (permission, fs, terminals) is answered
through the editor port. A dead agent fails its live sessions; ``restart`` starts it again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from acp_lsp import protocol as p
from acp_lsp.backends import acp_caps
from acp_lsp.backends.acp_agent import AcpAgent
from acp_lsp.backends.acp_requests import AgentRequests
from acp_lsp.backends.acp_start import ACP_PROTOCOL_VERSION, CLIENT_CAPABILITIES
from acp_lsp.backends.base import RECOVERY, BackendError, EditorPort
from acp_lsp.config import AgentConfig
from acp_lsp.secret_store import SecretStore
from acp_lsp.session import Session, named_paths

if TYPE_CHECKING:
    from acp_lsp.editor_tools.router import EditorTools

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]

__all__ = ["ACP_PROTOCOL_VERSION", "CLIENT_CAPABILITIES", "AcpBackend"]


class AcpBackend(AcpAgent):
    """An ACP agent's sessions: the agent's ids mapped to editor sessions, and their requests."""

    def __init__(
        self,
        name: str,
        config: AgentConfig,
        editor: EditorPort,
        *,
        environ: Mapping[str, str],
        secrets: SecretStore,
        id_taken: Callable[..., bool] = lambda _sid, ever=False: False,
        on_send: Callable[[JsonObject], None] | None = None,
        workspace_folders: Callable[[], Sequence[str]] = tuple,
        editor_tools: EditorTools | None = None,
    ) -> None:
        super().__init__(
            name,
            config,
            editor,
            environ=environ,
            secrets=secrets,
            on_send=on_send,
            workspace_folders=workspace_folders,
        )
        self._id_taken = id_taken
        # agent session id -> Session (the editor-facing id may differ on a collision)
        self._sessions: dict[str, Session] = {}
        self._agent_ids: dict[str, str] = {}
        self._early: dict[str, list[JsonObject]] = {}
        # editor session id -> (agent session id, Session) of sessions a crash failed: a
        # session/resume (no replay) continues from what the bridge already knew
        self._failed: dict[str, tuple[str, Session]] = {}
        self._requests = AgentRequests(self)
        self._editor_tools = editor_tools

    async def _on_request(self, method: str, params: Any) -> Any:
        return await self._requests.handle(method, params)

    def _sessions_failed(self, message: str, stderr: str, tool_status: str) -> None:
        for session in list(self._sessions.values()):
            if session.status in ("closed", "failed"):
                continue
            self.editor.cancel_permissions(session)
            # the turn's unfinished calls end before the status: nothing follows "failed"
            self.editor.publish(session, session.finish_turn(tool_status))
            self.editor.set_status(
                session,
                "failed",
                error={
                    "code": p.AGENT_UNAVAILABLE,
                    "message": message + RECOVERY,
                    "stderr": stderr,
                },
            )
        for agent_sid, session in self._sessions.items():
            self._failed[session.session_id] = (agent_sid, session)
        self._sessions.clear()
        self._agent_ids.clear()

    # -- sessions --------------------------------------------------------------------------
    def session_for(self, agent_session_id: Any) -> Session | None:
        if not isinstance(agent_session_id, str):
            return None
        return self._sessions.get(agent_session_id)

    def agent_id(self, session: Session) -> str:
        return self._agent_ids.get(session.session_id, session.session_id)

    def agent_session_id(self, session: Session) -> str:
        return self.agent_id(session)

    def rekey(self, session: Session, session_id: str) -> None:
        agent_sid = self._agent_ids.pop(session.session_id, session.session_id)
        self._agent_ids[session_id] = agent_sid

    def _adopt(self, agent_sid: str, cwd: str, dirs: list[str], *, new: bool = True) -> Session:
        """Track an agent session under an editor-facing id: the agent's own unless another
        session has it (or, for a new or forked session, ever had it)."""
        editor_sid = agent_sid
        suffix = 1
        while self._id_taken(editor_sid, ever=new) or editor_sid in self._agent_ids:
            # another agent (or an earlier process of this one) uses the id already
            editor_sid = f"{self.name}/{agent_sid}" + (f"#{suffix}" if suffix > 1 else "")
            suffix += 1
        session = Session(editor_sid, self.name, cwd, dirs)
        session.prompt_capabilities = self._prompt_caps()
        self._sessions[agent_sid] = session
        self._agent_ids[editor_sid] = agent_sid
        self.editor.hold(session)
        for update in self._early.pop(agent_sid, []):
            self._apply(session, update)
        return session

    def _mcp_servers(self) -> list[JsonObject]:
        return acp_caps.mcp_servers(
            self.init_result,
            self.config,
            lambda m: self.editor.log("warning", f"[{self.name}] {m}"),
        )

    def _offers_mcp(self) -> bool:
        tools = self._editor_tools
        return super()._offers_mcp() or (tools is not None and tools.enabled_for(self.config))

    def _initialized(self) -> None:
        tools = self._editor_tools
        if tools is not None and tools.taken_by(self.config, self.init_result):
            tools.warm()  # ~1 s of imports, while the first session starts

    async def _editor_mcp(self, params: JsonObject) -> str | None:
        """Add the editor's tools (an MCP server per session) where enabled and the agent
        takes HTTP MCP servers; the token to bind once the session exists."""
        tools = self._editor_tools
        if tools is None or not tools.taken_by(self.config, self.init_result):
            return None
        token, server = await tools.reserve()
        params["mcpServers"] = [*params["mcpServers"], server]
        return token

    def _dirs_param(self, params: JsonObject, dirs: list[str]) -> None:
        if dirs and self._has_session_cap("additionalDirectories"):
            params["additionalDirectories"] = dirs

    async def new_session(self, cwd: str, additional_directories: list[str]) -> Session:
        await self._admit(cwd, additional_directories, busy=bool(self._sessions))
        await self._process()  # the agent's capabilities decide which MCP servers go along
        params: JsonObject = {"cwd": cwd, "mcpServers": self._mcp_servers()}
        self._dirs_param(params, additional_directories)
        token = await self._editor_mcp(params)
        try:
            result = await self.call("session/new", params)
            if not isinstance(result, dict) or not isinstance(result.get("sessionId"), str):
                raise BackendError(p.AGENT_ERROR, f"agent {self.name!r}: session/new: bad result")
        except BaseException:
            self._release_editor(token)
            raise
        session = self._adopt(result["sessionId"], cwd, additional_directories)
        self._bind_editor(token, session)
        self._apply_state(session, result)
        return session

    def _bind_editor(self, token: str | None, session: Session) -> None:
        if token is not None and self._editor_tools is not None:
            self._editor_tools.release_session(session)  # a reload replaces the old URL
            self._editor_tools.bind(token, session)

    def _release_editor(self, token: str | None) -> None:
        if token is not None and self._editor_tools is not None:
            self._editor_tools.release(token)

    def _apply_state(self, session: Session, result: Any) -> None:
        if not isinstance(result, dict):
            return
        modes = result.get("modes")
        if isinstance(modes, dict):
            session.set_modes(modes)
        options = result.get("configOptions")
        if isinstance(options, list):
            session.set_config_options(options)

    async def load_session(self, session_id: str, cwd: str) -> Session:
        dirs_known = self._failed.get(session_id)
        await self._admit(
            cwd, dirs_known[1].additional_directories if dirs_known else [], bool(self._sessions)
        )
        await self._process()  # one request brings a failed session back: start the agent
        known = self._failed.pop(session_id, None)
        agent_sid = known[0] if known else self._agent_ids.get(session_id, session_id)
        params: JsonObject = {"sessionId": agent_sid, "cwd": cwd, "mcpServers": self._mcp_servers()}
        dirs = list(known[1].additional_directories) if known else []
        chosen = known[1].modes if known else None  # before the agent's answer replaces it
        self._dirs_param(params, dirs)
        can_load = self._caps().get("loadSession") is True
        can_resume = self._has_session_cap("resume")
        # A session this bridge still holds (its agent died) is resumed where the agent can:
        # the bridge's copy is exactly what the user saw, the cut-off turn's text and finished
        # tool calls included, which a replay of the agent's own record may lack.
        if can_resume and (known is not None or not can_load):
            method = "session/resume"
        elif can_load:
            method = "session/load"
        else:
            raise BackendError(
                p.NOT_SUPPORTED, f"agent {self.name!r} can neither load nor resume sessions"
            )
        stale = self._sessions.pop(agent_sid, None)
        if stale is not None:
            self._agent_ids.pop(stale.session_id, None)
        if method == "session/resume" and known is not None:
            session = self._readopt(agent_sid, known[1])  # nothing is replayed: keep it
        else:
            session = self._adopt(agent_sid, cwd, dirs, new=False)
        token = await self._editor_mcp(params)
        try:
            result = await self.call(method, params)
        except BackendError:
            self._release_editor(token)
            self._sessions.pop(agent_sid, None)
            self._agent_ids.pop(session.session_id, None)
            if known is not None:
                self._failed[session_id] = known
            raise
        self._bind_editor(token, session)
        if method == "session/load":
            # a call the agent's record leaves open never finished: it ended with its process
            self.editor.publish(session, session.finish_turn("failed"))
        session.status = "idle"
        self._apply_state(session, result)
        if known is not None:
            session.resumed_from = "agent"
            await self.keep_mode(session, chosen)
        return session

    def _readopt(self, agent_sid: str, session: Session) -> Session:
        self._sessions[agent_sid] = session
        self._agent_ids[session.session_id] = agent_sid
        self.editor.hold(session)
        return session

    async def list_sessions(self, cwd: str | None) -> list[JsonObject]:
        if not self._has_session_cap("list"):
            await self._process()
            if not self._has_session_cap("list"):
                raise BackendError(p.NOT_SUPPORTED, f"agent {self.name!r} cannot list sessions")
        out: list[JsonObject] = []
        cursor: str | None = None
        for _page in range(50):
            params: JsonObject = {}
            if cwd:
                params["cwd"] = cwd
            if cursor:
                params["cursor"] = cursor
            result = await self.call("session/list", params)
            if not isinstance(result, dict) or not isinstance(result.get("sessions"), list):
                raise BackendError(p.NOT_SUPPORTED, f"agent {self.name!r}: session/list failed")
            out.extend(s for s in result["sessions"] if isinstance(s, dict))
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str):
                break
        return out

    def _prompt_blocks(self, blocks: list[JsonObject]) -> list[JsonObject]:
        return acp_caps.prompt_blocks(self.name, self._prompt_caps(), blocks)

    def check_prompt(self, blocks: list[JsonObject]) -> None:
        self._prompt_blocks(blocks)

    async def prompt(self, session: Session, blocks: list[JsonObject]) -> str:
        params = {"sessionId": self.agent_id(session), "prompt": self._prompt_blocks(blocks)}
        result = await self.call("session/prompt", params, timeout=None)
        stop = result.get("stopReason") if isinstance(result, dict) else None
        return stop if isinstance(stop, str) else "end_turn"

    async def cancel(self, session: Session) -> None:
        if self._proc is not None and self._proc.alive:
            self._proc.notify("session/cancel", {"sessionId": self.agent_id(session)})
        self._requests.cancel_session(session)

    async def set_mode(self, session: Session, mode_id: str) -> None:
        await self.call(
            "session/set_mode", {"sessionId": self.agent_id(session), "modeId": mode_id}
        )
        self.editor.publish(session, session.set_current_mode(mode_id))

    async def set_config_option(
        self, session: Session, config_id: str, value: str | bool
    ) -> list[JsonObject]:
        params: JsonObject = {
            "sessionId": self.agent_id(session),
            "configId": config_id,
            "value": value,
        }
        if isinstance(value, bool):
            params["type"] = "boolean"
        result = await self.call("session/set_config_option", params)
        options = result.get("configOptions") if isinstance(result, dict) else None
        if not isinstance(options, list):
            raise BackendError(
                p.AGENT_ERROR, f"agent {self.name!r}: session/set_config_option: bad result"
            )
        self.editor.publish(
            session,
            session.apply_update(
                {"sessionUpdate": "config_option_update", "configOptions": options}
            ),
        )
        return options

    async def close_session(self, session: Session) -> None:
        agent_sid = self.agent_id(session)
        try:
            # a failed session belonged to a process that is gone: nothing to close there
            if self.running and self._has_session_cap("close") and session.status != "failed":
                await self.call("session/close", {"sessionId": agent_sid})
        finally:
            self._sessions.pop(agent_sid, None)
            self._agent_ids.pop(session.session_id, None)
            self._failed.pop(session.session_id, None)
            if self._editor_tools is not None:
                self._editor_tools.release_session(session)

    async def delete_session(self, session_id: str) -> None:
        await self._process()
        if not self._has_session_cap("delete"):
            raise BackendError(p.NOT_SUPPORTED, f"agent {self.name!r} cannot delete sessions")
        await self.call(
            "session/delete", {"sessionId": self._agent_ids.get(session_id, session_id)}
        )

    async def fork_session(self, session: Session, at: Session | None = None) -> Session:
        if not self._has_session_cap("fork"):
            raise BackendError(p.NOT_SUPPORTED, f"agent {self.name!r} cannot fork sessions")
        params: JsonObject = {
            "sessionId": self.agent_id(session),
            "cwd": session.cwd,
            "mcpServers": self._mcp_servers(),
            **self._fork_point(at),
        }
        self._dirs_param(params, session.additional_directories)
        token = await self._editor_mcp(params)
        try:
            result = await self.call("session/fork", params)
            if not isinstance(result, dict) or not isinstance(result.get("sessionId"), str):
                raise BackendError(p.AGENT_ERROR, f"agent {self.name!r}: session/fork: bad result")
        except BaseException:
            self._release_editor(token)
            raise
        fork = self._adopt(result["sessionId"], session.cwd, session.additional_directories)
        self._bind_editor(token, fork)
        fork.take_history(at or session)
        fork.forked_from = session.session_id
        self._apply_state(fork, result)
        return fork

    # -- incoming --------------------------------------------------------------------------
    def _on_notification(self, method: str, params: Any) -> None:
        # session/update first: it is the one a streaming turn sends per chunk
        if method == "session/update" and isinstance(params, dict):
            update = params.get("update")
            if not isinstance(update, dict):
                self.editor.log("warning", f"[{self.name}] session/update without an update object")
                return
            agent_sid = params.get("sessionId")
            if not isinstance(agent_sid, str):
                return
            session = self._sessions.get(agent_sid)
            if session is None:
                early = self._early.setdefault(agent_sid, [])
                if len(early) < 10_000:
                    early.append(update)
                return
            self._apply(session, update)
        elif method == "elicitation/complete" and isinstance(params, dict):
            elicitation_id = params.get("elicitationId")
            if isinstance(elicitation_id, str):
                session = self.session_for(params.get("sessionId"))
                self.editor.elicitation_complete(session, self.name, elicitation_id)

    def _apply(self, session: Session, update: JsonObject) -> None:
        kind = update.get("sessionUpdate")
        if type(kind) is str and kind.startswith("tool_call"):
            paths = named_paths(update)
            if paths:
                self.editor.note_paths(session, paths)
        self.editor.publish(session, session.apply_update(update))
