"""The hub: configured agents, live sessions and the rules of a turn.

It knows no LSP: the editor side is reached through ``EditorPort`` and agents through
``Backend``. One turn at a time per session; cancel is honoured even by agents that ignore it
(after a grace period the turn ends ``cancelled`` and the agent is stopped).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from typing import Any

from acp_lsp import protocol as p
from acp_lsp.backends.base import Backend, BackendError, EditorPort, died_error, gone_error
from acp_lsp.config import AgentConfig, Settings
from acp_lsp.secret_store import SecretStore
from acp_lsp.session import Session
from acp_lsp.tasks import TaskOwner
from acp_lsp.turn_queue import PromptQueue, Turn

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]
BackendFactory = Callable[[str, AgentConfig], Backend]


class Hub:
    def __init__(
        self,
        editor: EditorPort,
        settings: Settings,
        backend_factory: BackendFactory,
        secrets: SecretStore | None = None,
    ) -> None:
        self.editor = editor
        self.settings = settings
        self.secrets = secrets or SecretStore()
        self._factory = backend_factory
        self.backends: dict[str, Backend] = {}
        self.sessions: dict[str, Session] = {}
        self._ids_used: set[str] = set()  # every editor-facing id this server has given
        self.turns: dict[str, Turn] = {}
        self.starting: set[str] = set()  # a prompt is on its way to the agent (disk snapshot)
        self.queue = PromptQueue(self.sessions, editor)  # acp/prompt {queue: true}
        self.tasks = TaskOwner("hub")
        self.workspace_folders: list[str] = []
        self._failed_before_stop: set[str] | None = None  # set once shutdown begins

    # -- configuration ---------------------------------------------------------------------
    def update_settings(self, settings: Settings) -> None:
        """New settings apply to agents started from now on; running ones keep theirs."""
        self.settings = settings

    def default_cwd(self) -> str:
        return self.workspace_folders[0] if self.workspace_folders else os.getcwd()

    def backend(self, agent: str | None) -> Backend:
        name = agent or self.settings.default
        config = self.settings.agents.get(name)
        existing = self.backends.get(name)
        if existing is not None and config is not None:
            if existing.config == config or self._has_live_sessions(name):
                return existing  # changed settings reach a busy agent after acp/restartAgent
            self.backends.pop(name)
            self.tasks.spawn(existing.shutdown(), name=f"stop {name} (settings changed)")
            existing = None
        if config is None:
            raise BackendError(
                p.UNKNOWN_AGENT,
                f"unknown agent {name!r}; configured agents: "
                + ", ".join(sorted(self.settings.agents)),
                {"agents": sorted(self.settings.agents)},
            )
        backend = self._factory(name, config)
        self.backends[name] = backend
        return backend

    def _has_live_sessions(self, agent: str) -> bool:
        return any(
            s.agent == agent and s.status not in ("failed", "closed")
            for s in self.sessions.values()
        )

    def list_agents(self) -> list[JsonObject]:
        default = self.settings.default
        out = []
        for name, config in self.settings.agents.items():
            live = self.backends.get(name)
            if live is not None:
                out.append(live.info().to_json(default=name == default))
            else:
                out.append(
                    {
                        "name": name,
                        "title": config.title or name,
                        "protocol": config.protocol,
                        "default": name == default,
                        "running": False,
                    }
                )
        return out

    # -- sessions --------------------------------------------------------------------------
    def session(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise BackendError(
                p.UNKNOWN_SESSION, f"unknown session {session_id!r}", {"sessionId": session_id}
            )
        return session

    def id_taken(self, session_id: str, *, ever: bool = False) -> bool:
        """In use, or (``ever``) ever used here: a closed session's id is never given again."""
        return session_id in self.sessions or (ever and session_id in self._ids_used)

    def _register(self, session: Session, dead: Session | None = None) -> Session:
        dead = dead or self.sessions.get(session.session_id)  # a session this one follows
        if dead is not None and dead is not session:  # its seq never goes back (editors drop)
            session.seq = max(session.seq, dead.seq)
        self.sessions[session.session_id] = session
        self._ids_used.add(session.session_id)
        return session

    async def new_session(
        self, agent: str | None, cwd: str | None, additional_directories: list[str] | None
    ) -> Session:
        backend = self.backend(agent)
        cwd = os.path.abspath(cwd or self.default_cwd())
        if not os.path.isdir(cwd):
            raise BackendError(p.INVALID_PARAMS, f"cwd: {cwd} is not a directory")
        dirs = [os.path.abspath(d) for d in additional_directories or []]
        session = await backend.new_session(cwd, dirs)
        return self._register(session)

    async def load_session(self, agent: str, session_id: str, cwd: str | None) -> Session:
        backend = self.backend(agent)
        live = self.sessions.get(session_id)
        if live is not None and live.agent == backend.name and live.status != "failed":
            return live
        # A failed session comes back under the id the editor knows, its seq continuing.
        stale = live if live is not None and live.agent == backend.name else None
        if stale is not None:
            self.sessions.pop(session_id, None)
            await self.editor.session_closed(stale)
        default_cwd = stale.cwd if stale is not None else self.default_cwd()
        try:
            session = await backend.load_session(session_id, os.path.abspath(cwd or default_cwd))
        except BaseException:
            if stale is not None:
                self.sessions.setdefault(session_id, stale)
            raise
        return self._register(session, stale)

    async def list_sessions(self, agent: str | None) -> list[JsonObject]:
        backend = self.backend(agent)
        found: dict[str, JsonObject] = {}
        try:
            listed = await backend.list_sessions(None)
        except BackendError as exc:  # the live and stored sessions are listed all the same
            listed = []
            if exc.code != p.NOT_SUPPORTED:  # e.g. authentication required: say why, not "none"
                self.editor.log("warning", f"listing {backend.name!r} sessions: {exc.message}")
        for info in listed:
            sid = info.get("sessionId")
            if isinstance(sid, str):
                entry: JsonObject = {"sessionId": sid, "agent": backend.name, "live": False}
                for key in ("title", "updatedAt", "cwd"):
                    if info.get(key) is not None:
                        entry[key] = info[key]
                found[sid] = entry
        for session in self.sessions.values():
            if session.agent == backend.name:
                entry = found.setdefault(
                    session.session_id, {"sessionId": session.session_id, "agent": backend.name}
                )
                entry["live"] = session.status not in ("failed", "closed")
                entry.setdefault("cwd", session.cwd)
                if session.title:
                    entry["title"] = session.title
        return list(found.values())

    def rekey(self, session: Session, session_id: str) -> None:
        """Give a session the id the editor already knows it by (a stored session resumed)."""
        old = session.session_id
        if old == session_id:
            return
        self.backend(session.agent).rekey(session, session_id)
        self.sessions.pop(old, None)
        session.session_id = session_id
        self._register(session)
        self.editor.rekeyed(session, old)

    async def close_session(self, session_id: str) -> None:
        session = self.session(session_id)
        if session_id in self.turns:
            await self.cancel(session_id)
            await self._wait_turn(session_id)
        try:
            await self.backend(session.agent).close_session(session)
        finally:
            await self.editor.session_closed(session)
            self.editor.set_status(session, "closed")
            self.sessions.pop(session_id, None)

    async def delete_session(
        self, session_id: str, agent: str | None, *, stored: bool = False
    ) -> None:
        """Delete it on the agent's side where offered; with its stored copy just removed
        (``stored``) even when the agent cannot. A live one is not left running."""
        live = self.sessions.get(session_id)
        try:
            backend = self.backend(agent or (live.agent if live else None))
            await backend.delete_session(session_id)
        except BackendError as exc:
            if not stored or exc.code not in (p.NOT_SUPPORTED, p.AGENT_ERROR, p.UNKNOWN_AGENT):
                raise
        if live is not None:
            await self.close_session(session_id)

    # -- turns -----------------------------------------------------------------------------
    async def prompt(
        self,
        session_id: str,
        prompt: str | list[JsonObject],
        work_done_token: str | int | None = None,
    ) -> str:
        session = self.session(session_id)
        if session.status == "closed":  # e.g. an AAP server that no longer has it
            self.sessions.pop(session_id, None)
            raise BackendError(
                p.UNKNOWN_SESSION, f"session {session_id!r} is closed", {"sessionId": session_id}
            )
        if session.status == "failed":
            raise gone_error(session)
        if self.busy(session_id):
            raise BackendError(p.TURN_RUNNING, f"a turn is already running in {session_id!r}")
        blocks = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else prompt
        backend = self.backend(session.agent)
        backend.check_prompt(blocks)  # refused before anything is recorded or shown
        session.begin_turn()
        self.editor.publish(session, session.add_user_prompt(blocks))
        primer, session.primer = session.primer, None
        sent = [*primer, *blocks] if primer else blocks
        self.starting.add(session_id)  # the turn is this prompt's from here: another waits
        try:
            await self.editor.prepare_disk(session)
        finally:
            self.starting.discard(session_id)
        task = self.tasks.spawn(backend.prompt(session, sent), name=f"turn {session_id}")
        turn = self.turns[session_id] = Turn(task)
        self.editor.turn_started(session, work_done_token)
        try:
            return await asyncio.shield(self._finish_turn(session, turn))
        except asyncio.CancelledError:
            # $/cancelRequest on acp/prompt: cancel the turn, answer once it has ended.
            await self.cancel(session_id)
            await self._wait_turn(session_id)
            return "cancelled"

    def busy(self, session_id: str) -> bool:
        """A turn runs, or a prompt is on its way to start one."""
        return session_id in self.turns or session_id in self.starting

    async def _finish_turn(self, session: Session, turn: Turn) -> str:
        error: BackendError | None = None
        stop = "end_turn"
        try:
            stop = await turn.task
        except asyncio.CancelledError:
            stop = "cancelled"
        except BackendError as exc:
            error = exc
        except Exception as exc:  # a backend bug must not leave the turn hanging
            log.exception("turn failed in %s", session.session_id)
            error = BackendError(p.AGENT_ERROR, f"turn failed: {exc}")
        finally:
            if turn.grace is not None:
                turn.grace.cancel()
            self.editor.cancel_permissions(session)
            self.editor.publish(session, session.finish_turn("cancelled"))
            self.turns.pop(session.session_id, None)
            self.queue.turn_ended(session.session_id)
            self.editor.turn_ended(session)
        try:
            await self.editor.settle_disk(session)
        finally:
            turn.done.set()
        if turn.cancel_requested:
            stop, error = "cancelled", None
        if session.status in ("failed", "closed"):
            self.editor.flush(session)
            if error is not None:
                raise died_error(session, error)
            return stop
        if error is not None:
            self.editor.set_status(
                session, "idle", error={"code": error.code, "message": error.message}
            )
            raise error
        self.editor.set_status(session, "idle", stop_reason=stop)
        return stop

    async def _wait_turn(self, session_id: str) -> None:
        turn = self.turns.get(session_id)
        if turn is not None:
            await turn.done.wait()

    async def cancel(self, session_id: str) -> None:
        session = self.session(session_id)
        self.queue.withdraw_all(session_id)
        turn = self.turns.get(session_id)
        if turn is None or turn.cancel_requested:
            return
        turn.cancel_requested = True
        self.editor.set_status(session, "cancelling")
        self.editor.cancel_permissions(session)
        self.editor.publish(session, session.cancel_unfinished())
        backend = self.backend(session.agent)
        try:
            await backend.cancel(session)
        except BackendError as exc:
            log.info("cancel of %s: %s", session_id, exc.message)
        turn.grace = self.tasks.spawn(self._grace(session, turn, backend), name="cancel grace")

    async def _grace(self, session: Session, turn: Turn, backend: Backend) -> None:
        try:
            await asyncio.wait_for(turn.done.wait(), self.settings.cancel_grace_s)
        except TimeoutError:
            turn.grace = None  # the turn ends below: it must not cancel the stop under way
            self.editor.log(
                "warning",
                f"agent {backend.name!r} ignored session/cancel for "
                f"{self.settings.cancel_grace_s:g}s: stopping it",
            )
            try:
                # stopping it fails its pending prompt: the turn ends (cancelled) right here
                await backend.restart()
            except BackendError as exc:  # stopped; starting it again is for the next use
                self.editor.log("warning", exc.message)
            finally:
                turn.task.cancel()

    # -- agents ----------------------------------------------------------------------------
    async def restart_agent(self, agent: str) -> None:
        backend = self.backend(agent)
        await backend.restart()
        if backend.config != self.settings.agents.get(backend.name):
            self.backends.pop(backend.name, None)  # the next use starts it with new settings

    async def authenticate(self, agent: str, method_id: str) -> JsonObject:
        return await self.backend(agent).authenticate(method_id)

    async def logout(self, agent: str) -> None:
        await self.backend(agent).logout()

    async def fork_session(self, session_id: str, at: Session | None = None) -> Session:
        session = self._usable(session_id)
        return self._register(await self.backend(session.agent).fork_session(session, at))

    def _usable(self, session_id: str) -> Session:
        session = self.session(session_id)
        if session.status == "failed":
            raise gone_error(session)
        return session

    async def set_mode(self, session_id: str, mode_id: str) -> None:
        session = self._usable(session_id)
        await self.backend(session.agent).set_mode(session, mode_id)

    async def set_config_option(
        self, session_id: str, config_id: str, value: str | bool
    ) -> list[JsonObject]:
        session = self._usable(session_id)
        return await self.backend(session.agent).set_config_option(session, config_id, value)

    async def shutdown(self) -> None:
        self._failed_before_stop = {sid for sid, s in self.sessions.items() if s.status == "failed"}
        for session_id in list(self.turns):
            with contextlib.suppress(BackendError):
                await self.cancel(session_id)
        for backend in list(self.backends.values()):
            try:
                await backend.shutdown()
            except Exception:
                log.exception("stopping agent %s", backend.name)
        self.settle_stopped()
        await self.tasks.close(timeout=2.0)

    def settle_stopped(self) -> None:
        """Sessions whose agent the end stopped are stored idle, as any end (exit or shutdown)."""
        before = self._failed_before_stop
        if before is None:
            return
        for session in self.sessions.values():
            if session.status == "failed" and session.session_id not in before:
                session.status = "idle"
