"""The agent sandbox (``sandbox = "workspace"``) as a user meets it, through the real server.

Claude Code writes files itself, on disk (no ``fs/*`` request reaches acp-lsp, so acp-lsp's own
path checks never see those writes): under bubblewrap its Write outside the workspace fails with
its own error, which the user sees on the tool call, and the file is not there afterwards; a
Write inside works. Where bubblewrap cannot run, the agent does not start, and says why.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from acp_lsp import protocol as p
from tests.e2e.conftest import start_editor
from tests.model_server import ModelServer, Say, Script, Tool
from tests.support.production import (
    agent_config,
    open_session,
    processes_of,
    start_agent,
    tool_calls,
)

pytestmark = pytest.mark.timeout(240)

TURN = 180.0
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")


def sandboxed(config: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {**config, "sandbox": "workspace", **extra}


def call_text(call: dict[str, Any]) -> str:
    """What the editor shows of a tool call: its content text and its raw output."""
    parts = [str(call.get("rawOutput") or "")]
    for item in call.get("content") or []:
        inner = item.get("content") if isinstance(item.get("content"), dict) else item
        parts.append(str(inner.get("text") or ""))
    return "\n".join(parts)


@needs_bwrap
async def test_claude_writes_only_inside_the_workspace(tmp_path: Path, model: ModelServer) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"  # a sibling of the workspace, writable to the server
    outside.mkdir()
    model.script = Script(
        "sandbox",
        [
            [
                Tool("write", {"path": str(outside / "escape.txt"), "content": "escaped\n"}),
                Say("I tried to write escape.txt."),
            ],
            [
                Tool("write", {"path": str(ws / "notes.txt"), "content": "new notes\n"}),
                Say("I wrote notes.txt."),
            ],
            [
                Tool("shell", {"command": f"echo x > {outside / 'shell.txt'}"}),
                Say("I ran echo next door."),
            ],
            [
                Tool("shell", {"command": f"echo x > {ws / 'shell.txt'}"}),
                Say("I ran echo here."),
            ],
        ],
    )
    config = sandboxed(agent_config("claude", model, tmp_path / "home"))
    editor = await start_agent(
        tmp_path, ws, "claude", model, options={"agents": {"claude": config}}
    )
    try:
        sid = await open_session(editor, mode="acceptEdits")
        result = await editor.prompt(sid, "write escape.txt next door", timeout=TURN)
        assert result["stopReason"] == "end_turn"
        [escape] = tool_calls(editor, sid)
        assert escape["status"] == "failed", escape
        assert "read-only file system" in call_text(escape).lower(), escape
        assert not (outside / "escape.txt").exists()

        result = await editor.prompt(sid, "write notes.txt here", timeout=TURN)
        assert result["stopReason"] == "end_turn"
        notes = tool_calls(editor, sid)[-1]
        assert notes["status"] == "completed", notes
        assert (ws / "notes.txt").read_text(encoding="utf-8") == "new notes\n"

        # the commands it runs are inside the sandbox too
        for _ in range(2):
            result = await editor.prompt(sid, "run echo", timeout=TURN)
            assert result["stopReason"] == "end_turn"
        outside_shell, inside_shell = tool_calls(editor, sid)[-2:]
        assert outside_shell["status"] == "failed", outside_shell
        assert "read-only file system" in call_text(outside_shell).lower(), outside_shell
        assert inside_shell["status"] == "completed", inside_shell
        assert not (outside / "shell.txt").exists()
        assert (ws / "shell.txt").read_text(encoding="utf-8") == "x\n"
    finally:
        await editor.shutdown_session()
    await no_processes_left(tmp_path / "home")


async def no_processes_left(home: Path) -> None:
    """bubblewrap and the agent inside it end with the server (bounded wait)."""
    for _ in range(100):
        if not processes_of(home):
            return
        await asyncio.sleep(0.1)
    assert processes_of(home) == []


async def start_demo(tmp_path: Path, ws: Path, demo: dict[str, Any]) -> Any:
    agent = {"command": sys.executable, "args": ["-m", "acp_lsp.demo_agent"], **demo}
    agent["env"] = {"ACP_DEMO_DELAY": "0", **demo.get("env", {})}
    return await start_editor(tmp_path, ws, "visual_studio_code", {"agents": {"demo": agent}})


@pytest.mark.parametrize(
    "demo, reason",
    [
        ({"bwrap": "/nonexistent/bwrap"}, "bubblewrap ('/nonexistent/bwrap') not found"),
        ({"env": {"PATH": "/nonexistent"}}, "bubblewrap ('bwrap') not found on PATH"),
    ],
    ids=["setting", "path"],
)
async def test_missing_bubblewrap_stops_the_start(
    tmp_path: Path, demo: dict[str, Any], reason: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    editor = await start_demo(tmp_path, ws, sandboxed(demo))
    try:
        with pytest.raises(JsonRpcException) as caught:
            await editor.new_session()
        assert caught.value.code == p.AGENT_UNAVAILABLE
        message = caught.value.message
        assert message.startswith("agent 'demo' failed to start: sandbox = \"workspace\": ")
        assert reason in message and "bubblewrap" in message, message
        agents = (await editor.acp(p.ACP_LIST_AGENTS, {}))["agents"]
        demo_info = next(a for a in agents if a["name"] == "demo")
        assert demo_info["running"] is False and reason in demo_info["error"]
    finally:
        await editor.shutdown_session()


def sandbox_binds(home: Path) -> list[str]:
    """The paths the live bubblewrap of the agent whose HOME is ``home`` binds writable."""
    found: list[str] = []
    for cmdline in processes_of(home):
        words = cmdline.split(" ")
        if "--die-with-parent" in words:
            found += [words[i + 1] for i, w in enumerate(words) if w == "--bind"]
    return found


@needs_bwrap
async def test_a_folder_asked_for_later_restarts_an_idle_agent_and_is_refused_by_a_busy_one(
    tmp_path: Path,
) -> None:
    ws, other, home = tmp_path / "ws", tmp_path / "other", tmp_path / "agent-home"
    for d in (ws, other, home):
        d.mkdir()
    editor = await start_demo(tmp_path, ws, sandboxed({"env": {"HOME": str(home)}}))
    try:
        first = (await editor.new_session())["sessionId"]
        assert str(ws) in sandbox_binds(home) and str(other) not in sandbox_binds(home)

        with pytest.raises(JsonRpcException) as caught:
            await editor.new_session(cwd=str(other))
        assert caught.value.code == p.AGENT_UNAVAILABLE
        assert f"{other} is outside" in caught.value.message
        assert "acp/restartAgent" in caught.value.message
        assert (await editor.prompt(first, "hello"))["stopReason"] == "end_turn"  # unharmed

        await editor.acp(p.ACP_CLOSE_SESSION, {"sessionId": first})
        second = (await editor.new_session(cwd=str(other)))["sessionId"]
        assert {str(ws), str(other)} <= set(sandbox_binds(home))  # restarted with both
        assert (await editor.prompt(second, "hello"))["stopReason"] == "end_turn"
    finally:
        await editor.shutdown_session()
    await no_processes_left(home)
