"""The typed params envelopes of the acp/* requests (pydantic models).

Apart from acp_lsp.protocol (names and codes) because pydantic costs start-up time that
``initialize`` does not need; acp_lsp.protocol re-exports every name here on first use.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

from acp_lsp.protocol import (
    ACP_AUTHENTICATE,
    ACP_CANCEL,
    ACP_CLOSE_SESSION,
    ACP_DELETE_SESSION,
    ACP_EXPORT_SESSION,
    ACP_FORK_SESSION,
    ACP_GET_SESSION,
    ACP_INSTALL_AGENT,
    ACP_LIST_AGENTS,
    ACP_LIST_SESSIONS,
    ACP_LOAD_SESSION,
    ACP_LOGOUT,
    ACP_NEW_SESSION,
    ACP_PROMPT,
    ACP_RENAME_SESSION,
    ACP_RESTART_AGENT,
    ACP_RESTORE_CHECKPOINT,
    ACP_REVIEW_EDIT,
    ACP_REWIND_SESSION,
    ACP_SET_CONFIG_OPTION,
    ACP_SET_FOLLOW,
    ACP_SET_MODE,
    ACP_UPDATE_AGENT,
    JsonObject,
)


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
    queue: bool = False


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
    hunk: int | None = None


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


class RestoreCheckpointParams(Params):
    session_id: str
    message_index: int
    dry_run: bool = False


class RewindSessionParams(Params):
    session_id: str
    message_index: int
    restore_files: bool = False


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
    ACP_RESTORE_CHECKPOINT: RestoreCheckpointParams,
    ACP_REWIND_SESSION: RewindSessionParams,
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
