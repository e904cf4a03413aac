"""ACP authentication, as the editor needs it: what to do for each kind of auth method.

Agents offer three kinds (ACP ``AuthMethod``): ``agent`` (the client calls ``authenticate``),
``terminal`` (the client runs the agent's own command with extra args in a terminal: Claude's
``--cli auth login``) and ``env_var`` (the user sets variables: Codex's ``CODEX_API_KEY``).
Qwen Code still marks its terminal method in ``_meta.type``; both spellings are read.
"""

from __future__ import annotations

from typing import Any

from acp_lsp.config import AgentConfig

JsonObject = dict[str, Any]


def method_type(method: JsonObject) -> str:
    kind = method.get("type")
    if isinstance(kind, str):
        return kind
    meta = method.get("_meta")
    if isinstance(meta, dict) and isinstance(meta.get("type"), str):
        return str(meta["type"])
    return "agent"


def auth_methods(value: Any) -> list[JsonObject]:
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []


def _args(method: JsonObject) -> list[str]:
    args = method.get("args")
    if not isinstance(args, list):
        meta = method.get("_meta")
        args = meta.get("args") if isinstance(meta, dict) else None
    return [str(a) for a in args] if isinstance(args, list) else []


def terminal_command(config: AgentConfig, method: JsonObject) -> JsonObject:
    """The login command an editor runs in its terminal: the agent's own command + args."""
    env = method.get("env")
    return {
        "command": config.command,
        "args": [*config.args, *_args(method)],
        "env": {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {},
    }


def env_vars(method: JsonObject) -> list[JsonObject]:
    out: list[JsonObject] = []
    for var in method.get("vars") or []:
        if isinstance(var, dict) and isinstance(var.get("name"), str):
            out.append(
                {k: v for k, v in var.items() if k in ("name", "label", "optional", "secret")}
            )
    return out


def env_var_answer(agent: str, method: JsonObject) -> JsonObject:
    names = [v["name"] for v in env_vars(method)]
    message = (
        f"set {' and '.join(names) or 'the variables'} for agent {agent!r} "
        f'(its `env` setting, e.g. {names[0] if names else "NAME"} = "${{env:...}}"), '
        "then restart the agent"
    )
    return {"envVars": env_vars(method), "message": message}


def login_terminal(config: AgentConfig, methods: list[JsonObject]) -> JsonObject | None:
    for method in methods:
        if method_type(method) == "terminal" and isinstance(method.get("id"), str):
            return {"methodId": method["id"], **terminal_command(config, method)}
    return None


def describe(methods: list[JsonObject]) -> str:
    """One line a user can act on: which variables to set, which logins exist."""
    hints: list[str] = []
    names = [v["name"] for m in methods if method_type(m) == "env_var" for v in env_vars(m)]
    if names:
        hints.append("set " + " or ".join(dict.fromkeys(names)) + " in the agent's env")
    logins = [str(m.get("name") or m.get("id")) for m in methods if method_type(m) != "env_var"]
    if logins:
        hints.append("or log in: " + ", ".join(logins) + " (acp/authenticate)")
    return "; ".join(hints).removeprefix("or ")


def auth_error_data(
    agent: str, config: AgentConfig, known: Any, error_data: Any, message: str
) -> JsonObject:
    """``data`` of the -32000 error the editor gets: every method, and the login to offer."""
    methods = auth_methods(known)
    if isinstance(error_data, dict):
        seen = {m.get("id") for m in methods}
        methods += [
            m for m in auth_methods(error_data.get("authMethods")) if m.get("id") not in seen
        ]
    data: JsonObject = {"agent": agent, "authMethods": methods, "message": message}
    terminal = login_terminal(config, methods)
    if terminal is not None:
        data["loginTerminal"] = terminal
    return data
