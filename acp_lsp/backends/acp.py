"""ACP backend: one agent process per configured agent, shared by its sessions.

The bridge owns the wire (acp_lsp.backends.wire): payloads stay raw JSON, updates are applied
in arrival order, and everything the agent may ask (permission, fs, terminals) is answered
through the editor port. A dead agent fails its live sessions; ``restart`` starts it again.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import Callable, Mapping
from typing import Any

from acp_lsp import __version__
from acp_lsp import protocol as p
from acp_lsp.backends import acp_auth
from acp_lsp.backends.acp_requests import AgentRequests
from acp_lsp.backends.base import AgentInfo, Backend, BackendError, EditorPort
from acp_lsp.backends.wire import AgentGone, AgentProcess, RpcError
from acp_lsp.config import AgentConfig, SecretStore, agent_environment
from acp_lsp.session import Session, named_paths

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]

ACP_PROTOCOL_VERSION = 1

# What the bridge implements, advertised exactly (reference/acp.md §3).
CLIENT_CAPABILITIES: JsonObject = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
    # terminal-type auth methods go to the editor as acp/authenticate {terminal}
    "auth": {"terminal": True},
    # elicitation/create becomes acp/elicitation (or showMessageRequest questions)
    "elicitation": {"form": {}, "url": {}},
}


class AcpBackend(Backend):
    protocol = "acp"

    def __init__(
        self,
        name: str,
        config: AgentConfig,
        editor: EditorPort,
        *,
        environ: Mapping[str, str],
        secrets: SecretStore,
        id_taken: Callable[[str], bool] = lambda _sid: False,
        on_send: Callable[[JsonObject], None] | None = None,
    ) -> None:
        super().__init__(name, editor)
        self.config = config
        self._environ = environ
        self._secrets = secrets
        self._id_taken = id_taken
        self._on_send = on_send
        self._proc: AgentProcess | None = None
        self._start_lock = asyncio.Lock()
        self.init_result: JsonObject = {}
        self.last_error: str | None = None
        self._stopping: AgentProcess | None = None  # a process we are stopping on purpose
        self._starting = False
        # agent session id -> Session (the editor-facing id may differ on a collision)
        self._sessions: dict[str, Session] = {}
        self._agent_ids: dict[str, str] = {}
        self._early: dict[str, list[JsonObject]] = {}
        # editor session id -> (agent session id, Session) of sessions a crash failed: a
        # session/resume (no replay) continues from what the bridge already knew
        self._failed: dict[str, tuple[str, Session]] = {}
        self._requests = AgentRequests(self)
        # auth methods an agent named only in an error (Qwen Code lists them there)
        self._learned_auth: list[JsonObject] = []

    # -- process ---------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.alive

    def info(self) -> AgentInfo:
        agent_info = self.init_result.get("agentInfo")
        title = self.config.title
        if title is None and isinstance(agent_info, dict):
            title = agent_info.get("title") or agent_info.get("name")
        methods = self._auth_methods()
        extra: JsonObject = {}
        if self.last_error:
            extra["error"] = self._secrets.redact(self.last_error)
        if isinstance(agent_info, dict) and isinstance(agent_info.get("version"), str):
            extra["version"] = agent_info["version"]
        if self._caps():
            extra["agentCapabilities"] = self._caps()
            extra["promptCapabilities"] = self._prompt_caps()
        if self._starting:
            extra["starting"] = True
        return AgentInfo(
            name=self.name,
            title=title or self.name,
            protocol="acp",
            running=self.running,
            auth_methods=methods or None,
            extra=extra,
        )

    def _auth_methods(self) -> list[JsonObject]:
        known = acp_auth.auth_methods(self.init_result.get("authMethods"))
        ids = {m.get("id") for m in known}
        return known + [m for m in self._learned_auth if m.get("id") not in ids]

    def _prompt_caps(self) -> JsonObject:
        caps = self._caps().get("promptCapabilities")
        return dict(caps) if isinstance(caps, dict) else {}

    def _caps(self) -> JsonObject:
        caps = self.init_result.get("agentCapabilities")
        return caps if isinstance(caps, dict) else {}

    def _session_caps(self) -> JsonObject:
        caps = self._caps().get("sessionCapabilities")
        return caps if isinstance(caps, dict) else {}

    def _has_session_cap(self, name: str) -> bool:
        return self._session_caps().get(name) is not None

    async def _process(self) -> AgentProcess:
        async with self._start_lock:
            if self._proc is not None and self._proc.alive:
                return self._proc
            # a first npx run downloads the agent: the editor shows progress meanwhile
            self._starting = True
            self.editor.agent_starting(self.name)
            try:
                return await self._start()
            finally:
                self._starting = False
                self.editor.agent_started(self.name)

    async def _start(self) -> AgentProcess:
        command = self.config.command or ""
        env = agent_environment(self.config, self._environ, self._secrets)
        if shutil.which(command, path=env.get("PATH")) is None and "/" not in command:
            self.last_error = f"command not found: {command!r}"
            raise BackendError(
                p.AGENT_UNAVAILABLE,
                f"agent {self.name!r} failed to start: command not found: {command!r}",
                {"agent": self.name, "stderr": ""},
            )
        try:
            proc = await AgentProcess.start(
                command,
                list(self.config.args),
                env=env,
                cwd=None,
                on_notification=self._on_notification,
                on_request=self._requests.handle,
                on_stderr=self._on_stderr,
                on_exit=self._on_exit,
                on_send=self._on_send,
                name=self.name,
            )
        except AgentGone as exc:
            self.last_error = str(exc)
            raise BackendError(
                p.AGENT_UNAVAILABLE,
                f"agent {self.name!r} failed to start: {exc}",
                {"agent": self.name, "stderr": self._secrets.redact(exc.stderr_tail)},
            ) from None
        self._proc = proc
        try:
            result = await proc.request(
                "initialize",
                {
                    "protocolVersion": ACP_PROTOCOL_VERSION,
                    "clientCapabilities": CLIENT_CAPABILITIES,
                    "clientInfo": {
                        "name": "acp-lsp",
                        "title": "acp-lsp",
                        "version": __version__,
                    },
                },
                timeout=self.config.effective_start_timeout,
            )
        except (AgentGone, RpcError, TimeoutError) as exc:
            tail = proc.stderr_tail()
            await proc.close(grace=0.5)
            self._proc = None
            if isinstance(exc, TimeoutError):
                limit = self.config.effective_start_timeout
                hint = (
                    "; a first run downloads the agent: raise startTimeout if it is slow"
                    if self.config.downloads
                    else ""
                )
                exc = TimeoutError(f"no answer within {limit:g}s (startTimeout{hint})")
            self.last_error = f"initialize failed: {exc}"
            raise BackendError(
                p.AGENT_UNAVAILABLE,
                f"agent {self.name!r} failed to start: initialize: {exc}",
                {"agent": self.name, "stderr": self._secrets.redact(tail)},
            ) from None
        self.init_result = result if isinstance(result, dict) else {}
        version = self.init_result.get("protocolVersion")
        if version != ACP_PROTOCOL_VERSION:
            await proc.close(grace=0.5)
            self._proc = None
            self.last_error = f"unsupported protocol version {version!r}"
            raise BackendError(
                p.AGENT_UNAVAILABLE,
                f"agent {self.name!r} speaks ACP protocol version {version!r}; "
                f"acp-lsp speaks {ACP_PROTOCOL_VERSION}",
            )
        self.last_error = None
        return proc

    async def call(self, method: str, params: JsonObject, *, timeout: float | None = -1.0) -> Any:
        """A request to the agent, with agent errors mapped to acp/* errors."""
        proc = await self._process()
        wait = self.config.request_timeout if timeout == -1.0 else timeout
        try:
            return await proc.request(method, params, timeout=wait)
        except RpcError as exc:
            if exc.code == p.AUTH_REQUIRED:
                raise self._auth_error(exc) from None
            if exc.code == -32601:
                raise BackendError(
                    p.NOT_SUPPORTED, f"agent {self.name!r} does not support {method}"
                ) from None
            raise BackendError(
                p.AGENT_ERROR, f"agent {self.name!r}: {method}: {exc.message}", exc.to_json()
            ) from None
        except TimeoutError:
            raise BackendError(
                p.AGENT_ERROR,
                f"agent {self.name!r} did not answer {method} within {wait:g}s",
            ) from None
        except AgentGone as exc:
            raise BackendError(
                p.AGENT_UNAVAILABLE,
                f"agent {self.name!r} exited: {exc}",
                {"agent": self.name, "stderr": self._secrets.redact(exc.stderr_tail)},
            ) from None

    def _auth_error(self, exc: RpcError) -> BackendError:
        data = acp_auth.auth_error_data(
            self.name, self.config, self._auth_methods(), exc.data, exc.message
        )
        self._learned_auth = [
            m for m in data["authMethods"] if m not in self._auth_methods()
        ] + self._learned_auth
        hint = acp_auth.describe(data["authMethods"])
        message = f"agent {self.name!r} requires authentication: {exc.message}"
        return BackendError(p.AUTH_REQUIRED, message + (f" ({hint})" if hint else ""), data)

    def _on_stderr(self, line: str) -> None:
        self.editor.log("log", f"[{self.name}] {self._secrets.redact(line)}")

    def _on_exit(self, returncode: int | None) -> None:
        proc = self._proc
        tail = proc.stderr_tail() if proc is not None else ""
        self._proc = None
        if proc is not None and proc is self._stopping:  # restart, cancel grace, shutdown
            message = f"agent {self.name!r} was stopped"
            self.editor.log("info", message)
        else:
            message = f"agent {self.name!r} exited (code {returncode})"
            self.last_error = message
            self.editor.log("error", message)
        for session in list(self._sessions.values()):
            if session.status in ("closed", "failed"):
                continue
            self.editor.cancel_permissions(session)
            # the turn's unfinished calls end before the status: nothing follows "failed"
            self.editor.publish(session, session.finish_turn("cancelled"))
            self.editor.set_status(
                session,
                "failed",
                error={
                    "code": p.AGENT_UNAVAILABLE,
                    "message": message,
                    "stderr": self._secrets.redact(tail),
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

    def _adopt(self, agent_sid: str, cwd: str, dirs: list[str]) -> Session:
        editor_sid = agent_sid
        suffix = 1
        while self._id_taken(editor_sid) or editor_sid in self._agent_ids:
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
        """Configured MCP servers the agent can take: stdio always, http/sse when advertised."""
        caps = self._caps().get("mcpCapabilities")
        offered = caps if isinstance(caps, dict) else {}
        out: list[JsonObject] = []
        for server in self.config.mcp_servers:
            kind = server.get("type", "stdio")
            if kind == "stdio" or offered.get(kind):
                out.append(server)
            else:
                self.editor.log(
                    "warning",
                    f"[{self.name}] MCP server {server.get('name')!r} left out: "
                    f"the agent does not accept {kind!r} MCP servers",
                )
        return out

    def _dirs_param(self, params: JsonObject, dirs: list[str]) -> None:
        if dirs and self._has_session_cap("additionalDirectories"):
            params["additionalDirectories"] = dirs

    async def new_session(self, cwd: str, additional_directories: list[str]) -> Session:
        await self._process()  # the agent's capabilities decide which MCP servers go along
        params: JsonObject = {"cwd": cwd, "mcpServers": self._mcp_servers()}
        self._dirs_param(params, additional_directories)
        result = await self.call("session/new", params)
        if not isinstance(result, dict) or not isinstance(result.get("sessionId"), str):
            raise BackendError(p.AGENT_ERROR, f"agent {self.name!r}: session/new: bad result")
        session = self._adopt(result["sessionId"], cwd, additional_directories)
        self._apply_state(session, result)
        return session

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
        await self._process()
        known = self._failed.pop(session_id, None)
        agent_sid = known[0] if known else self._agent_ids.get(session_id, session_id)
        params: JsonObject = {"sessionId": agent_sid, "cwd": cwd, "mcpServers": self._mcp_servers()}
        dirs = list(known[1].additional_directories) if known else []
        self._dirs_param(params, dirs)
        if self._caps().get("loadSession") is True:
            method = "session/load"
        elif self._has_session_cap("resume"):
            method = "session/resume"
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
            session = self._adopt(agent_sid, cwd, dirs)
        try:
            result = await self.call(method, params)
        except BackendError:
            self._sessions.pop(agent_sid, None)
            self._agent_ids.pop(session.session_id, None)
            if known is not None:
                self._failed[session_id] = known
            raise
        session.status = "idle"
        self._apply_state(session, result)
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
        """Restrict content to what the agent accepts (text and resource_link always)."""
        caps = self._prompt_caps()
        out: list[JsonObject] = []
        for block in blocks:
            kind = block.get("type")
            if kind == "resource" and not caps.get("embeddedContext"):
                resource = block.get("resource")
                if isinstance(resource, dict) and isinstance(resource.get("text"), str):
                    uri = resource.get("uri", "")
                    out.append({"type": "text", "text": f"{uri}:\n{resource['text']}"})
                    continue
            if kind in ("image", "audio") and not caps.get(kind):
                raise BackendError(
                    p.INVALID_PARAMS,
                    f"prompt: agent {self.name!r} does not accept {kind} content "
                    f"(promptCapabilities.{kind} is not set)",
                )
            out.append(block)
        return out

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

    async def delete_session(self, session_id: str) -> None:
        await self._process()
        if not self._has_session_cap("delete"):
            raise BackendError(p.NOT_SUPPORTED, f"agent {self.name!r} cannot delete sessions")
        await self.call(
            "session/delete", {"sessionId": self._agent_ids.get(session_id, session_id)}
        )

    async def authenticate(self, method_id: str) -> JsonObject:
        await self._process()
        methods = self._auth_methods()
        method = next((m for m in methods if m.get("id") == method_id), None)
        if method is None:
            known = [m.get("id") for m in methods]
            raise BackendError(
                p.INVALID_PARAMS,
                f"methodId: agent {self.name!r} has no auth method {method_id!r} (offers {known})",
            )
        kind = acp_auth.method_type(method)
        if kind == "terminal":
            return {"terminal": acp_auth.terminal_command(self.config, method)}
        if kind == "env_var":
            return acp_auth.env_var_answer(self.name, method)
        await self.call("authenticate", {"methodId": method_id})
        return {}

    async def logout(self) -> None:
        await self._process()
        auth = self._caps().get("auth")
        if not (isinstance(auth, dict) and auth.get("logout") is not None):
            raise BackendError(p.NOT_SUPPORTED, f"agent {self.name!r} does not support logout")
        await self.call("logout", {})

    async def fork_session(self, session: Session) -> Session:
        if not self._has_session_cap("fork"):
            raise BackendError(p.NOT_SUPPORTED, f"agent {self.name!r} cannot fork sessions")
        params: JsonObject = {
            "sessionId": self.agent_id(session),
            "cwd": session.cwd,
            "mcpServers": self._mcp_servers(),
        }
        self._dirs_param(params, session.additional_directories)
        result = await self.call("session/fork", params)
        if not isinstance(result, dict) or not isinstance(result.get("sessionId"), str):
            raise BackendError(p.AGENT_ERROR, f"agent {self.name!r}: session/fork: bad result")
        fork = self._adopt(result["sessionId"], session.cwd, session.additional_directories)
        fork.take_history(session)
        fork.forked_from = session.session_id
        self._apply_state(fork, result)
        return fork

    async def stop(self) -> None:
        """Stop the agent process (its live sessions fail); the next use starts it again."""
        proc = self._proc
        if proc is not None:
            self._stopping = proc
            await proc.close(grace=1.0)  # runs to the end even if we are cancelled
        self.init_result = {}

    async def restart(self) -> None:
        """Stop the agent and start it again now, so a start failure reaches the caller."""
        await self.stop()
        await self._process()

    async def shutdown(self) -> None:
        await self.stop()

    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    # -- incoming --------------------------------------------------------------------------
    def _on_notification(self, method: str, params: Any) -> None:
        if method == "elicitation/complete" and isinstance(params, dict):
            elicitation_id = params.get("elicitationId")
            if isinstance(elicitation_id, str):
                session = self.session_for(params.get("sessionId"))
                self.editor.elicitation_complete(session, self.name, elicitation_id)
            return
        if method != "session/update" or not isinstance(params, dict):
            return
        update = params.get("update")
        if not isinstance(update, dict):
            self.editor.log("warning", f"[{self.name}] session/update without an update object")
            return
        agent_sid = params.get("sessionId")
        session = self.session_for(agent_sid)
        if session is None:
            if isinstance(agent_sid, str):
                early = self._early.setdefault(agent_sid, [])
                if len(early) < 10_000:
                    early.append(update)
            return
        self._apply(session, update)

    def _apply(self, session: Session, update: JsonObject) -> None:
        if str(update.get("sessionUpdate", "")).startswith("tool_call"):
            paths = named_paths(update)
            if paths:
                self.editor.note_paths(session, paths)
        self.editor.publish(session, session.apply_update(update))
