"""What every agent backend implements, and what it may ask of the editor side.

A backend speaks one agent protocol (ACP over stdio, AAP over HTTP) and nothing else. It turns
the agent's messages into session updates and the session's requests into protocol calls.
What an agent asks of the editor (read or write a file, run a terminal, a permission) goes
through ``EditorPort``, which the editor side implements; backends never import it.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from acp_lsp.protocol import AGENT_UNAVAILABLE

if TYPE_CHECKING:
    from acp_lsp.session import Session

JsonObject = dict[str, Any]


class BackendError(Exception):
    """A failure the editor should see as an acp/* error (code from acp_lsp.protocol)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


# a session whose agent is gone comes back with one request: it starts the agent again
RECOVERY = "; acp/loadSession brings the session back"


def gone_error(session: Session) -> BackendError:
    """What a request to a session whose agent is gone is told."""
    return BackendError(
        AGENT_UNAVAILABLE,
        f"session {session.session_id!r} failed: agent {session.agent!r} is gone"
        f"{RECOVERY}, starting the agent again (no acp/restartAgent needed)",
    )


def died_error(session: Session, error: BackendError) -> BackendError:
    """A turn's error; when the agent died under it, with the way back."""
    if session.status != "failed" or error.code != AGENT_UNAVAILABLE:
        return error
    return BackendError(error.code, error.message + RECOVERY, error.data)


@dataclass
class PermissionAnswer:
    """The editor's (or a rule's) answer to a permission request.

    ``outcome`` is ACP's RequestPermissionOutcome: ``{"outcome": "selected", "optionId": ...}``
    or ``{"outcome": "cancelled"}``. ``reason`` is free text an editor may give on reject.
    """

    outcome: JsonObject
    reason: str | None = None

    @property
    def option_id(self) -> str | None:
        if self.outcome.get("outcome") == "selected":
            value = self.outcome.get("optionId")
            return value if isinstance(value, str) else None
        return None


class EditorPort(Protocol):
    """Services the editor side offers to backends. All paths are absolute file paths."""

    def publish(self, session: Session, updates: list[JsonObject]) -> None:
        """Forward editor-facing session updates (batched and ordered by the editor side)."""

    def set_status(
        self,
        session: Session,
        status: str,
        stop_reason: str | None = None,
        error: JsonObject | None = None,
    ) -> None:
        """Change the session status and tell the editor (acp/sessionStatus)."""

    def log(self, level: str, message: str) -> None:
        """Forward a diagnostic line to the editor (window/logMessage, rate-limited)."""

    def flush(self, session: Session) -> None:
        """Send every queued update of the session now."""

    def hold(self, session: Session) -> None:
        """A session the editor does not know yet: queue its updates until it is announced."""

    def agent_starting(self, agent: str) -> None:
        """An agent process is starting (a first npx run may download it for minutes)."""

    def agent_started(self, agent: str) -> None:
        """The start finished, well or not."""

    async def elicit(self, session: Session | None, agent: str, request: JsonObject) -> JsonObject:
        """Ask the user an agent's structured question (ACP elicitation/create)."""
        ...

    def elicitation_complete(
        self, session: Session | None, agent: str, elicitation_id: str
    ) -> None:
        """A URL elicitation finished on the agent's side."""

    def rekeyed(self, session: Session, old_id: str) -> None:
        """The session's id changed from ``old_id`` (before the editor was told of it)."""

    def turn_started(self, session: Session, work_done_token: str | int | None) -> None:
        """A turn begins: status ``running``, work-done progress."""

    def turn_ended(self, session: Session) -> None:
        """The turn is over (progress ends)."""

    async def prepare_disk(self, session: Session) -> None:
        """Before a turn: the snapshot its disk changes are found against (time-capped)."""

    async def settle_disk(self, session: Session) -> None:
        """After a turn: what the agent changed on disk reaches open buffers and the review."""

    def cancel_permissions(self, session: Session) -> None:
        """Answer every pending permission prompt of the session ``cancelled``."""

    async def session_closed(self, session: Session) -> None:
        """Release what the editor side holds for the session (terminals, follow, review)."""

    def note_paths(self, session: Session, paths: Sequence[str]) -> None:
        """A tool call, permission or fs call of the running turn names these paths.

        The editor side snapshots each file the first time a turn names it (for review)."""

    async def request_permission(
        self,
        session: Session,
        tool_call: JsonObject,
        options: list[JsonObject],
        unasked: PermissionAnswer | None = None,
    ) -> PermissionAnswer:
        """Apply a configured rule, else answer ``unasked`` when given, else ask the editor.
        Never raises for a dismissed prompt."""

    async def read_text_file(
        self, session: Session, path: str, line: int | None, limit: int | None
    ) -> str:
        """The text the user sees (open buffer first, else disk). Raises BackendError."""

    async def write_text_file(self, session: Session, path: str, content: str) -> None:
        """Write through the editor's buffers (workspace/applyEdit). Raises BackendError."""

    async def create_terminal(
        self,
        session: Session,
        command: str,
        args: list[str],
        env: dict[str, str],
        cwd: str | None,
        output_byte_limit: int | None,
    ) -> str:
        """Start a terminal for the session; returns its id. Raises BackendError."""

    def terminal_output(self, session: Session, terminal_id: str) -> JsonObject: ...

    async def wait_for_terminal_exit(self, session: Session, terminal_id: str) -> JsonObject: ...

    async def kill_terminal(self, session: Session, terminal_id: str) -> None: ...

    async def release_terminal(self, session: Session, terminal_id: str) -> None: ...


@dataclass
class AgentInfo:
    """What acp/listAgents shows about one configured agent."""

    name: str
    title: str
    protocol: str
    running: bool
    auth_methods: list[JsonObject] | None = None
    extra: JsonObject = field(default_factory=dict)

    def to_json(self, default: bool) -> JsonObject:
        out: JsonObject = {
            "name": self.name,
            "title": self.title,
            "protocol": self.protocol,
            "default": default,
            "running": self.running,
        }
        if self.auth_methods:
            out["authMethods"] = self.auth_methods
        out.update(self.extra)
        return out


class Backend(abc.ABC):
    """One configured agent. Sessions it creates are owned by the hub, driven through here.

    Contract for ``prompt``: apply every update of the turn to the session and pass the
    editor-facing updates to ``EditorPort.publish`` before returning the stop reason.
    ``cancel`` must make a running ``prompt`` return promptly (the hub enforces a grace period
    and reports the turn ``cancelled`` whatever the backend answers).
    """

    protocol: str = ""

    config: Any = None  # the AgentConfig it was built with (settings changes compare it)

    def __init__(self, name: str, editor: EditorPort) -> None:
        self.name = name
        self.editor = editor

    @abc.abstractmethod
    def info(self) -> AgentInfo: ...

    @abc.abstractmethod
    async def new_session(self, cwd: str, additional_directories: list[str]) -> Session: ...

    @abc.abstractmethod
    async def load_session(self, session_id: str, cwd: str) -> Session: ...

    @abc.abstractmethod
    async def list_sessions(self, cwd: str | None) -> list[JsonObject]:
        """[{sessionId, title?, updatedAt?, cwd?}] as the agent reports them."""

    @abc.abstractmethod
    async def prompt(self, session: Session, blocks: list[JsonObject]) -> str:
        """Run one turn; return the agent's stop reason. Raises BackendError on failure."""

    @abc.abstractmethod
    async def cancel(self, session: Session) -> None: ...

    def check_prompt(self, blocks: list[JsonObject]) -> None:
        """Raise BackendError for content the agent cannot take (before the turn starts)."""
        return None

    async def set_mode(self, session: Session, mode_id: str) -> None:
        raise BackendError(-32006, f"agent {self.name!r} does not support modes")

    async def keep_mode(self, session: Session, before: JsonObject | None) -> None:
        """Set the mode the user chose (``before``: the modes they had) again where the
        session came back in another: Codex resumes in its default mode (full-access came
        back read-only), a session primed from the transcript starts in the agent's."""
        wanted = before.get("currentModeId") if before else None
        now = session.modes
        if not isinstance(wanted, str) or now is None or now.get("currentModeId") == wanted:
            return
        available = now.get("availableModes")
        if isinstance(available, list) and any(
            isinstance(m, dict) and m.get("id") == wanted for m in available
        ):
            try:
                await self.set_mode(session, wanted)
            except BackendError as exc:
                self.editor.log("warning", f"[{self.name}] mode {wanted!r} not restored: {exc}")

    async def set_config_option(
        self, session: Session, config_id: str, value: str | bool
    ) -> list[JsonObject]:
        raise BackendError(-32006, f"agent {self.name!r} does not support config options")

    async def close_session(self, session: Session) -> None:
        """Stop tracking; free agent-side resources where the protocol offers it."""
        return None

    async def delete_session(self, session_id: str) -> None:
        raise BackendError(-32006, f"agent {self.name!r} does not support deleting sessions")

    async def authenticate(self, method_id: str) -> JsonObject:
        raise BackendError(-32006, f"agent {self.name!r} has no authentication methods")

    def rekey(self, session: Session, session_id: str) -> None:
        """The session is about to be known to the editor as ``session_id``."""
        raise BackendError(-32006, f"agent {self.name!r} cannot rename sessions")

    def agent_session_id(self, session: Session) -> str:
        """The id the agent knows the session by."""
        return session.session_id

    async def logout(self) -> None:
        raise BackendError(-32006, f"agent {self.name!r} does not support logout")

    async def fork_session(self, session: Session, at: Session | None = None) -> Session:
        """A copy of ``session`` in the agent; with ``at`` (its conversation cut after an
        agent message), a copy up to that message (``Session.fork_point``)."""
        raise BackendError(-32006, f"agent {self.name!r} cannot fork sessions")

    async def restart(self) -> None:
        """Stop the agent (its live sessions fail) so the next use starts it again."""
        return None

    @abc.abstractmethod
    async def shutdown(self) -> None:
        """Stop everything this backend runs; idempotent."""
