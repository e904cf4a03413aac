"""Helpers for the review-finding tests: a real server, a scripted ACP agent, a test editor."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcException

from tests.agents import read_log, scripted_command
from tests.e2e.conftest import start_editor, with_fast_demo
from tests.support.lsp_editor import TestEditor

JsonObject = dict[str, Any]
Step = dict[str, Any]


def agent_config(
    script: JsonObject, tmp_path: Path, log: Path, *, arg: str | None = None, **env: str
) -> JsonObject:
    """ACP agent settings that run the scripted agent on ``script``, logging to ``log``."""
    argv = scripted_command(script, arg=arg, tmp_dir=tmp_path)
    return {
        "command": argv[0],
        "args": argv[1:],
        "env": {"SCRIPTED_ACP_LOG": str(log), **env},
    }


async def scripted_editor(
    tmp_path: Path,
    workspace: Path,
    prompt_steps: list[Step],
    *,
    profile: str = "visual_studio_code",
    options: JsonObject | None = None,
    script: JsonObject | None = None,
    env: dict[str, str] | None = None,
    rich: bool = True,
) -> tuple[TestEditor, Path]:
    """An editor on a real server whose default agent ``scripted`` runs ``prompt_steps``."""
    log = tmp_path / "agent.log"
    full = {
        **(script or {}),
        "on": {"session/prompt": prompt_steps, **(script or {}).get("on", {})},
    }
    opts = {**(options or {}), "defaultAgent": "scripted"}
    opts["agents"] = {
        **opts.get("agents", {}),
        "scripted": agent_config(full, tmp_path, log, **(env or {})),
    }
    editor = await start_editor(tmp_path, workspace, profile, with_fast_demo(opts), rich=rich)
    return editor, log


def answers(log: Path) -> dict[str, JsonObject]:
    """The responses the agent received to its own requests, by request id."""
    return {
        str(m["id"]): m
        for m in read_log(log)
        if "method" not in m and "id" in m and ("result" in m or "error" in m)
    }


def received(log: Path, method: str) -> list[JsonObject]:
    """The messages of ``method`` the agent received, in order."""
    return [m for m in read_log(log) if m.get("method") == method]


def req(method: str, rid: str, **params: Any) -> Step:
    return {"request": method, "id": rid, "params": {"sessionId": "{sessionId}", **params}}


def permission(rid: str, **tool_call: Any) -> Step:
    return req(
        "session/request_permission",
        rid,
        toolCall={"toolCallId": rid, "title": f"tool {rid}", **tool_call},
        options=[
            {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
        ],
    )


async def error_of(awaitable: Awaitable[Any]) -> JsonObject:
    """The JSON-RPC error an editor request ends with (fails if it succeeds)."""
    try:
        result = await awaitable
    except JsonRpcException as exc:
        return {"code": exc.code, "message": exc.message, "data": getattr(exc, "data", None)}
    raise AssertionError(f"expected an error, got {result!r}")


async def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Poll ``predicate`` (bounded); fails the test with TimeoutError when it never holds."""

    async def loop() -> None:
        while not predicate():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(loop(), timeout)


def everything_sent(editor: TestEditor, *extra: Any) -> str:
    """Every acp/* notification, log and message the editor saw, plus ``extra``, as JSON."""
    seen = [
        editor.notifications,
        [m.message for m in editor.log_messages],
        [m.message for m in editor.messages],
        *extra,
    ]
    return json.dumps(seen, default=str)
