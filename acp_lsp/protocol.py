"""The acp/* LSP extension: every method name, error code and typed params envelope.

Wire names are camelCase; Python fields are snake_case (pydantic aliases). Agent payloads
(session updates, tool calls, content blocks, snapshots) stay raw JSON dicts end to end, so
results are typed as JSON objects rather than classes that could drop unknown fields.
The JSON Schema in ``docs/acp-lsp.schema.json`` and the TypeScript/Lua mirrors are checked
against this module by the tests.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

JSON = Any
JsonObject = dict[str, Any]

PROTOCOL_VERSION: Final = 1

# -- editor -> server requests -------------------------------------------------------------
ACP_LIST_AGENTS: Final = "acp/listAgents"
ACP_NEW_SESSION: Final = "acp/newSession"
ACP_LIST_SESSIONS: Final = "acp/listSessions"
ACP_LOAD_SESSION: Final = "acp/loadSession"
ACP_GET_SESSION: Final = "acp/getSession"
ACP_PROMPT: Final = "acp/prompt"
ACP_CANCEL: Final = "acp/cancel"
ACP_SET_MODE: Final = "acp/setMode"
ACP_SET_CONFIG_OPTION: Final = "acp/setConfigOption"
ACP_CLOSE_SESSION: Final = "acp/closeSession"
ACP_DELETE_SESSION: Final = "acp/deleteSession"
ACP_SET_FOLLOW: Final = "acp/setFollow"
ACP_REVIEW_EDIT: Final = "acp/reviewEdit"
ACP_AUTHENTICATE: Final = "acp/authenticate"
ACP_RESTART_AGENT: Final = "acp/restartAgent"
ACP_LOGOUT: Final = "acp/logout"
ACP_FORK_SESSION: Final = "acp/forkSession"
ACP_RENAME_SESSION: Final = "acp/renameSession"
ACP_EXPORT_SESSION: Final = "acp/exportSession"
ACP_INSTALL_AGENT: Final = "acp/installAgent"
ACP_UPDATE_AGENT: Final = "acp/updateAgent"

# -- server -> editor notifications --------------------------------------------------------
ACP_SESSION_UPDATE: Final = "acp/sessionUpdate"
ACP_SESSION_STATUS: Final = "acp/sessionStatus"
ACP_TERMINAL_OUTPUT: Final = "acp/terminalOutput"
ACP_ELICITATION_COMPLETE: Final = "acp/elicitationComplete"

# -- server -> editor requests -------------------------------------------------------------
ACP_REQUEST_PERMISSION: Final = "acp/requestPermission"
ACP_SAVE_DOCUMENT: Final = "acp/saveDocument"
ACP_ELICITATION: Final = "acp/elicitation"

EDITOR_REQUESTS: Final = (
    ACP_LIST_AGENTS,
    ACP_NEW_SESSION,
    ACP_LIST_SESSIONS,
    ACP_LOAD_SESSION,
    ACP_GET_SESSION,
    ACP_PROMPT,
    ACP_CANCEL,
    ACP_SET_MODE,
    ACP_SET_CONFIG_OPTION,
    ACP_CLOSE_SESSION,
    ACP_DELETE_SESSION,
    ACP_SET_FOLLOW,
    ACP_REVIEW_EDIT,
    ACP_AUTHENTICATE,
    ACP_RESTART_AGENT,
    ACP_LOGOUT,
    ACP_FORK_SESSION,
    ACP_RENAME_SESSION,
    ACP_EXPORT_SESSION,
    ACP_INSTALL_AGENT,
    ACP_UPDATE_AGENT,
)
SERVER_NOTIFICATIONS: Final = (
    ACP_SESSION_UPDATE,
    ACP_SESSION_STATUS,
    ACP_TERMINAL_OUTPUT,
    ACP_ELICITATION_COMPLETE,
)
SERVER_REQUESTS: Final = (ACP_REQUEST_PERMISSION, ACP_SAVE_DOCUMENT, ACP_ELICITATION)
ALL_METHODS: Final = EDITOR_REQUESTS + SERVER_NOTIFICATIONS + SERVER_REQUESTS

# -- error codes (DESIGN §2) ---------------------------------------------------------------
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
AUTH_REQUIRED: Final = -32000
RESOURCE_NOT_FOUND: Final = -32002  # ACP: fs/read_text_file of a missing file
UNKNOWN_SESSION: Final = -32001
UNKNOWN_AGENT: Final = -32003
TURN_RUNNING: Final = -32004
AGENT_UNAVAILABLE: Final = -32005
NOT_SUPPORTED: Final = -32006
AGENT_ERROR: Final = -32007
REQUEST_CANCELLED: Final = -32800

ERROR_CODES: Final = {
    "invalidParams": INVALID_PARAMS,
    "authRequired": AUTH_REQUIRED,
    "unknownSession": UNKNOWN_SESSION,
    "unknownAgent": UNKNOWN_AGENT,
    "turnRunning": TURN_RUNNING,
    "agentUnavailable": AGENT_UNAVAILABLE,
    "notSupported": NOT_SUPPORTED,
    "agentError": AGENT_ERROR,
}

SessionStatus = Literal[
    "idle", "running", "awaiting_permission", "cancelling", "failed", "closed", "stored"
]
SESSION_STATUSES: Final = (
    "idle",
    "running",
    "awaiting_permission",
    "cancelling",
    "failed",
    "closed",
    "stored",  # a session of the history, not live: read-only until acp/loadSession
)

# Client capability names an editor declares in capabilities.experimental.acp.
CLIENT_CAP_REQUEST_PERMISSION: Final = "requestPermission"
CLIENT_CAP_SAVE_DOCUMENT: Final = "saveDocument"
CLIENT_CAP_ELICITATION: Final = "elicitation"


def server_capability() -> JsonObject:
    """What the server advertises in ``capabilities.experimental.acp``."""
    return {"version": PROTOCOL_VERSION, "agentProtocols": ["acp", "aap"]}


# -- params --------------------------------------------------------------------------------
class Params(BaseModel):
    """Base of every acp/* params model: camelCase on the wire, strict types, extras ignored."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        strict=True,
        extra="ignore",
        frozen=True,
        defer_build=True,  # built on first use: 15 models cost start-up time otherwise
    )


class ListAgentsParams(Params):
    include_registry: bool | None = None


class NewSessionParams(Params):
    agent: str | None = None
    cwd: str | None = None
    additional_directories: list[str] | None = None


class ListSessionsParams(Params):
    agent: str | None = None
    cwd: str | None = None
    query: str | None = None
    cursor: str | None = None
    limit: int | None = None


class LoadSessionParams(Params):
    agent: str | None = None
    session_id: str
    cwd: str | None = None


class SessionIdParams(Params):
    session_id: str


class GetSessionParams(SessionIdParams):
    pass


class CancelParams(SessionIdParams):
    pass


class CloseSessionParams(SessionIdParams):
    pass


class DeleteSessionParams(Params):
    session_id: str
    agent: str | None = None


class PromptParams(Params):
    session_id: str
    prompt: str | list[JsonObject]
    work_done_token: str | int | None = None


class SetModeParams(Params):
    session_id: str
    mode_id: str


class SetConfigOptionParams(Params):
    session_id: str
    config_id: str
    value: str | bool


class SetFollowParams(Params):
    session_id: str
    enabled: bool


class ReviewEditParams(Params):
    session_id: str
    action: Literal["accept", "reject"]
    tool_call_id: str | None = None
    path: str | None = None


class AuthenticateParams(Params):
    agent: str
    method_id: str


class RestartAgentParams(Params):
    agent: str


class LogoutParams(Params):
    agent: str


class ForkSessionParams(SessionIdParams):
    pass


class RenameSessionParams(Params):
    session_id: str
    title: str


class ExportSessionParams(Params):
    session_id: str
    format: Literal["markdown"]


PARAMS_BY_METHOD: Final[dict[str, type[Params]]] = {
    ACP_LIST_AGENTS: ListAgentsParams,
    ACP_NEW_SESSION: NewSessionParams,
    ACP_LIST_SESSIONS: ListSessionsParams,
    ACP_LOAD_SESSION: LoadSessionParams,
    ACP_GET_SESSION: GetSessionParams,
    ACP_PROMPT: PromptParams,
    ACP_CANCEL: CancelParams,
    ACP_SET_MODE: SetModeParams,
    ACP_SET_CONFIG_OPTION: SetConfigOptionParams,
    ACP_CLOSE_SESSION: CloseSessionParams,
    ACP_DELETE_SESSION: DeleteSessionParams,
    ACP_SET_FOLLOW: SetFollowParams,
    ACP_REVIEW_EDIT: ReviewEditParams,
    ACP_AUTHENTICATE: AuthenticateParams,
    ACP_RESTART_AGENT: RestartAgentParams,
    ACP_LOGOUT: LogoutParams,
    ACP_FORK_SESSION: ForkSessionParams,
    ACP_RENAME_SESSION: RenameSessionParams,
    ACP_EXPORT_SESSION: ExportSessionParams,
    ACP_INSTALL_AGENT: RestartAgentParams,
    ACP_UPDATE_AGENT: RestartAgentParams,
}


class ParamsError(ValueError):
    """acp/* params that do not fit their model; the message names every bad field."""


def parse_params(method: str, raw: Any) -> Params:
    """Validate raw JSON params of an acp/* request into its model, or raise ParamsError."""
    model = PARAMS_BY_METHOD[method]
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ParamsError(f"{method}: params must be an object, got {type(raw).__name__}")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise ParamsError(f"{method}: {describe_validation_error(exc)}") from None


def describe_validation_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False):
        field = ".".join(str(p) for p in err["loc"]) or "params"
        parts.append(f"{field}: {err['msg']}")
    return "; ".join(parts)


# -- results and notifications (built as plain JSON; named shapes for readers) -------------
class PermissionOutcomeResult(BaseModel):
    """The answer an editor gives to acp/requestPermission."""

    model_config = ConfigDict(extra="ignore")
    outcome: JsonObject
    reason: str | None = None


def session_update(session_id: str, seq: int, updates: list[JsonObject]) -> JsonObject:
    return {"sessionId": session_id, "seq": seq, "updates": updates}


def session_status(
    session_id: str,
    status: str,
    stop_reason: str | None = None,
    error: JsonObject | None = None,
) -> JsonObject:
    msg: JsonObject = {"sessionId": session_id, "status": status}
    if stop_reason is not None:
        msg["stopReason"] = stop_reason
    if error is not None:
        msg["error"] = error
    return msg
