"""The process side of an ACP agent: start it, ask it things, read its capabilities, log in
and out, stop it. Sessions on top of it live in acp_lsp.backends.acp.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from acp_lsp import protocol as p
from acp_lsp.backends import acp_auth, acp_caps, acp_start, agent_env
from acp_lsp.backends.acp_start import StartFailed
from acp_lsp.backends.agent_sandbox import AgentSandbox
from acp_lsp.backends.base import AgentInfo, Backend, BackendError, EditorPort
from acp_lsp.backends.wire import AgentGone, AgentProcess, RpcError, describe_exit
from acp_lsp.config import AgentConfig, agent_environment
from acp_lsp.secret_store import SecretStore
from acp_lsp.session import Session

CLAUDE_PACKAGE = "@agentclientprotocol/claude-agent-acp"

JsonObject = dict[str, Any]


class AcpAgent(Backend):
    """One agent process, shared by its sessions (the subclass keeps those)."""

    protocol = "acp"

    def __init__(
        self,
        name: str,
        config: AgentConfig,
        editor: EditorPort,
        *,
        environ: Mapping[str, str],
        secrets: SecretStore,
        on_send: Callable[[JsonObject], None] | None = None,
        workspace_folders: Callable[[], Sequence[str]] = tuple,
    ) -> None:
        super().__init__(name, editor)
        # the bubblewrap confinement of sandbox = "workspace" (also for its terminal commands)
        self.sandbox = (
            AgentSandbox(name, config, workspace_folders, environ)
            if config.sandbox == "workspace"
            else None
        )
        self.config = config
        self._environ = environ
        self._secrets = secrets
        self._on_send = on_send
        self._proc: AgentProcess | None = None
        self._start_lock = asyncio.Lock()
        self.init_result: JsonObject = {}
        self.last_error: str | None = None
        self._stopping: AgentProcess | None = None  # a process we are stopping on purpose
        self._starting = False
        # auth methods an agent named only in an error (Qwen Code lists them there)
        self._learned_auth: list[JsonObject] = []

    # -- what the sessions side answers ------------------------------------------------------
    def _on_notification(self, method: str, params: Any) -> None:
        raise NotImplementedError

    async def _on_request(self, method: str, params: Any) -> Any:
        raise NotImplementedError

    def _sessions_failed(self, message: str, stderr: str, tool_status: str) -> None:
        """The process is gone: its sessions fail with ``message``, and the tool calls their
        turns left unfinished get ``tool_status``."""
        raise NotImplementedError

    # -- process ---------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.alive

    def _fork_point(self, at: Session | None) -> JsonObject:
        """``session/fork``'s ``_meta`` forking at ``at``'s last message, an agent answer:
        ``_meta.jetbrains.air.fork``, an extension of claude-agent-acp since 0.101 (read from
        its package). It advertises it to no client, so its name and version tell: another
        agent would fork at the latest message and the rewound prompt would reach it again."""
        if at is None:
            return {}
        info = self.init_result.get("agentInfo")
        version = str(info.get("version")) if isinstance(info, dict) else ""
        parts = [int(n) if n.isdigit() else -1 for n in version.split(".")[:2]]
        if not isinstance(info, dict) or info.get("name") != CLAUDE_PACKAGE or parts < [0, 101]:
            raise BackendError(p.NOT_SUPPORTED, f"agent {self.name!r} cannot fork at a message")
        point = {"version": 1, "messageId": at.message(at.message_count() - 1).message_id}
        return {"_meta": {"jetbrains": {"air": {"fork": point}}}}

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
        return acp_caps.prompt_caps(self.init_result)

    def _caps(self) -> JsonObject:
        return acp_caps.agent_caps(self.init_result)

    def _has_session_cap(self, name: str) -> bool:
        return acp_caps.has_session_cap(self.init_result, name)

    def _offers_mcp(self) -> bool:
        """Whether sessions may carry MCP servers (known before the agent starts)."""
        return bool(self.config.mcp_servers)

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
        env = agent_environment(self.config, self._environ, self._secrets)
        env = agent_env.start_env(self.name, self.config, env, self._offers_mcp())
        try:
            proc = await acp_start.spawn(
                self.name,
                self.config,
                env,
                self._secrets,
                self.sandbox,
                on_notification=self._on_notification,
                on_request=self._on_request,
                on_stderr=self._on_stderr,
                on_exit=self._on_exit,
                on_send=self._on_send,
            )
            self._proc = proc
            self.init_result = await acp_start.initialize(
                self.name, self.config, proc, self._secrets
            )
        except StartFailed as exc:
            self._proc = None
            self.last_error = exc.reason
            raise exc.error from None
        self.last_error = None
        self._initialized()
        return proc

    async def _admit(self, cwd: str, dirs: Sequence[str], busy: bool) -> None:
        """A sandboxed process writes only the roots it started with: one lacking this
        session's is restarted first when idle (``busy`` refuses the session instead)."""
        if self.sandbox is not None and self.sandbox.admit([cwd, *dirs], self.running, busy):
            self.editor.log("info", f"[{self.name}] restarting: sandbox roots now include {cwd}")
            await self.stop()

    async def call(self, method: str, params: JsonObject, *, timeout: float | None = -1.0) -> Any:
        """A request to the agent, with agent errors mapped to acp/* errors."""
        proc = await self._process()
        wait = self.config.request_timeout if timeout == -1.0 else timeout
        try:
            return await proc.request(method, params, timeout=wait)
        except AgentGone as exc:
            raise BackendError(
                p.AGENT_UNAVAILABLE,
                self._exit_message(proc),
                {"agent": self.name, "stderr": self._secrets.redact(exc.stderr_tail)},
            ) from None
        except (RpcError, TimeoutError) as exc:
            raise acp_start.call_error(
                self.name, method, exc, wait, self._secrets, self._auth_error
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

    def _exit_message(self, proc: AgentProcess) -> str:
        """How the agent went, as the user reads it: 'agent 'claude' was killed by SIGKILL
        (pid 42)', 'agent 'x' exited (exit code 9) (pid 42)', 'agent 'x' was stopped'."""
        if proc is self._stopping:  # restart, cancel grace, shutdown
            return f"agent {self.name!r} was stopped"
        code = proc.returncode
        if code is None:
            how = "closed its output"
        elif code < 0:
            how = f"was {describe_exit(code)}"  # "was killed by SIGKILL"
        else:
            how = f"exited ({describe_exit(code)})"
        return f"agent {self.name!r} {how} (pid {proc.pid})"

    def _on_exit(self, returncode: int | None) -> None:
        proc = self._proc
        tail = proc.stderr_tail() if proc is not None else ""
        self._proc = None
        stopped = proc is not None and proc is self._stopping
        if proc is None:
            message = f"agent {self.name!r} exited ({describe_exit(returncode)})"
        else:
            message = self._exit_message(proc)
        if stopped:
            self.editor.log("info", message)
        else:
            self.last_error = message
            self.editor.log("error", message)
        # a stop was asked for (its turn was cancelled); a crash fails the calls it cut off
        self._sessions_failed(
            message, self._secrets.redact(tail), "cancelled" if stopped else "failed"
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

    async def stop(self) -> None:
        """Stop the agent process (its live sessions fail); the next use starts it again."""
        proc = self._proc
        if proc is not None:
            self._stopping = proc
            await proc.close(grace=1.0)  # runs to the end even if we are cancelled
        self.init_result = {}

    def _initialized(self) -> None:
        """The agent answered ``initialize`` (its capabilities are known)."""

    async def restart(self) -> None:
        """Stop the agent and start it again now, so a start failure reaches the caller."""
        await self.stop()
        await self._process()

    async def shutdown(self) -> None:
        await self.stop()

    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None
