"""The acp/* requests an editor sends: agents, sessions, turns, review."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pygls.exceptions import JsonRpcException

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError
from acp_lsp.server import AcpLanguageServer

if TYPE_CHECKING:
    # the session model and the disk side load with the hub, after start-up
    from acp_lsp.editor.checkpoint_restore import CheckpointRestore
    from acp_lsp.session import Session

JsonObject = dict[str, Any]
P = TypeVar("P", bound="p.Params")  # a string: the models load after start-up
Handler = Callable[["AcpLanguageServer", P], Awaitable[JsonObject]]


def _errors(fn: Handler[P]) -> Handler[P]:
    """BackendError -> the JSON-RPC error the editor sees (secrets scrubbed)."""

    @functools.wraps(fn)
    async def wrapper(server: AcpLanguageServer, params: P) -> JsonObject:
        try:
            return await fn(server, params)
        except BackendError as exc:
            raise JsonRpcException(
                message=server.secrets.redact(exc.message),
                code=exc.code,
                data=server.secrets.redact_json(exc.data),
            ) from None

    # pygls evaluates the annotations to see that the first parameter takes the server;
    # leaving the params model out keeps pydantic unloaded until the first acp/* request.
    wrapper.__annotations__ = {"server": AcpLanguageServer}
    return wrapper


def register(server: AcpLanguageServer) -> None:
    feature = server.feature

    @feature(p.ACP_LIST_AGENTS)
    @_errors
    async def list_agents(server: AcpLanguageServer, params: p.ListAgentsParams) -> JsonObject:
        agents = server.hub.list_agents()
        if params.include_registry and server.settings.registry.enabled:
            agents = await server.registry().list_entries(agents)
        return {"agents": agents}

    @feature(p.ACP_NEW_SESSION)
    @_errors
    async def new_session(server: AcpLanguageServer, params: p.NewSessionParams) -> JsonObject:
        await server.prepare_agent(params.agent)
        session = await server.hub.new_session(
            params.agent, params.cwd, params.additional_directories
        )
        return server.editor.announce(session)

    @feature(p.ACP_LOAD_SESSION)
    @_errors
    async def load_session(server: AcpLanguageServer, params: p.LoadSessionParams) -> JsonObject:
        await server.prepare_agent(params.agent)
        if server.settings.history.enabled:
            history = server.history()
            session = await history.resume(params.session_id, params.agent, params.cwd)
        elif params.agent is None:
            raise BackendError(p.INVALID_PARAMS, "acp/loadSession: agent: Field required")
        else:
            session = await server.hub.load_session(params.agent, params.session_id, params.cwd)
        return server.editor.announce(session)

    @feature(p.ACP_LIST_SESSIONS)
    @_errors
    async def list_sessions(server: AcpLanguageServer, params: p.ListSessionsParams) -> JsonObject:
        if params.limit is not None and params.limit < 1:
            raise BackendError(p.INVALID_PARAMS, "acp/listSessions: limit: must be at least 1")
        if not server.settings.history.enabled:
            return {"sessions": await server.hub.list_sessions(params.agent)}
        return await server.history().list_sessions(
            params.agent, params.cwd, params.query, params.cursor, params.limit
        )

    @feature(p.ACP_GET_SESSION)
    @_errors
    async def get_session(server: AcpLanguageServer, params: p.GetSessionParams) -> JsonObject:
        live = server.hub.sessions.get(params.session_id)
        if live is None and server.settings.history.enabled:
            stored = await server.history().snapshot(params.session_id)
            if stored is not None:
                return stored
        return server.editor.snapshot(server.hub.session(params.session_id))

    @feature(p.ACP_PROMPT)
    @_errors
    async def prompt(server: AcpLanguageServer, params: p.PromptParams) -> JsonObject:
        await _live(server, params.session_id)
        hub = server.hub
        hub.session(params.session_id)  # an unknown session is refused before it waits
        if params.queue and not await hub.queue.wait_turn(
            params.session_id, lambda: hub.busy(params.session_id)
        ):
            return {"stopReason": "cancelled"}  # withdrawn: it never reached the agent
        try:
            stop = await hub.prompt(params.session_id, params.prompt, params.work_done_token)
        except BaseException:
            hub.queue.turn_ended(params.session_id)  # no turn started: the next one may go
            raise
        return {"stopReason": stop}

    @feature(p.ACP_CANCEL)
    @_errors
    async def cancel(server: AcpLanguageServer, params: p.CancelParams) -> JsonObject:
        await server.hub.cancel(params.session_id)
        return {}

    @feature(p.ACP_SET_MODE)
    @_errors
    async def set_mode(server: AcpLanguageServer, params: p.SetModeParams) -> JsonObject:
        await server.hub.set_mode(params.session_id, params.mode_id)
        return {}

    @feature(p.ACP_SET_CONFIG_OPTION)
    @_errors
    async def set_config_option(
        server: AcpLanguageServer, params: p.SetConfigOptionParams
    ) -> JsonObject:
        options = await server.hub.set_config_option(
            params.session_id, params.config_id, params.value
        )
        return {"configOptions": options}

    @feature(p.ACP_CLOSE_SESSION)
    @_errors
    async def close_session(server: AcpLanguageServer, params: p.CloseSessionParams) -> JsonObject:
        await server.hub.close_session(params.session_id)
        return {}

    @feature(p.ACP_DELETE_SESSION)
    @_errors
    async def delete_session(
        server: AcpLanguageServer, params: p.DeleteSessionParams
    ) -> JsonObject:
        stored = False
        live = server.hub.sessions.get(params.session_id)
        roots = {c.root for _, c in live.checkpoints.since(0)} if live else set()
        if server.settings.history.enabled:
            roots |= await server.history().checkpoint_roots(params.session_id)
            stored = await server.history().forget(params.session_id)
        await server.hub.delete_session(params.session_id, params.agent, stored=stored)
        await server.editor.disk.drop_checkpoints(params.session_id, roots)
        return {}

    @feature(p.ACP_SET_FOLLOW)
    @_errors
    async def set_follow(server: AcpLanguageServer, params: p.SetFollowParams) -> JsonObject:
        server.hub.session(params.session_id)
        server.editor.follower.set_enabled(params.session_id, params.enabled)
        return {"enabled": params.enabled}

    @feature(p.ACP_REVIEW_EDIT)
    @_errors
    async def review_edit(server: AcpLanguageServer, params: p.ReviewEditParams) -> JsonObject:
        session = server.hub.session(params.session_id)
        return await server.editor.review.decide.review(
            session, params.action, params.tool_call_id, params.path, params.hunk
        )

    @feature(p.ACP_RESTORE_CHECKPOINT)
    @_errors
    async def restore_checkpoint(
        server: AcpLanguageServer, params: p.RestoreCheckpointParams
    ) -> JsonObject:
        session = await _live(server, params.session_id)
        files = await _restorer(server).restore(session, params.message_index, params.dry_run)
        return {"files": files}

    @feature(p.ACP_REWIND_SESSION)
    @_errors
    async def rewind_session(
        server: AcpLanguageServer, params: p.RewindSessionParams
    ) -> JsonObject:
        from acp_lsp.history.rewind import rewind

        await _live(server, params.session_id)
        session, files = await rewind(
            server.hub,
            _restorer(server),
            params.session_id,
            params.message_index,
            params.restore_files,
        )
        snapshot = server.editor.announce(session)
        return snapshot if files is None else {**snapshot, "restoredFiles": files}

    @feature(p.ACP_AUTHENTICATE)
    @_errors
    async def authenticate(server: AcpLanguageServer, params: p.AuthenticateParams) -> JsonObject:
        return await server.hub.authenticate(params.agent, params.method_id)

    @feature(p.ACP_RESTART_AGENT)
    @_errors
    async def restart_agent(server: AcpLanguageServer, params: p.RestartAgentParams) -> JsonObject:
        await server.hub.restart_agent(params.agent)
        return {}

    @feature(p.ACP_LOGOUT)
    @_errors
    async def logout(server: AcpLanguageServer, params: p.LogoutParams) -> JsonObject:
        await server.hub.logout(params.agent)
        return {}

    @feature(p.ACP_FORK_SESSION)
    @_errors
    async def fork_session(server: AcpLanguageServer, params: p.ForkSessionParams) -> JsonObject:
        return server.editor.announce(await server.hub.fork_session(params.session_id))

    @feature(p.ACP_INSTALL_AGENT)
    @_errors
    async def install_agent(server: AcpLanguageServer, params: p.RestartAgentParams) -> JsonObject:
        return await server.registry().install(params.agent)

    @feature(p.ACP_UPDATE_AGENT)
    @_errors
    async def update_agent(server: AcpLanguageServer, params: p.RestartAgentParams) -> JsonObject:
        return await server.registry().update(params.agent, server.hub.restart_agent)


def _restorer(server: AcpLanguageServer) -> CheckpointRestore:
    from acp_lsp.editor.checkpoint_restore import CheckpointRestore

    return CheckpointRestore(server.editor.files, server.editor.disk)


async def _live(server: AcpLanguageServer, session_id: str) -> Session:
    """The live session; a stored one is refused naming acp/loadSession."""
    if (
        session_id not in server.hub.sessions
        and server.settings.history.enabled
        and await server.history().snapshot(session_id) is not None
    ):
        raise BackendError(
            p.UNKNOWN_SESSION,
            f"session {session_id!r} is stored, not live: resume it with acp/loadSession first",
            {"sessionId": session_id},
        )
    return server.hub.session(session_id)
