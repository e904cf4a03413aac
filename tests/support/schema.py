"""Per-method validation of ACP v1 JSON-RPC messages against the official JSON Schema.

The schema's top-level envelope types `method` as a plain string and lets any `params` match
`ExtRequest`, so validating against it proves nothing (reference/acp.md §10). Instead every
message is checked against the `$defs` type its method names: one wrapper schema per type,
`{"$defs": <all $defs>, "$ref": "#/$defs/<Type>"}`, draft 2020-12.

The schema file is `schema/v1/schema.json` of the npm package `@agentclientprotocol/sdk` at the
version `docs/acp-schema-versions.json` records (the newest), installed by
`scripts/fetch-test-peers.sh` (override with env `ACP_SCHEMA_PATH`). Types the stable schema
lacks (unstable methods such as `session/fork`) are looked up in `schema.unstable.json` beside
it.

Directions: the *client* (acp-lsp) sends requests and notifications to an agent and answers
the agent's requests; the *agent* does the reverse. `validate_client_message` checks what the
bridge sends; `validate_agent_message` checks what an agent (e.g. a scripted one) sends.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SCHEMA_PATH = (
    REPO_ROOT / ".cache/peers/ts-sdk-2/node_modules/@agentclientprotocol/sdk/schema/v1/schema.json"
)

# Client → agent requests: method → (params type, result type).
CLIENT_REQUESTS: dict[str, tuple[str, str]] = {
    "initialize": ("InitializeRequest", "InitializeResponse"),
    "authenticate": ("AuthenticateRequest", "AuthenticateResponse"),
    "logout": ("LogoutRequest", "LogoutResponse"),
    "session/new": ("NewSessionRequest", "NewSessionResponse"),
    "session/load": ("LoadSessionRequest", "LoadSessionResponse"),
    "session/list": ("ListSessionsRequest", "ListSessionsResponse"),
    "session/delete": ("DeleteSessionRequest", "DeleteSessionResponse"),
    "session/resume": ("ResumeSessionRequest", "ResumeSessionResponse"),
    "session/close": ("CloseSessionRequest", "CloseSessionResponse"),
    "session/set_mode": ("SetSessionModeRequest", "SetSessionModeResponse"),
    "session/set_config_option": (
        "SetSessionConfigOptionRequest",
        "SetSessionConfigOptionResponse",
    ),
    "session/prompt": ("PromptRequest", "PromptResponse"),
    "session/fork": ("ForkSessionRequest", "ForkSessionResponse"),  # unstable
}
# Client → agent notifications: method → params type.
CLIENT_NOTIFICATIONS: dict[str, str] = {
    "session/cancel": "CancelNotification",
    "$/cancel_request": "CancelRequestNotification",
}
# Agent → client requests: method → (params type, result type).
AGENT_REQUESTS: dict[str, tuple[str, str]] = {
    "session/request_permission": ("RequestPermissionRequest", "RequestPermissionResponse"),
    "fs/read_text_file": ("ReadTextFileRequest", "ReadTextFileResponse"),
    "fs/write_text_file": ("WriteTextFileRequest", "WriteTextFileResponse"),
    "terminal/create": ("CreateTerminalRequest", "CreateTerminalResponse"),
    "terminal/output": ("TerminalOutputRequest", "TerminalOutputResponse"),
    "terminal/wait_for_exit": ("WaitForTerminalExitRequest", "WaitForTerminalExitResponse"),
    "terminal/kill": ("KillTerminalRequest", "KillTerminalResponse"),
    "terminal/release": ("ReleaseTerminalRequest", "ReleaseTerminalResponse"),
    "elicitation/create": ("CreateElicitationRequest", "CreateElicitationResponse"),
}
# Agent → client notifications: method → params type.
AGENT_NOTIFICATIONS: dict[str, str] = {
    "session/update": "SessionNotification",
    "elicitation/complete": "CompleteElicitationNotification",
    "$/cancel_request": "CancelRequestNotification",
}


def schema_path() -> Path:
    """The ACP v1 schema file the tests validate against."""
    override = os.environ.get("ACP_SCHEMA_PATH")
    return Path(override) if override else DEFAULT_SCHEMA_PATH


@functools.cache
def _load_schema(path: str) -> dict[str, Any]:
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(
            f"ACP schema not found at {file}; run scripts/fetch-test-peers.sh "
            "(or point ACP_SCHEMA_PATH at an ACP v1 schema.json)"
        )
    schema: dict[str, Any] = json.loads(file.read_text(encoding="utf-8"))
    return schema


def load_schema() -> dict[str, Any]:
    """The parsed schema (cached per path)."""
    return _load_schema(str(schema_path()))


@functools.cache
def _validator(path: str, type_name: str) -> Draft202012Validator:
    schema = _load_schema(path)
    defs = schema["$defs"]
    unstable = Path(path).with_name("schema.unstable.json")
    if type_name not in defs and unstable.is_file():
        defs = _load_schema(str(unstable))["$defs"]
    if type_name not in defs:
        raise KeyError(f"type {type_name!r} is not in the $defs of {path}")
    wrapper = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": defs,
        "$ref": f"#/$defs/{type_name}",
    }
    return Draft202012Validator(wrapper)


def _where(error: ValidationError, root: str) -> str:
    parts = [root]
    for part in error.absolute_path:
        parts.append(f"[{part}]" if isinstance(part, int) else f".{part}")
    return "".join(parts)


def _describe(error: ValidationError, root: str) -> str:
    """One line per problem; for a failed oneOf/anyOf, explain the branch that was meant."""
    if not error.context:
        return f"{_where(error, root)}: {error.message}"
    branches: dict[Any, list[ValidationError]] = {}
    for sub in error.context:
        key = sub.relative_schema_path[0] if sub.relative_schema_path else None
        branches.setdefault(key, []).append(sub)
    # A branch that failed on a `const` is a discriminator mismatch (another variant).
    viable = [errs for errs in branches.values() if not any(e.validator == "const" for e in errs)]
    if viable:
        closest = min(viable, key=len)
        return "; ".join(_describe(e, root) for e in closest)
    expected = sorted(
        {
            repr(e.validator_value)
            for errs in branches.values()
            for e in errs
            if e.validator == "const"
        }
    )
    inner = best_match(error.context)
    where = _where(inner, root) if inner is not None else _where(error, root)
    got = repr(inner.instance) if inner is not None else "value"
    return f"{where}: {got} matches no variant (expected one of {', '.join(expected)})"


def validate_type(type_name: str, instance: Any, *, what: str = "value") -> None:
    """Validate `instance` against `$defs/<type_name>`; AssertionError naming every problem."""
    validator = _validator(str(schema_path()), type_name)
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    if errors:
        details = "; ".join(_describe(e, what) for e in errors[:5])
        more = f" (+{len(errors) - 5} more)" if len(errors) > 5 else ""
        raise AssertionError(f"{what} is not a valid {type_name}: {details}{more}")


def _check_envelope(msg: Any) -> None:
    if not isinstance(msg, Mapping):
        raise AssertionError(f"JSON-RPC message must be an object, got {type(msg).__name__}")
    if msg.get("jsonrpc") != "2.0":
        raise AssertionError(f'message lacks "jsonrpc": "2.0": {_short(msg)}')
    if "id" in msg and not (msg["id"] is None or isinstance(msg["id"], (int, str))):
        raise AssertionError(f"id must be a string, an integer or null: {_short(msg)}")
    if "id" in msg and isinstance(msg["id"], bool):
        raise AssertionError(f"id must not be a boolean: {_short(msg)}")


def _short(msg: Any, limit: int = 300) -> str:
    text = json.dumps(msg, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def _validate_message(
    msg: Any,
    *,
    sender: str,
    requests: Mapping[str, tuple[str, str]],
    notifications: Mapping[str, str],
    answers: Mapping[str, tuple[str, str]],
    request_method: str | None,
) -> None:
    _check_envelope(msg)
    method = msg.get("method")
    if method is not None:
        if not isinstance(method, str):
            raise AssertionError(f"method must be a string: {_short(msg)}")
        params = msg.get("params")
        if method.startswith("_"):
            if params is not None and not isinstance(params, Mapping):
                raise AssertionError(f"params of extension method {method} must be an object")
            return
        if "id" in msg:
            if method not in requests:
                raise AssertionError(f"{method!r} is not a request the {sender} may send")
            validate_type(requests[method][0], params, what=f"{method} params")
        else:
            if method not in notifications:
                raise AssertionError(f"{method!r} is not a notification the {sender} may send")
            validate_type(notifications[method], params, what=f"{method} params")
        return
    # A response.
    if "id" not in msg:
        raise AssertionError(f"neither a request, a notification nor a response: {_short(msg)}")
    has_result, has_error = "result" in msg, "error" in msg
    if has_result == has_error:
        raise AssertionError(f"a response needs exactly one of result/error: {_short(msg)}")
    if has_error:
        validate_type("Error", msg["error"], what="error")
        return
    if request_method is None or request_method.startswith("_"):
        return
    if request_method not in answers:
        raise AssertionError(f"the {sender} does not answer {request_method!r} requests")
    validate_type(answers[request_method][1], msg["result"], what=f"{request_method} result")


def validate_client_message(msg: Any, request_method: str | None = None) -> None:
    """Validate a JSON-RPC message the client (the bridge) sends to an agent.

    Requests and notifications are checked by their method; a response's `result` is checked
    against the result type of `request_method` (the method of the agent request it answers;
    without it only the envelope and any `error` object are checked). Extension methods
    (`_…`) only need object params.
    """
    _validate_message(
        msg,
        sender="client",
        requests=CLIENT_REQUESTS,
        notifications=CLIENT_NOTIFICATIONS,
        answers=AGENT_REQUESTS,
        request_method=request_method,
    )


def validate_client_response(method: str, result: Any) -> None:
    """Validate the result the client returns for the agent's `method` request."""
    if method not in AGENT_REQUESTS:
        raise AssertionError(f"the client does not answer {method!r} requests")
    validate_type(AGENT_REQUESTS[method][1], result, what=f"{method} result")


def validate_agent_message(msg: Any, request_method: str | None = None) -> None:
    """Validate a JSON-RPC message an agent sends to the client (the mirror of the above)."""
    _validate_message(
        msg,
        sender="agent",
        requests=AGENT_REQUESTS,
        notifications=AGENT_NOTIFICATIONS,
        answers=CLIENT_REQUESTS,
        request_method=request_method,
    )


def validate_agent_response(method: str, result: Any) -> None:
    """Validate the result an agent returns for the client's `method` request."""
    if method not in CLIENT_REQUESTS:
        raise AssertionError(f"the agent does not answer {method!r} requests")
    validate_type(CLIENT_REQUESTS[method][1], result, what=f"{method} result")


class ConversationValidator:
    """Validates a whole conversation, pairing responses with the requests they answer.

    Feed it every frame in order with `from_client` / `from_agent`; each is validated for its
    direction, and responses are checked against the result type of the request whose id
    they carry.
    """

    def __init__(self) -> None:
        self._client_requests: dict[Any, str] = {}
        self._agent_requests: dict[Any, str] = {}
        self.checked = 0

    def from_client(self, msg: Any) -> None:
        method = None
        if isinstance(msg, Mapping) and "method" not in msg and "id" in msg:
            method = self._agent_requests.pop(_id_key(msg["id"]), None)
        validate_client_message(msg, request_method=method)
        if isinstance(msg, Mapping) and "method" in msg and "id" in msg:
            self._client_requests[_id_key(msg["id"])] = msg["method"]
        self.checked += 1

    def from_agent(self, msg: Any) -> None:
        method = None
        if isinstance(msg, Mapping) and "method" not in msg and "id" in msg:
            method = self._client_requests.pop(_id_key(msg["id"]), None)
        validate_agent_message(msg, request_method=method)
        if isinstance(msg, Mapping) and "method" in msg and "id" in msg:
            self._agent_requests[_id_key(msg["id"])] = msg["method"]
        self.checked += 1


def _id_key(value: Any) -> tuple[str, Any]:
    # 1 and "1" are different JSON-RPC ids.
    return (type(value).__name__, value)
