"""How a failed agent request is worded for the user (acp_start.call_error / agent_reason):
the agent's message, or the reason in its data when the message is only "Internal error"."""

from __future__ import annotations

import json

import pytest

from acp_lsp import protocol as p
from acp_lsp.backends.acp_start import agent_reason, call_error
from acp_lsp.backends.base import BackendError
from acp_lsp.backends.wire import RpcError
from acp_lsp.secret_store import SecretStore

QWEN_401 = "401 Incorrect API key provided: sk-scripted."


@pytest.mark.parametrize(
    ("message", "data", "reason"),
    [
        # Qwen Code: the model API's error in data.details
        ("Internal error", {"details": QWEN_401}, QWEN_401),
        # Claude: the reason is in the message already; data only classifies it
        ("Internal error: API Error: 500", {"errorKind": "server_error"}, "API Error: 500"),
        (
            "Invalid params",
            {"error": {"message": "cwd must be absolute"}},
            "Invalid params: cwd must be absolute",
        ),
        ("Internal error", "socket hang up", "socket hang up"),
        ("Internal error: ", None, "Internal error:"),
        ("Internal error", None, "Internal error"),
        ("Internal error", {"details": "  "}, "Internal error"),
        (
            "Session is busy processing a turn",
            {"details": "other"},
            "Session is busy processing a turn",
        ),
    ],
)
def test_the_reason_is_the_message_or_what_data_adds(
    message: str, data: object, reason: str
) -> None:
    assert agent_reason(RpcError(-32603, message, data)) == reason


PAGE = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>"
)


@pytest.mark.parametrize(
    ("details", "reason"),
    [
        (f"502 {PAGE}", "502 Bad Gateway (an HTML error page)"),
        (f"upstream said {PAGE}", "upstream said 502 Bad Gateway (an HTML error page)"),
        ("503 <html><body>down</body></html>", "503 (an HTML error page)"),
    ],
)
def test_a_proxy_page_in_the_reason_reads_as_its_title(details: str, reason: str) -> None:
    assert agent_reason(RpcError(-32603, "Internal error", {"details": details})) == reason
    assert agent_reason(RpcError(-32603, f"Internal error: {details}")) == reason


def test_a_long_reason_is_cut() -> None:
    reason = agent_reason(RpcError(-32603, "Internal error", {"details": "x" * 5000}))
    assert len(reason) < 1100 and reason.endswith("…")


def test_the_editor_error_names_agent_method_and_reason_and_keeps_the_data_redacted() -> None:
    secrets = SecretStore()
    secrets.add("sk-secret-key")
    exc = RpcError(-32603, "Internal error", {"details": "401 bad key sk-secret-key"})

    def no_auth(exc: RpcError) -> BackendError:
        raise AssertionError("not an auth error")

    error = call_error("qwen", "session/prompt", exc, 30, secrets, no_auth)
    assert error.code == p.AGENT_ERROR
    assert error.message == "agent 'qwen': session/prompt: 401 bad key ***"
    assert error.data == {
        "code": -32603,
        "message": "Internal error",
        "data": {"details": "401 bad key ***"},
    }


def test_an_api_error_json_as_the_message_is_worded_by_its_reason() -> None:
    """Gemini CLI passes the API's error body on as the message, a proxy's page inside it."""
    page = "<html>\r\n<head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    wrapped = json.dumps({"error": {"message": page, "code": 502, "status": "Bad Gateway"}})
    assert agent_reason(RpcError(502, wrapped)) == "502 Bad Gateway (an HTML error page)"
    key = json.dumps({"error": {"code": 401, "message": "API key not valid.", "status": "X"}})
    assert agent_reason(RpcError(401, key)) == "API key not valid."
    assert agent_reason(RpcError(500, "{not json")) == "{not json"
