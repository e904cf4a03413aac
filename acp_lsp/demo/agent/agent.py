"""The demo agent's ACP surface (agent side of the Python SDK): lifecycle, sessions, settings.

The prompt turn itself lives in `turn.py`. Results are built from wire-shaped dicts with
`model_validate`, so what goes out is exactly the camelCase the protocol documents.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.interfaces import Client
from acp.schema import (
    ClientCapabilities,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    ResumeSessionResponse,
    SessionNotification,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from acp_lsp.demo.agent.catalog import (
    AGENT_NAME,
    AGENT_TITLE,
    AGENT_VERSION,
    COMMANDS,
    MODEL_VALUES,
    MODES,
    VERBOSITY_VALUES,
    config_options,
    modes_state,
    turn_delay,
)
from acp_lsp.demo.agent.prompt import PromptInfo
from acp_lsp.demo.agent.session import DemoSession, SessionStore, now_iso
from acp_lsp.demo.agent.stream import ClientCaps
from acp_lsp.demo.agent.turn import DemoTurn
from acp_lsp.tasks import TaskOwner

log = logging.getLogger(__name__)
PAGE_SIZE = 50


class DemoAgent:
    """An offline, deterministic ACP agent that exercises everything acp-lsp supports."""

    def __init__(self, store: SessionStore | None = None, delay: float | None = None) -> None:
        self._conn: Client | None = None
        self._store = store if store is not None else SessionStore()
        self._caps = ClientCaps()
        self._turns: dict[str, DemoTurn] = {}
        self._tasks = TaskOwner("demo-agent")
        self._delay = turn_delay() if delay is None else delay

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    async def close(self) -> None:
        for turn in self._turns.values():
            turn.cancel()
        await self._tasks.close()

    # -- lifecycle --------------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        caps = client_capabilities.model_dump(by_alias=True) if client_capabilities else {}
        self._caps = ClientCaps.from_wire(caps)
        log.info("client %s, capabilities %s", client_info and client_info.name, self._caps)
        return InitializeResponse.model_validate(
            {
                "protocolVersion": 1,
                "agentInfo": {"name": AGENT_NAME, "title": AGENT_TITLE, "version": AGENT_VERSION},
                "authMethods": [],
                "agentCapabilities": {
                    "loadSession": True,
                    "promptCapabilities": {"embeddedContext": True, "image": False, "audio": False},
                    "sessionCapabilities": {"list": {}, "close": {}, "resume": {}},
                },
            }
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # no auth methods are offered; answer {} anyway

    # -- sessions ---------------------------------------------------------------------------

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        session = DemoSession.create(_absolute(cwd))
        self._store.add(session)
        self._after_response(session)
        return NewSessionResponse.model_validate(
            {"sessionId": session.session_id, **self._session_state(session)}
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        session = self._known(session_id)
        session.cwd, session.live = _absolute(cwd), True
        for update in list(session.history):
            await self._notify(session.session_id, update)
        self._after_response(session)
        return LoadSessionResponse.model_validate(self._session_state(session))

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        session = self._known(session_id)
        session.cwd, session.live = _absolute(cwd), True
        self._after_response(session)
        return ResumeSessionResponse.model_validate(self._session_state(session))

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        raise RequestError.method_not_found("session/fork")  # not advertised

    async def close_session(self, session_id: str, **kwargs: Any) -> None:
        session = self._known(session_id)
        turn = self._turns.get(session_id)
        if turn is not None:
            turn.cancel()
        session.live = False
        self._store.save(session)

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        sessions = [s for s in self._store if cwd is None or str(s.cwd) == cwd]
        sessions.sort(key=lambda s: s.updated_at, reverse=True)
        try:
            start = int(cursor) if cursor else 0
        except ValueError:
            raise RequestError.invalid_params({"cursor": "unknown cursor"}) from None
        page = sessions[start : start + PAGE_SIZE]
        result: dict[str, Any] = {"sessions": [s.info() for s in page]}
        if start + PAGE_SIZE < len(sessions):
            result["nextCursor"] = str(start + PAGE_SIZE)
        return ListSessionsResponse.model_validate(result)

    # -- settings ---------------------------------------------------------------------------

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        session = self._known(session_id)
        if mode_id not in {m["id"] for m in MODES}:
            raise RequestError.invalid_params({"modeId": f"unknown mode {mode_id!r}"})
        session.mode_id = mode_id
        await self._notify(
            session_id, {"sessionUpdate": "current_mode_update", "currentModeId": mode_id}
        )
        self._store.save(session)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        session = self._known(session_id)
        allowed: dict[str, Any] = {
            "verbosity": VERBOSITY_VALUES,
            "model": list(MODEL_VALUES),
            "run_checks": [True, False] if self._caps.boolean_config else [],
        }
        if config_id not in allowed:
            raise RequestError.invalid_params({"configId": f"unknown config option {config_id!r}"})
        if not any(value == v and type(value) is type(v) for v in allowed[config_id]):
            raise RequestError.invalid_params(
                {"value": f"{value!r} is not allowed for {config_id}"}
            )
        session.config[config_id] = value
        options = config_options(session.config, boolean=self._caps.boolean_config)
        await self._notify(
            session_id, {"sessionUpdate": "config_option_update", "configOptions": options}
        )
        self._store.save(session)
        return SetSessionConfigOptionResponse.model_validate({"configOptions": options})

    # -- turns ------------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._known(session_id)
        if not session.live:
            raise RequestError.invalid_request({"details": "session is closed; load or resume it"})
        if session_id in self._turns:
            raise RequestError.invalid_request({"details": "a turn is already running"})
        blocks = [b.model_dump(by_alias=True, exclude_none=True) for b in prompt]
        session.turns += 1
        turn = DemoTurn(self._client(), session, PromptInfo.parse(blocks), self._caps, self._delay)
        self._turns[session_id] = turn
        try:
            stop_reason = await turn.run()
        except (RequestError, ConnectionError):
            raise
        except Exception as exc:
            log.exception("turn %d of %s failed", session.turns, session_id)
            raise RequestError.internal_error({"details": str(exc)}) from exc
        finally:
            self._turns.pop(session_id, None)
            session.updated_at = now_iso()
            self._store.save(session)
        return PromptResponse.model_validate({"stopReason": stop_reason})

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        turn = self._turns.get(session_id)
        if turn is not None:
            turn.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.debug("ignoring extension notification _%s", method)

    # -- helpers ----------------------------------------------------------------------------

    def _client(self) -> Client:
        if self._conn is None:
            raise RequestError.internal_error({"details": "not connected"})
        return self._conn

    def _known(self, session_id: str) -> DemoSession:
        session = self._store.get(session_id)
        if session is None:
            raise RequestError.resource_not_found(session_id)
        return session

    def _session_state(self, session: DemoSession) -> dict[str, Any]:
        return {
            "modes": modes_state(session.mode_id),
            "configOptions": config_options(session.config, boolean=self._caps.boolean_config),
        }

    async def _notify(self, session_id: str, update: dict[str, Any]) -> None:
        note = SessionNotification.model_validate({"sessionId": session_id, "update": update})
        await self._client().session_update(session_id=session_id, update=note.update)

    def _after_response(self, session: DemoSession) -> None:
        """Send the slash commands once the response naming the session has gone out.

        The SDK queues a handler's response as soon as the handler returns, before a task
        spawned here first runs, so this notification follows the response.
        """
        update = {
            "sessionUpdate": "available_commands_update",
            "availableCommands": COMMANDS,
        }
        self._tasks.spawn(self._notify(session.session_id, update), name="demo-commands")


def _absolute(cwd: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute():
        raise RequestError.invalid_params({"cwd": f"must be an absolute path, got {cwd!r}"})
    return path
