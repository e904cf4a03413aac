"""The editor side: what backends may ask of the editor, implemented over LSP.

It composes the feature pieces (batched updates, permission prompts, follow-along, progress,
buffer-backed files, terminals, review) and is the only place that knows both the session
model and the LSP server.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError, PermissionAnswer
from acp_lsp.editor.batcher import UpdateBatcher
from acp_lsp.editor.disk_sync import DiskSync
from acp_lsp.editor.elicitation import Elicitations
from acp_lsp.editor.files import DocumentFiles
from acp_lsp.editor.follow import Follower
from acp_lsp.editor.follow_lsp import DocumentShower
from acp_lsp.editor.log_limit import LogLimiter
from acp_lsp.editor.permissions import PermissionBroker
from acp_lsp.editor.progress import TurnProgress
from acp_lsp.editor.review import ReviewManager
from acp_lsp.editor.terminal_glue import Terminals
from acp_lsp.sandbox import Sandbox, SandboxError
from acp_lsp.session import Session

if TYPE_CHECKING:
    from acp_lsp.editor.transcript import Transcripts
    from acp_lsp.history.recorder import Recorder
    from acp_lsp.server import AcpLanguageServer

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]

_LOG_TYPES = {
    "error": types.MessageType.Error,
    "warning": types.MessageType.Warning,
    "info": types.MessageType.Info,
    "log": types.MessageType.Log,
}


class EditorSide:
    """Implements ``acp_lsp.backends.base.EditorPort`` for one LSP server."""

    def __init__(self, server: AcpLanguageServer) -> None:
        self.server = server
        settings = server.settings
        self.batcher = UpdateBatcher(
            self._send_updates,
            p.ACP_SESSION_UPDATE,
            settings.flush_ms / 1000,
            min_gap=1 / settings.max_notifications_per_second,
        )
        self.permissions = PermissionBroker(
            self._send_request,
            self._withdraw,
            rules=lambda: self.server.settings.permissions.rules,
            rich_editor=lambda: bool(
                self.server.protocol.client_acp.get(p.CLIENT_CAP_REQUEST_PERMISSION)
            ),
            on_change=self._permission_change,
        )
        self.follower = Follower(
            self._schedule, DocumentShower(server).show, settings.follow_debounce_ms / 1000
        )
        self.follower.default = settings.follow_along
        self.progress = TurnProgress(server)
        self.files = DocumentFiles(
            server,
            save_declared=lambda: bool(
                self.server.protocol.client_acp.get(p.CLIENT_CAP_SAVE_DOCUMENT)
            ),
            save_document=self._save_document,
            notify_user=lambda msg: self.show_message(msg, "warning"),
            review_writes=lambda: self.server.settings.review_writes,
        )
        self.terminals = Terminals(self._send_terminal_output)
        self.elicitations = Elicitations(
            rich_editor=lambda: bool(self.server.protocol.client_acp.get(p.CLIENT_CAP_ELICITATION)),
            send_request=self.server.protocol.send_request_async,
            notify=self.server.protocol.send_notification_raw,
            ask=self._ask,
            say=lambda msg: self.show_message(msg, "warning"),
        )
        tell = lambda: self.server.settings.review.tell_agent  # noqa: E731
        self.review = ReviewManager(self.files, self.publish, self.sandbox, tell)
        self.disk = DiskSync(
            files=self.files,
            review=self.review,
            publish=self.publish,
            notify=self.server.protocol.send_notification_raw,
            warn=lambda msg: self.show_message(msg, "warning"),
            sandbox=self.sandbox,
            enabled=lambda: self.server.settings.track_disk,
            watch=lambda: self.server.settings.watch_files,
            plain=lambda: not any(self.server.protocol.client_acp.values()),
            tasks=self.server.tasks,
        )
        self.logs = LogLimiter()
        self._sessions: dict[str, Session] = {}
        self.recorder: Recorder | None = None  # session history, once the server made it
        self.transcripts: Transcripts | None = None  # plain-LSP transcripts, once asked for

    # -- plumbing --------------------------------------------------------------------------
    def _schedule(self, delay: float, fn: Callable[[], None]) -> asyncio.TimerHandle:
        return asyncio.get_running_loop().call_later(delay, fn)

    def _send_request(self, method: str, params: JsonObject, msg_id: str) -> Awaitable[Any]:
        typed: Any = params  # written now; the awaitable is the answer (permissions.SendRequest)
        if method == types.WINDOW_SHOW_MESSAGE_REQUEST:
            typed = types.ShowMessageRequestParams(
                type=types.MessageType(params["type"]),
                message=params["message"],
                actions=[types.MessageActionItem(title=a["title"]) for a in params["actions"]],
            )
        sent: Awaitable[Any] = self.server.protocol.send_request_async(method, typed, msg_id=msg_id)
        return sent

    def _send_updates(self, method: str, params: JsonObject) -> None:
        self.server.protocol.send_notification_raw(method, params)
        # The history notes what each notification changed (it reads the text itself from the
        # session): once per notification, not once per streamed chunk.
        if self.recorder is not None:
            session = self._sessions.get(params["sessionId"])
            if session is not None:
                self.recorder.observe(session, params["updates"])

    def _withdraw(self, msg_id: str) -> None:
        # raw: pygls would try to unstructure a plain dict as CancelParams and fail
        self.server.protocol.send_notification_raw(types.CANCEL_REQUEST, {"id": msg_id})

    def _send_terminal_output(self, params: JsonObject) -> None:
        self.server.protocol.send_notification_raw(p.ACP_TERMINAL_OUTPUT, params)

    async def _save_document(self, uris: list[str]) -> list[str]:
        result = await self.server.protocol.send_request_async(p.ACP_SAVE_DOCUMENT, {"uris": uris})
        saved = result.get("saved") if isinstance(result, dict) else getattr(result, "saved", None)
        if not isinstance(saved, list):
            return []
        # editors spell URIs differently (percent-encoding, drive letters): compare as paths
        wanted = {to_fs_path(u): u for u in uris}
        return [
            wanted[path] for u in saved if isinstance(u, str) and (path := to_fs_path(u)) in wanted
        ]

    def show_message(self, message: str, level: str = "info") -> None:
        self.server.window_show_message(
            types.ShowMessageParams(
                type=_LOG_TYPES.get(level, types.MessageType.Info), message=message
            )
        )

    def _followable(self, session: Session) -> Callable[[str], bool]:
        """Follow-along never opens a file the agent may not touch.

        The sandbox is built only when a location is worth following: this runs for every
        tool-call update of a turn."""

        def allowed(path: str) -> bool:
            sandbox = self.sandbox(session)
            return sandbox.allow_outside or sandbox.contains(path)

        return allowed

    def sandbox(self, session: Session) -> Sandbox:
        roots = [session.cwd, *self.server.hub.workspace_folders, *session.additional_directories]
        return Sandbox(roots, allow_outside=self.server.settings.fs.allow_outside_workspace)

    def resolve(self, session: Session, path: str) -> str:
        try:
            return self.sandbox(session).resolve(path)
        except SandboxError as exc:
            raise BackendError(p.INVALID_PARAMS, str(exc), {"path": path}) from None

    # -- EditorPort: updates and status ----------------------------------------------------
    def publish(self, session: Session, updates: list[JsonObject]) -> None:
        if not updates:
            return
        self._sessions[session.session_id] = session
        for update in updates:
            if update.get("sessionUpdate") == "tool_call":
                state = update.get("toolCall")
                if isinstance(state, dict):
                    followed = state
                    if "content" not in state and state.get("kind") == "edit":
                        # content unchanged (not resent): an edit is followed by its diff
                        followed = session.tool_call(state["toolCallId"]) or state
                    self.follower.on_tool_call(
                        session.session_id, followed, allowed=self._followable(session)
                    )
                    self.progress.report(session.session_id, state)
                    self.review.on_tool_call(session, state)
                    self.disk.tool_call(session, state)
        self.batcher.publish(session, updates)
        if self.transcripts is not None:
            self.transcripts.observe(session, updates)

    def flush(self, session: Session) -> None:
        self.batcher.flush(session)

    def hold(self, session: Session) -> None:
        self._sessions[session.session_id] = session
        self.batcher.hold(session)

    def announce(self, session: Session) -> JsonObject:
        """The snapshot for the response that first names the session; releases it after."""
        snapshot = self.snapshot(session)
        self.batcher.release_after_response(session, self.server.protocol.after_response)
        self.disk.session_started(session)
        if self.server.settings.history.enabled:
            backend = self.server.hub.backends.get(session.agent)
            agent_sid = backend.agent_session_id(session) if backend else None
            self.server.history().recorder.track(
                session, agent_sid, backend.protocol if backend else None
            )
        return snapshot

    def rekeyed(self, session: Session, old_id: str) -> None:
        self.batcher.rekey(session, old_id)
        if self._sessions.pop(old_id, None) is not None:
            self._sessions[session.session_id] = session

    def snapshot(self, session: Session) -> JsonObject:
        self.batcher.flush(session)
        for terminal_id in self.terminals.of_session(session.session_id):
            out = self.terminals.manager.output(terminal_id)
            session.set_terminal(
                terminal_id, out["output"], bool(out.get("truncated")), out.get("exitStatus")
            )
        return session.snapshot()

    def set_status(
        self,
        session: Session,
        status: str,
        stop_reason: str | None = None,
        error: JsonObject | None = None,
    ) -> None:
        session.status = status
        self.batcher.flush(session)
        if self.recorder is not None:
            self.recorder.changed(session)
        if error is not None:
            error = self.server.secrets.redact_json(error)
        params = p.session_status(session.session_id, status, stop_reason, error, session.queued)
        self.server.protocol.send_notification_raw(p.ACP_SESSION_STATUS, params)
        if status == "failed" and self.terminals.of_session(session.session_id):
            # the agent is gone and nobody can release its terminals any more
            self.server.tasks.spawn(
                self.terminals.release_session(session.session_id), name="reap terminals"
            )

    def log(self, level: str, message: str) -> None:
        message = self.server.secrets.redact(message)
        log.info("%s", message)
        ok, dropped = self.logs.allow()
        if not ok:
            return
        if dropped:
            message = f"({dropped} log lines dropped) {message}"
        self.server.window_log_message(
            types.LogMessageParams(
                type=_LOG_TYPES.get(level, types.MessageType.Log), message=message
            )
        )

    async def _ask(self, message: str, actions: list[str]) -> str | None:
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Info,
            message=message,
            actions=[types.MessageActionItem(title=a) for a in actions],
        )
        item = await self.server.window_show_message_request_async(params)
        return item.title if item is not None else None

    def agent_starting(self, agent: str) -> None:
        self.server.tasks.spawn(
            self.progress.begin(f"start:{agent}", agent, None, title=f"Starting {agent}"),
            name="start progress",
        )

    def agent_started(self, agent: str) -> None:
        self.progress.end(f"start:{agent}")

    async def elicit(self, session: Session | None, agent: str, request: JsonObject) -> JsonObject:
        return await self.elicitations.elicit(
            session.session_id if session else None, agent, request
        )

    def elicitation_complete(
        self, session: Session | None, agent: str, elicitation_id: str
    ) -> None:
        self.elicitations.complete(session.session_id if session else None, agent, elicitation_id)

    def turn_started(self, session: Session, work_done_token: str | int | None) -> None:
        self.review.turn_started(session)
        self.set_status(session, "running")
        self.server.tasks.spawn(
            self.progress.begin(session.session_id, session.agent, work_done_token), name="progress"
        )

    def turn_ended(self, session: Session) -> None:
        self.progress.end(session.session_id)

    async def prepare_disk(self, session: Session) -> None:
        await self.disk.turn_started(session)

    async def settle_disk(self, session: Session) -> None:
        await self.disk.turn_ended(session)

    def _permission_change(self, session: Session, pending: int) -> None:
        if session.status in ("running", "awaiting_permission"):
            want = "awaiting_permission" if pending else "running"
            if session.status != want:
                self.set_status(session, want)

    def cancel_permissions(self, session: Session) -> None:
        self.permissions.cancel_session(session.session_id)

    async def session_closed(self, session: Session) -> None:
        self.permissions.cancel_session(session.session_id)
        self.follower.forget(session.session_id)
        self.files.forget_session(session.session_id)
        self.review.forget(session.session_id)
        self.disk.forget(session.session_id)
        await self.terminals.release_session(session.session_id)
        self.batcher.forget(session)
        self._sessions.pop(session.session_id, None)

    # -- EditorPort: what agents ask -------------------------------------------------------
    def note_paths(self, session: Session, paths: Sequence[str]) -> None:
        for path in paths:
            if isinstance(path, str) and path.startswith("/"):
                try:
                    real = self.sandbox(session).resolve(path)
                except SandboxError:
                    continue
                self.review.note_path(session, path, real)

    async def request_permission(
        self,
        session: Session,
        tool_call: JsonObject,
        options: list[JsonObject],
        unasked: PermissionAnswer | None = None,
    ) -> PermissionAnswer:
        return await self.permissions.ask(session, tool_call, options, unasked)

    async def read_text_file(
        self, session: Session, path: str, line: int | None, limit: int | None
    ) -> str:
        real = self.resolve(session, path)
        return self.files.read(session.session_id, real, line, limit)

    async def write_text_file(self, session: Session, path: str, content: str) -> None:
        real = self.resolve(session, path)
        self.review.note_path(session, path, real)
        write = self.files.write(session.session_id, real, content, f"{session.agent}: edit {path}")
        await self.review.fs_write(session, real, write)

    async def create_terminal(
        self,
        session: Session,
        command: str,
        args: list[str],
        env: dict[str, str],
        cwd: str | None,
        output_byte_limit: int | None,
    ) -> str:
        real_cwd = self.resolve(session, cwd or session.cwd)
        return await self.terminals.create(
            session.session_id, command, args, env, real_cwd, output_byte_limit
        )

    def terminal_output(self, session: Session, terminal_id: str) -> JsonObject:
        return self.terminals.output(session.session_id, terminal_id)

    async def wait_for_terminal_exit(self, session: Session, terminal_id: str) -> JsonObject:
        return await self.terminals.wait_for_exit(session.session_id, terminal_id)

    async def kill_terminal(self, session: Session, terminal_id: str) -> None:
        await self.terminals.kill(session.session_id, terminal_id)

    async def release_terminal(self, session: Session, terminal_id: str) -> None:
        await self.terminals.release(session.session_id, terminal_id)

    async def close(self) -> None:
        self.permissions.cancel_all()
        self.batcher.flush_all()
        self.batcher.close()
        await self.terminals.close()
