"""The acp/* LSP extension: every method name, error code and typed params envelope.

Wire names are camelCase; Python fields are snake_case (pydantic aliases). Agent payloads
(session updates, tool calls, content blocks, snapshots) stay raw JSON dicts end to end, so
results are typed as JSON objects rather than classes that could drop unknown fields.
The JSON Schema in ``docs/acp-lsp.schema.json`` and the TypeScript/Lua mirrors are checked
against this module by the tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal

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
ACP_RESTORE_CHECKPOINT: Final = "acp/restoreCheckpoint"
ACP_REWIND_SESSION: Final = "acp/rewindSession"

# -- server -> editor notifications --------------------------------------------------------
ACP_SESSION_UPDATE: Final = "acp/sessionUpdate"
ACP_SESSION_STATUS: Final = "acp/sessionStatus"
ACP_TERMINAL_OUTPUT: Final = "acp/terminalOutput"
ACP_ELICITATION_COMPLETE: Final = "acp/elicitationComplete"
ACP_DOCUMENTS_SYNCED: Final = "acp/documentsSynced"

# -- server -> editor requests -------------------------------------------------------------
ACP_REQUEST_PERMISSION: Final = "acp/requestPermission"
ACP_SAVE_DOCUMENT: Final = "acp/saveDocument"
ACP_ELICITATION: Final = "acp/elicitation"
ACP_EDITOR_TOOL: Final = "acp/editorTool"

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
    ACP_RESTORE_CHECKPOINT,
    ACP_REWIND_SESSION,
)
SERVER_NOTIFICATIONS: Final = (
    ACP_SESSION_UPDATE,
    ACP_SESSION_STATUS,
    ACP_TERMINAL_OUTPUT,
    ACP_ELICITATION_COMPLETE,
    ACP_DOCUMENTS_SYNCED,
)
SERVER_REQUESTS: Final = (
    ACP_REQUEST_PERMISSION,
    ACP_SAVE_DOCUMENT,
    ACP_ELICITATION,
    ACP_EDITOR_TOOL,
)
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
CLIENT_CAP_EDITOR_TOOLS: Final = "editorTools"  # the list of acp/editorTool tools it answers


def server_capability() -> JsonObject:
    """What the server advertises in ``capabilities.experimental.acp``."""
    return {"version": PROTOCOL_VERSION, "agentProtocols": ["acp", "aap"]}


# -- params: pydantic models in acp_lsp.protocol_params, loaded on first use -----------------
PARAMS_NAMES: Final = frozenset(
    {
        "Params",
        "ListAgentsParams",
        "NewSessionParams",
        "ListSessionsParams",
        "LoadSessionParams",
        "SessionIdParams",
        "GetSessionParams",
        "CancelParams",
        "CloseSessionParams",
        "DeleteSessionParams",
        "PromptParams",
        "SetModeParams",
        "SetConfigOptionParams",
        "SetFollowParams",
        "ReviewEditParams",
        "AuthenticateParams",
        "RestartAgentParams",
        "LogoutParams",
        "ForkSessionParams",
        "RenameSessionParams",
        "ExportSessionParams",
        "RestoreCheckpointParams",
        "RewindSessionParams",
        "PARAMS_BY_METHOD",
        "ParamsError",
        "parse_params",
        "describe_validation_error",
        "PermissionOutcomeResult",
    }
)

if TYPE_CHECKING:  # explicit re-exports, for readers and mypy
    from acp_lsp.protocol_params import (  # noqa: I001 (one block of "X as X" re-exports)
        Params as Params,
        ListAgentsParams as ListAgentsParams,
        NewSessionParams as NewSessionParams,
        ListSessionsParams as ListSessionsParams,
        LoadSessionParams as LoadSessionParams,
        SessionIdParams as SessionIdParams,
        GetSessionParams as GetSessionParams,
        CancelParams as CancelParams,
        CloseSessionParams as CloseSessionParams,
        DeleteSessionParams as DeleteSessionParams,
        PromptParams as PromptParams,
        SetModeParams as SetModeParams,
        SetConfigOptionParams as SetConfigOptionParams,
        SetFollowParams as SetFollowParams,
        ReviewEditParams as ReviewEditParams,
        AuthenticateParams as AuthenticateParams,
        RestartAgentParams as RestartAgentParams,
        LogoutParams as LogoutParams,
        ForkSessionParams as ForkSessionParams,
        RenameSessionParams as RenameSessionParams,
        ExportSessionParams as ExportSessionParams,
        RestoreCheckpointParams as RestoreCheckpointParams,
        RewindSessionParams as RewindSessionParams,
        PARAMS_BY_METHOD as PARAMS_BY_METHOD,
        ParamsError as ParamsError,
        parse_params as parse_params,
        describe_validation_error as describe_validation_error,
        PermissionOutcomeResult as PermissionOutcomeResult,
    )
else:

    def __getattr__(name: str) -> Any:
        # pydantic is imported when a params model is first needed, not at start-up
        if name in PARAMS_NAMES:
            from acp_lsp import protocol_params

            value = getattr(protocol_params, name)
            globals()[name] = value  # later reads skip this function
            return value
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def session_update(session_id: str, seq: int, updates: list[JsonObject]) -> JsonObject:
    return {"sessionId": session_id, "seq": seq, "updates": updates}


def session_status(
    session_id: str,
    status: str,
    stop_reason: str | None = None,
    error: JsonObject | None = None,
    queued: int | None = None,
) -> JsonObject:
    msg: JsonObject = {"sessionId": session_id, "status": status}
    if stop_reason is not None:
        msg["stopReason"] = stop_reason
    if error is not None:
        msg["error"] = error
    if queued is not None:  # once the session has queued a prompt (DESIGN §2)
        msg["queued"] = queued
    return msg
