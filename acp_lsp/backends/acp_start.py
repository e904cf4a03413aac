"""Starting an ACP agent: spawn the process, ``initialize``, and map what goes wrong (a missing
command, an early exit, no answer in time, another protocol version) to one clear error."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from typing import Any

from acp_lsp import __version__
from acp_lsp import protocol as p
from acp_lsp.backends.agent_sandbox import AgentSandbox, SandboxUnavailable
from acp_lsp.backends.base import BackendError
from acp_lsp.backends.wire import AgentGone, AgentProcess, RpcError
from acp_lsp.config import AgentConfig
from acp_lsp.secret_store import SecretStore

JsonObject = dict[str, Any]

ACP_PROTOCOL_VERSION = 1

# What the bridge implements, advertised exactly (reference/acp.md §3).
CLIENT_CAPABILITIES: JsonObject = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
    # terminal-type auth methods go to the editor as acp/authenticate {terminal}
    "auth": {"terminal": True},
    # elicitation/create becomes acp/elicitation (or showMessageRequest questions)
    "elicitation": {"form": {}, "url": {}},
}


class StartFailed(Exception):
    """The agent did not start: ``reason`` for the agent list, ``error`` for the caller."""

    def __init__(self, reason: str, error: BackendError) -> None:
        super().__init__(reason)
        self.reason = reason
        self.error = error


async def spawn(
    name: str,
    config: AgentConfig,
    env: dict[str, str],
    secrets: SecretStore,
    sandbox: AgentSandbox | None = None,
    **hooks: Any,
) -> AgentProcess:
    """The agent's process, with ``hooks`` (on_notification, on_request, …) wired to it;
    under bubblewrap when ``sandbox`` is given (never without it if that cannot run)."""
    command = config.command or ""
    if shutil.which(command, path=env.get("PATH")) is None and "/" not in command:
        raise StartFailed(
            f"command not found: {command!r}",
            BackendError(
                p.AGENT_UNAVAILABLE,
                f"agent {name!r} failed to start: command not found: {command!r}",
                {"agent": name, "stderr": ""},
            ),
        )
    argv = [command, *config.args]
    if sandbox is not None:
        try:
            argv = await sandbox.wrap(command, config.args, env)
        except SandboxUnavailable as exc:
            raise StartFailed(
                f"sandbox: {exc}",
                BackendError(
                    p.AGENT_UNAVAILABLE,
                    f'agent {name!r} failed to start: sandbox = "workspace": {exc}',
                    {"agent": name, "stderr": ""},
                ),
            ) from None
    try:
        return await AgentProcess.start(argv[0], argv[1:], env=env, cwd=None, name=name, **hooks)
    except AgentGone as exc:
        raise StartFailed(
            str(exc),
            BackendError(
                p.AGENT_UNAVAILABLE,
                f"agent {name!r} failed to start: {exc}",
                {"agent": name, "stderr": secrets.redact(exc.stderr_tail)},
            ),
        ) from None


async def initialize(
    name: str, config: AgentConfig, proc: AgentProcess, secrets: SecretStore
) -> JsonObject:
    """The agent's ``initialize`` result; on failure the process is closed."""
    try:
        result = await proc.request(
            "initialize",
            {
                "protocolVersion": ACP_PROTOCOL_VERSION,
                "clientCapabilities": CLIENT_CAPABILITIES,
                "clientInfo": {"name": "acp-lsp", "title": "acp-lsp", "version": __version__},
            },
            timeout=config.effective_start_timeout,
        )
    except (AgentGone, RpcError, TimeoutError) as exc:
        tail = proc.stderr_tail()
        await proc.close(grace=0.5)
        if isinstance(exc, TimeoutError):
            limit = config.effective_start_timeout
            hint = (
                "; a first run downloads the agent: raise startTimeout if it is slow"
                if config.downloads
                else ""
            )
            exc = TimeoutError(f"no answer within {limit:g}s (startTimeout{hint})")
        raise StartFailed(
            f"initialize failed: {exc}",
            BackendError(
                p.AGENT_UNAVAILABLE,
                f"agent {name!r} failed to start: initialize: {exc}",
                {"agent": name, "stderr": secrets.redact(tail)},
            ),
        ) from None
    init = result if isinstance(result, dict) else {}
    version = init.get("protocolVersion")
    if version != ACP_PROTOCOL_VERSION:
        await proc.close(grace=0.5)
        raise StartFailed(
            f"unsupported protocol version {version!r}",
            BackendError(
                p.AGENT_UNAVAILABLE,
                f"agent {name!r} speaks ACP protocol version {version!r}; "
                f"acp-lsp speaks {ACP_PROTOCOL_VERSION}",
            ),
        )
    return init


def call_error(
    name: str,
    method: str,
    exc: BaseException,
    wait: float | None,
    secrets: SecretStore,
    auth_error: Callable[[RpcError], BackendError],
) -> BackendError:
    """What the editor is told when a request to the agent fails."""
    if isinstance(exc, RpcError):
        if exc.code == p.AUTH_REQUIRED:
            return auth_error(exc)
        if exc.code == -32601:
            return BackendError(p.NOT_SUPPORTED, f"agent {name!r} does not support {method}")
        reason = secrets.redact(agent_reason(exc))
        data = secrets.redact_json(exc.to_json())
        return BackendError(p.AGENT_ERROR, f"agent {name!r}: {method}: {reason}", data)
    if isinstance(exc, AgentGone):
        return BackendError(
            p.AGENT_UNAVAILABLE,
            f"agent {name!r} exited: {exc}",
            {"agent": name, "stderr": secrets.redact(exc.stderr_tail)},
        )
    return BackendError(p.AGENT_ERROR, f"agent {name!r} did not answer {method} within {wait:g}s")


# JSON-RPC's own names for its error codes: they say what kind of error, not what went wrong
GENERIC_MESSAGES = frozenset(
    {"internal error", "invalid params", "invalid request", "parse error", "server error", "error"}
)
INTERNAL = "internal error"
TITLE = re.compile(r"<title>(.*?)</title>", re.IGNORECASE | re.DOTALL)
DETAIL_KEYS = ("details", "detail", "reason", "message", "error")
MAX_DETAIL = 1000


def agent_reason(exc: RpcError) -> str:
    """The agent's words for a failed request: its message, or the reason its ``data``
    carries when the message is only the code's name (Qwen Code answers a model API error
    with "Internal error" and ``data.details``). "Internal error", the catch-all, is left
    out when a reason follows it (claude-agent-acp: "Internal error: API Error: …")."""
    message = _json_reason(exc.message.strip())
    head, _, rest = message.partition(":")
    if head.lower() == INTERNAL and rest.strip():
        return html_page_title(rest.strip())
    if message.rstrip(".").lower() not in GENERIC_MESSAGES:
        return html_page_title(message)
    detail = _detail(exc.data)
    if not detail or detail in message:
        return message
    detail = html_page_title(detail)
    if len(detail) > MAX_DETAIL:
        detail = detail[:MAX_DETAIL] + "…"
    return detail if message.rstrip(".").lower() == INTERNAL else f"{message}: {detail}"


def _json_reason(message: str) -> str:
    """A message that is an API's whole error JSON (Gemini CLI passes it on: {"error":
    {"message": …}}), as the reason inside it."""
    if not message.startswith("{"):
        return message
    try:
        return _detail(json.loads(message)) or message
    except ValueError:
        return message


def html_page_title(reason: str) -> str:
    """A reason that holds a proxy's HTML error page (Qwen Code passes the body on: "502
    <html>…"), as the page's title."""
    start = reason.lower().find("<html")
    if start < 0:
        return reason
    found = TITLE.search(reason, start)
    title = " ".join(found.group(1).split()) if found else ""
    before = reason[:start].strip()
    if title.startswith(before):
        before = ""
    return " ".join(x for x in (before, title, "(an HTML error page)") if x)


def _detail(data: Any, depth: int = 0) -> str:
    """The first reason in an error's data: a string, or a string under a usual key (one
    level of nesting, as in ``{"error": {"message": …}}``)."""
    if isinstance(data, str):
        return data.strip()
    if not isinstance(data, dict) or depth > 1:
        return ""
    for key in DETAIL_KEYS:
        found = _detail(data.get(key), depth + 1)
        if found:
            return found
    return ""
