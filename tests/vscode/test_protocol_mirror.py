"""editors/vscode/src/protocol.ts mirrors acp_lsp/protocol.py and docs/acp-lsp.schema.json.

The TypeScript file is read as text: every `new RequestType<P, R, void>("acp/…")` and
`new NotificationType<P>("acp/…")` is extracted with its type names, and the interfaces of
src/model/types.ts with their fields. A method added, renamed or moved on either side, a
params/result type that differs from the schema's, or a field the schema has and the mirror
lacks (or the other way round) fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from acp_lsp import protocol

REPO = Path(__file__).resolve().parents[2]
PROTOCOL_TS = REPO / "editors" / "vscode" / "src" / "protocol.ts"
TYPES_TS = REPO / "editors" / "vscode" / "src" / "model" / "types.ts"
SCHEMA = REPO / "docs" / "acp-lsp.schema.json"

_MESSAGE = re.compile(
    r"new\s+(RequestType|NotificationType)<\s*(\w+)\s*(?:,\s*(\w+)\s*,\s*void\s*)?>\(\s*\"(acp/\w+)\"",
)
_GROUP = re.compile(
    r"export const (EDITOR_REQUESTS|SERVER_NOTIFICATIONS|SERVER_REQUESTS) = \[([^\]]*)\]"
)
_INTERFACE = re.compile(r"export interface (\w+)(?: extends [\w, ]+)? \{\n(.*?)\n\}", re.S)
_FIELD = re.compile(r"^  (?:readonly )?(\w+)(\??):", re.M)


def _messages() -> dict[str, tuple[str, str, str | None]]:
    text = PROTOCOL_TS.read_text(encoding="utf-8")
    found: dict[str, tuple[str, str, str | None]] = {}
    for kind, params, result, method in _MESSAGE.findall(text):
        assert method not in found, f"{method} declared twice in protocol.ts"
        found[method] = (kind, params, result or None)
    return found


def _groups() -> dict[str, list[str]]:
    """The method lists of protocol.ts, by the names of the message constants they hold."""
    text = PROTOCOL_TS.read_text(encoding="utf-8")
    constants = dict(re.findall(r"export const (\w+) = new \w+<[^>]*>\(\s*\"(acp/\w+)\"", text))
    groups = {}
    for name, body in _GROUP.findall(text):
        groups[name] = [constants[c.strip()] for c in body.split(",") if c.strip()]
    return groups


def _interfaces() -> dict[str, dict[str, bool]]:
    """TypeScript interface name -> {field: required}."""
    text = TYPES_TS.read_text(encoding="utf-8")
    return {
        name: {field: not optional for field, optional in _FIELD.findall(body)}
        for name, body in _INTERFACE.findall(text)
    }


def _schema() -> dict[str, object]:
    return json.loads(SCHEMA.read_text(encoding="utf-8"))


def test_method_lists_match_protocol_py() -> None:
    groups = _groups()
    assert groups["EDITOR_REQUESTS"] == list(protocol.EDITOR_REQUESTS)
    assert groups["SERVER_NOTIFICATIONS"] == list(protocol.SERVER_NOTIFICATIONS)
    assert groups["SERVER_REQUESTS"] == list(protocol.SERVER_REQUESTS)
    assert set(_messages()) == set(protocol.ALL_METHODS)


def test_requests_and_notifications_are_typed_as_such() -> None:
    messages = _messages()
    for method in (*protocol.EDITOR_REQUESTS, *protocol.SERVER_REQUESTS):
        assert messages[method][0] == "RequestType", method
        assert messages[method][2] is not None, f"{method} has no result type"
    for method in protocol.SERVER_NOTIFICATIONS:
        assert messages[method][0] == "NotificationType", method


def test_params_and_result_types_are_the_schemas() -> None:
    methods = _schema()["methods"]
    assert isinstance(methods, dict)
    for method, (_, params, result) in _messages().items():
        entry = methods[method]
        assert params == entry["params"], f"{method} params: {params} vs schema {entry['params']}"
        assert result == entry.get("result"), f"{method} result: {result} vs {entry.get('result')}"
        expected_kind = "notification" if method in protocol.SERVER_NOTIFICATIONS else "request"
        assert entry["kind"] == expected_kind, method


@pytest.mark.parametrize(
    "type_name",
    sorted(
        {t for _, p, r in _messages().values() for t in (p, r) if t}
        | {"SessionSnapshot", "ToolCallState", "Message", "AgentSummary", "SessionInfo"}
        | {"PermissionOption"}
    ),
)
def test_interface_fields_match_the_schema(type_name: str) -> None:
    defs = _schema()["$defs"]
    assert isinstance(defs, dict)
    definition = defs[type_name]
    interfaces = _interfaces()
    properties = set((definition.get("properties") or {}).keys())
    required = set(definition.get("required") or [])
    if type_name not in interfaces:
        # A type alias (Record<string, never> and the like) stands for an empty object.
        assert not properties, f"{type_name} has fields in the schema but no interface in types.ts"
        return
    fields = interfaces[type_name]
    assert set(fields) == properties, (
        f"{type_name}: types.ts {sorted(fields)} vs schema {sorted(properties)}"
    )
    ts_required = {f for f, req in fields.items() if req}
    assert ts_required == required, (
        f"{type_name} required: {sorted(ts_required)} vs {sorted(required)}"
    )


def test_error_codes_match() -> None:
    text = PROTOCOL_TS.read_text(encoding="utf-8")
    body = re.search(r"export const ErrorCodes = \{(.*?)\} as const", text, re.S)
    assert body is not None
    codes = {k: int(v) for k, v in re.findall(r"(\w+): (-?\d+)", body.group(1))}
    for name, code in protocol.ERROR_CODES.items():
        assert codes.get(name) == code, name
    assert codes["requestCancelled"] == protocol.REQUEST_CANCELLED


def test_client_capability_names_match() -> None:
    text = PROTOCOL_TS.read_text(encoding="utf-8")
    caps = re.search(r"CLIENT_CAPABILITIES = \{(.*?)\}", text, re.S)
    assert caps is not None
    names = set(re.findall(r"(\w+): true", caps.group(1)))
    assert names == {
        protocol.CLIENT_CAP_REQUEST_PERMISSION,
        protocol.CLIENT_CAP_SAVE_DOCUMENT,
        protocol.CLIENT_CAP_ELICITATION,
    }
    schema_caps = _schema()["clientCapability"]
    assert isinstance(schema_caps, dict)
    assert names == set(schema_caps["experimental.acp"])
