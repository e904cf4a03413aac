"""AAP v3 agents: one configured agent of an Agent Application Protocol server (HTTP + SSE).

DESIGN §3 "AAP agents", reference/aap.md. ``GET /meta`` is read once (version must be 3);
``acp/newSession`` creates a server session with the agent's server tools enabled (``trust``
from ``trustedTools``) and the bridge's client tools declared; a prompt is one or more
``POST /sessions/:id/turns``: after each ``tool_use`` stop the bridge runs its client tools,
asks the editor about untrusted server tools, and sends every result and permission back in
one request, until another stop reason. The server owns history; ``acp/loadSession`` rebuilds
the session from it and resolves the calls the last turn left open.

A turn runs in an owned task so that ``cancel`` can abort its HTTP request (v3 has no cancel
endpoint: closing the stream is the cancel) and ``prompt`` still answers ``cancelled`` at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import httpx

from acp_lsp import protocol as p
from acp_lsp.backends.aap_events import (
    ToolUse,
    TurnMapper,
    aap_prompt,
    message_events,
    unresolved_tool_uses,
)
from acp_lsp.backends.aap_http import AapHttp, session_path
from acp_lsp.backends.aap_meta import AapAgent, read_meta
from acp_lsp.backends.aap_resolve import cancelled_answers, resolve_calls, upsert
from acp_lsp.backends.aap_tools import CLIENT_TOOL_NAMES, CLIENT_TOOLS
from acp_lsp.backends.base import AgentInfo, Backend, BackendError, EditorPort
from acp_lsp.config import AgentConfig
from acp_lsp.sandbox import Sandbox
from acp_lsp.session import Session
from acp_lsp.tasks import TaskOwner

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]

PASSED_STOP_REASONS = frozenset({"end_turn", "max_tokens", "refusal"})


@dataclass
class _SessionState:
    client_tools: frozenset[str]  # names of the client-side tools the session declared
    turn: asyncio.Task[str | BackendError] | None = None
    # The last turn broke off (cancel, cut, error): calls it left open are answered
    # "cancelled" before the next prompt (aap.md §5 "Cancel").
    check_history: bool = False


def _new_state(agent: AapAgent) -> _SessionState:
    """A session created by this bridge declares its client tools where the agent takes them."""
    return _SessionState(CLIENT_TOOL_NAMES if agent.accepts_client_tools else frozenset())


class AapBackend(Backend):
    protocol = "aap"

    def __init__(
        self,
        name: str,
        config: AgentConfig,
        editor: EditorPort,
        sandbox_for: Callable[[Session], Sandbox] | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """``sandbox_for`` is accepted for parity with the ACP backend: client tools go through
        ``EditorPort.read_text_file``/``write_text_file``, which apply the sandbox themselves.
        ``transport`` replaces the network (tests)."""
        super().__init__(name, editor)
        if config.url is None:
            raise ValueError(f"agent {name!r} has no url: not an AAP agent")
        self.config = config
        self._http = AapHttp(name, config.url, config.api_key, config.request_timeout, transport)
        self._agent: AapAgent | None = None
        self._discovering = asyncio.Lock()
        self._sessions: dict[str, _SessionState] = {}
        self._tasks = TaskOwner(f"aap:{name}")
        self._closed = False

    # -- discovery ---------------------------------------------------------------------------

    def info(self) -> AgentInfo:
        title = self.config.title or (self._agent.title if self._agent else None) or self.name
        return AgentInfo(self.name, title, "aap", running=self._agent is not None)

    async def _discover(self) -> AapAgent:
        async with self._discovering:
            if self._agent is None:
                agent, warnings = read_meta(
                    await self._http.request("GET", "meta"), self.name, self.config
                )
                for warning in warnings:
                    self.editor.log("warning", warning)
                self._agent = agent
            return self._agent

    def _state(self, session: Session, agent: AapAgent) -> _SessionState:
        state = self._sessions.get(session.session_id)
        if state is None:
            state = self._sessions[session.session_id] = _new_state(agent)
        return state

    # -- sessions ----------------------------------------------------------------------------

    async def new_session(self, cwd: str, additional_directories: list[str]) -> Session:
        agent = await self._discover()
        trusted = set(self.config.trusted_tools)
        spec: JsonObject = {
            "name": agent.name,
            "tools": [{"name": t, "trust": t in trusted} for t in agent.server_tools],
        }
        if self.config.options:
            spec["options"] = dict(self.config.options)
        body: JsonObject = {"agent": spec}
        if agent.accepts_client_tools:
            body["tools"] = list(CLIENT_TOOLS)
        answer = await self._http.request("POST", "sessions", body)
        session_id = answer.get("sessionId") if isinstance(answer, dict) else None
        if not isinstance(session_id, str) or not session_id:
            raise BackendError(
                p.AGENT_ERROR, f"AAP agent {self.name!r}: POST /sessions gave no sessionId"
            )
        self._sessions[session_id] = _new_state(agent)
        return Session(session_id, self.name, cwd, additional_directories)

    async def list_sessions(self, cwd: str | None) -> list[JsonObject]:
        """The agent's sessions on the server (every page); AAP has no titles or cwd."""
        agent = await self._discover()
        found: list[JsonObject] = []
        cursors: set[str] = set()
        after: str | None = None
        while True:
            params = {"after": after} if after else None
            page = await self._http.request("GET", "sessions", params=params)
            page = page if isinstance(page, dict) else {}
            for item in page.get("sessions") or []:
                if not isinstance(item, dict) or not isinstance(item.get("sessionId"), str):
                    continue
                owner = item.get("agent")
                if isinstance(owner, dict) and owner.get("name") not in (None, agent.name):
                    continue
                found.append({"sessionId": item["sessionId"]})
            after = page.get("next")
            if not isinstance(after, str) or not after or after in cursors:
                return found
            cursors.add(after)

    async def delete_session(self, session_id: str) -> None:
        await self._http.request("DELETE", session_path(session_id), session_id=session_id)
        self._forget(session_id)

    async def close_session(self, session: Session) -> None:
        """History stays on the server; only the bridge's state goes."""
        self._forget(session.session_id)

    def _forget(self, session_id: str) -> None:
        state = self._sessions.pop(session_id, None)
        if state is not None and state.turn is not None:
            state.turn.cancel()

    async def load_session(self, session_id: str, cwd: str) -> Session:
        """Rebuild from history, then resolve the calls the last turn left open.

        The resolution (client tools run, permissions asked, one turn posted) happens here, so
        the returned session is complete. Its updates are published under ``EditorPort.hold``
        (the editor does not know the session yet); a failure there is logged, not raised.
        """
        agent = await self._discover()
        info = await self._http.request("GET", session_path(session_id), session_id=session_id)
        info = info if isinstance(info, dict) else {}
        owner = info.get("agent", {}).get("name") if isinstance(info.get("agent"), dict) else None
        if isinstance(owner, str) and owner != agent.name:
            raise BackendError(
                p.INVALID_PARAMS,
                f"session {session_id!r} belongs to AAP agent {owner!r}, not {agent.name!r}",
            )
        declared = frozenset(
            str(t["name"]) for t in info.get("tools") or [] if isinstance(t, dict) and "name" in t
        )
        state = _SessionState(declared)
        history = await self._http.history(session_id, agent.history_types)
        session = Session(session_id, self.name, cwd)
        self.editor.hold(session)
        self._sessions[session_id] = state

        replay = TurnMapper(cwd, agent.titles, state.client_tools)
        updates = [u for event in message_events(history) for u in replay.feed(*event)]
        self._publish(session, [out for u in updates for out in session.apply_update(u)])
        open_calls = [
            ToolUse(b["toolCallId"], str(b.get("name")), b.get("input") or {})
            for b in unresolved_tool_uses(history)
        ]
        open_ids = {c.tool_call_id for c in open_calls}
        for call_id in replay.calls:
            if call_id not in replay.results and call_id not in open_ids:
                # left open by an earlier turn: it will never get a result
                upsert(self.editor, session, {"toolCallId": call_id, "status": "cancelled"})
        if open_calls:
            await self._resume(session, state, agent, open_calls)
        return session

    async def _resume(
        self, session: Session, state: _SessionState, agent: AapAgent, calls: list[ToolUse]
    ) -> None:
        mapper = self._mapper(session, state, agent)
        for call in calls:
            mapper.track(call)
        session.begin_turn()

        async def resume() -> str:
            answers = await resolve_calls(
                self.editor, session, state.client_tools, mapper, mapper.pending()
            )
            return await self._run(session, state, agent, mapper, answers)

        try:
            await self._owned(state, resume())
        except BackendError as exc:
            self.editor.log(
                "warning", f"AAP agent {self.name!r}: resuming {session.session_id}: {exc.message}"
            )
        finally:
            self._publish(session, session.finish_turn("cancelled"))

    # -- turns -------------------------------------------------------------------------------

    async def prompt(self, session: Session, blocks: list[JsonObject]) -> str:
        agent = await self._discover()
        state = self._state(session, agent)
        try:
            return await self._owned(state, self._prompt_turn(session, state, agent, blocks))
        except BackendError as exc:
            if exc.code == p.UNKNOWN_SESSION:
                # 404: the server no longer has it (deleted elsewhere): tell the editor it is
                # closed, so it offers a new session instead of retrying (aap.md §8).
                self._forget(session.session_id)
                error = {"code": exc.code, "message": exc.message}
                self.editor.set_status(session, "closed", error=error)
            raise

    async def cancel(self, session: Session) -> None:
        state = self._sessions.get(session.session_id)
        if state is not None and state.turn is not None:
            state.turn.cancel()  # aborts the HTTP request: v3's only way to cancel

    async def _owned(self, state: _SessionState, work: Coroutine[Any, Any, str]) -> str:
        """Run a turn in an owned task; "cancelled" if ``cancel`` stopped it."""
        task = self._tasks.spawn(_result_or_error(work), name="aap turn")
        state.turn = task
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            if state.turn is task:
                state.turn = None
        if task.cancelled():
            state.check_history = True
            return "cancelled"
        result: str | BackendError = task.result()
        if isinstance(result, BackendError):
            raise result
        return result

    async def _prompt_turn(
        self, session: Session, state: _SessionState, agent: AapAgent, blocks: list[JsonObject]
    ) -> str:
        messages: list[JsonObject] = []
        if state.check_history:
            messages = await self._leftover_answers(session, state, agent)
            state.check_history = False
        messages.append({"role": "user", "content": aap_prompt(blocks, agent.image)})
        mapper = self._mapper(session, state, agent)
        return await self._run(session, state, agent, mapper, messages)

    async def _leftover_answers(
        self, session: Session, state: _SessionState, agent: AapAgent
    ) -> list[JsonObject]:
        """Answer "cancelled" for calls an interrupted turn left open in history."""
        try:
            history = await self._http.history(session.session_id, agent.history_types)
        except BackendError as exc:  # the prompt matters more; the post will tell if it's down
            log.info("AAP agent %s: no history to check: %s", self.name, exc.message)
            return []
        return cancelled_answers(history, state.client_tools)

    def _mapper(self, session: Session, state: _SessionState, agent: AapAgent) -> TurnMapper:
        return TurnMapper(session.cwd, agent.titles, state.client_tools)

    async def _run(
        self,
        session: Session,
        state: _SessionState,
        agent: AapAgent,
        mapper: TurnMapper,
        messages: list[JsonObject],
    ) -> str:
        """Post turns until a stop reason other than tool_use (aap.md §5 client algorithm)."""
        try:
            while True:
                stop = await self._post(session, agent, mapper, messages)
                if stop != "tool_use":
                    break
                pending = mapper.pending()
                if not pending:
                    raise BackendError(
                        p.AGENT_ERROR,
                        f"AAP agent {self.name!r} stopped for tool_use with no open tool call",
                    )
                messages = await resolve_calls(
                    self.editor, session, state.client_tools, mapper, pending
                )
        except BackendError:
            state.check_history = True
            self._publish(session, session.finish_turn("failed"))
            raise
        # SDK deviation (aap.md §10.2): a granted tool ran, but no tool_result was sent.
        for call_id in mapper.granted - mapper.results:
            upsert(self.editor, session, {"toolCallId": call_id, "status": "completed"})
        if stop == "error":
            state.check_history = True
            self._publish(session, session.finish_turn("failed"))
            raise BackendError(
                p.AGENT_ERROR,
                f"AAP agent {self.name!r} ended the turn with an error",
                {"stopReason": "error"},
            )
        if stop not in PASSED_STOP_REASONS:
            log.warning("AAP agent %s: unknown stopReason %r treated as end_turn", self.name, stop)
            return "end_turn"
        return stop

    async def _post(
        self, session: Session, agent: AapAgent, mapper: TurnMapper, messages: list[JsonObject]
    ) -> str:
        """One turn request; applies its events as they arrive; returns the stop reason."""
        body = {"stream": agent.stream, "messages": messages}
        async with aclosing(self._http.turn(session.session_id, body)) as events:
            async for event, data in events:
                if event == "turn_stop":
                    reason = data.get("stopReason") if isinstance(data, dict) else None
                    return reason if isinstance(reason, str) else "end_turn"
                if event == "error":  # not in v3 (draft v4 has it); honour it anyway
                    detail = data.get("message") if isinstance(data, dict) else None
                    raise BackendError(
                        p.AGENT_ERROR,
                        f"AAP agent {self.name!r} reported an error: {detail or data!r}",
                        data,
                    )
                updates = mapper.feed(event, data)
                self._publish(session, [out for u in updates for out in session.apply_update(u)])
        raise BackendError(
            p.AGENT_ERROR,
            f"AAP agent {self.name!r}: the turn stream ended before turn_stop (the connection "
            "closed mid-turn); the turn is incomplete, the session is still usable",
        )

    # -- helpers -----------------------------------------------------------------------------

    def _publish(self, session: Session, updates: list[JsonObject]) -> None:
        if updates:
            self.editor.publish(session, updates)

    async def restart(self) -> None:
        """Stop running turns and read ``GET /meta`` again on next use."""
        for state in self._sessions.values():
            if state.turn is not None:
                state.turn.cancel()
        self._agent = None

    async def shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._tasks.close()
        await self._http.aclose()


async def _result_or_error(work: Coroutine[Any, Any, str]) -> str | BackendError:
    # An expected failure is a value, so the task owner does not log it as a crash.
    try:
        return await work
    except BackendError as exc:
        return exc
