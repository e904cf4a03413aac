"""The agent sandbox (``sandbox = "workspace"``) as a user meets it, through the real server.

Claude Code writes files itself, on disk (no ``fs/*`` request reaches acp-lsp, so acp-lsp's own
path checks never see those writes): under bubblewrap its Write and Bash outside the workspace
fail with its own error, which the user sees on the tool call, and the file is not there
afterwards; inside they work. Codex, Qwen Code and Gemini CLI are confined the same way. Where
bubblewrap cannot run, the agent does not start, and says why. A session in a folder the running
agent was not started with restarts it when idle and is refused while it is busy. And the same
as an unprivileged user, whose bubblewrap needs a user namespace.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig

import acp_lsp
from acp_lsp import protocol as p
from acp_lsp.backends.agent_sandbox import SandboxUnavailable, probe
from tests.e2e.conftest import start_editor
from tests.model_server import ModelServer, Say, Script, Tool
from tests.support.lsp_editor import TestEditor, capabilities
from tests.support.production import (
    agent_config,
    open_session,
    processes_of,
    start_agent,
    texts,
    tool_calls,
)

pytestmark = pytest.mark.timeout(240)

TURN = 180.0


def bwrap_problem() -> str | None:
    try:
        probe("bwrap")
    except SandboxUnavailable as exc:
        return str(exc)
    return None


BWRAP_PROBLEM = bwrap_problem()
needs_bwrap = pytest.mark.skipif(
    BWRAP_PROBLEM is not None, reason=f"the agent sandbox cannot run here: {BWRAP_PROBLEM}"
)


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


def demo_agent(**fields: Any) -> dict[str, Any]:
    env = {"ACP_DEMO_DELAY": "0", **fields.pop("env", {})}
    return sandboxed(
        {"command": sys.executable, "args": ["-m", "acp_lsp.demo.agent"]}, **fields, env=env
    )


async def start_demo(tmp_path: Path, ws: Path, agents: dict[str, Any]) -> Any:
    return await start_editor(tmp_path, ws, "visual_studio_code", {"agents": agents})


NO_USERNS = "bwrap: No permissions to creating new namespace, likely because the kernel does not"


async def test_bubblewrap_that_cannot_run_stops_the_start(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    fake = tmp_path / "bwrap"  # what bwrap says where user namespaces are off
    fake.write_text(f"#!/bin/sh\necho '{NO_USERNS}' >&2\nexit 1\n", encoding="utf-8")
    fake.chmod(0o755)
    reasons = {
        "setting": "bubblewrap ('/nonexistent/bwrap') not found: install the 'bubblewrap' package",
        "path": "bubblewrap ('bwrap') not found on PATH",
        "userns": f"bubblewrap ({fake}) cannot build a sandbox: {NO_USERNS}",
    }
    agents = {
        "setting": demo_agent(bwrap="/nonexistent/bwrap"),
        "path": demo_agent(env={"PATH": "/nonexistent"}),
        "userns": demo_agent(bwrap=str(fake)),
    }
    editor = await start_demo(tmp_path, ws, agents)
    try:
        for name, reason in reasons.items():
            with pytest.raises(JsonRpcException) as caught:
                await editor.new_session(agent=name)
            assert caught.value.code == p.AGENT_UNAVAILABLE
            message = caught.value.message
            assert message.startswith(f'agent {name!r} failed to start: sandbox = "workspace": ')
            assert reason in message, message
        listed = (await editor.acp(p.ACP_LIST_AGENTS, {}))["agents"]
        for info in listed:
            if info["name"] in reasons:  # never started unsandboxed instead
                assert info["running"] is False and reasons[info["name"]] in info["error"]
    finally:
        await editor.shutdown_session()


async def test_bubblewrap_failing_at_the_agents_start_is_reported(tmp_path: Path) -> None:
    """It passes the probe but cannot build this agent's sandbox: the start fails with its
    words, and nothing runs unconfined."""
    ws = tmp_path / "ws"
    ws.mkdir()
    fake = tmp_path / "bwrap"
    said = "bwrap: Can't mount tmpfs on /newroot/agent-tmp: Permission denied"
    fake.write_text(
        f'#!/bin/sh\n[ "$1" = --version ] && echo bubblewrap 0.8.0 && exit 0\n'
        f'[ "$#" = 6 ] && exit 0\necho "{said}" >&2\nexit 1\n',
        encoding="utf-8",
    )
    fake.chmod(0o755)
    editor = await start_demo(tmp_path, ws, {"demo": demo_agent(bwrap=str(fake))})
    try:
        with pytest.raises(JsonRpcException) as caught:
            await editor.new_session()
        assert caught.value.code == p.AGENT_UNAVAILABLE
        assert caught.value.message.startswith("agent 'demo' failed to start")
        assert said in caught.value.message, caught.value.message  # its stderr tail
        listed = (await editor.acp(p.ACP_LIST_AGENTS, {}))["agents"]
        assert next(a for a in listed if a["name"] == "demo")["running"] is False
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
    editor = await start_demo(tmp_path, ws, {"demo": demo_agent(env={"HOME": str(home)})})
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


# How each other agent writes on disk itself, and where it shows the error of a blocked write:
# Codex writes with apply_patch and shows its failure; Gemini CLI and Qwen Code write files
# through fs/* (acp-lsp's own checks), so their shell is what the sandbox confines: Qwen shows
# the shell's error, Gemini shows no shell output and passes it on to the model only.
CONFINED = {
    "codex": ("write", "Failed to write file", "editor"),
    "qwen": ("shell", "Read-only file system", "editor"),
    "gemini": ("shell", "Read-only file system", "model"),
}


def writing(action: str, path: Path) -> Tool:
    if action == "write":
        return Tool("write", {"path": str(path), "content": "x\n"})
    return Tool("shell", {"command": f"echo x > {path}"})


@needs_bwrap
@pytest.mark.parametrize("name", sorted(CONFINED))
async def test_the_other_agents_are_confined_too(
    tmp_path: Path, model: ModelServer, name: str
) -> None:
    action, error, shown = CONFINED[name]
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    model.script = Script(
        "sandbox",
        [
            [writing(action, outside / "escape.txt"), Say("I tried.")],
            [writing(action, ws / "notes.txt"), Say("I wrote it.")],
        ],
    )
    config = sandboxed(agent_config(name, model, tmp_path / "home"))
    editor = await start_agent(tmp_path, ws, name, model, options={"agents": {name: config}})
    try:
        sid = await open_session(editor)
        assert (await editor.prompt(sid, "next door", timeout=TURN))["stopReason"] == "end_turn"
        assert not (outside / "escape.txt").exists()
        if shown == "editor":
            [call] = tool_calls(editor, sid)
            assert call["status"] == "failed" and error in call_text(call), call
        else:  # the tool result the agent sent back to the model
            assert error in json.dumps(model.turn_requests()[-1].body)

        assert (await editor.prompt(sid, "here", timeout=TURN))["stopReason"] == "end_turn"
        assert (ws / "notes.txt").read_text(encoding="utf-8") == "x\n"
    finally:
        await editor.shutdown_session()


# An ACP agent in a few lines of the standard library. Each prompt, it writes the files named on
# its command line and says how each went: itself, or (prompt "terminal") through a command it
# asks acp-lsp to run (terminal/create), writing each path + ".term".
WRITING_AGENT = r"""
import json, sys
TERM = 'for f; do if echo x > "$f.term"; then echo "$f.term: written"; fi; done 2>&1'
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
def call(method, params):
    send({"jsonrpc": "2.0", "id": method, "method": method, "params": params})
    while True:
        msg = json.loads(sys.stdin.readline())
        if msg.get("id") == method and "method" not in msg:
            return msg.get("result") or msg.get("error")
def write_all():
    said = []
    for path in sys.argv[1:]:
        try:
            with open(path, "w") as fh:
                fh.write("x\n")
            said.append(path + ": written")
        except OSError as exc:
            said.append(path + ": " + exc.strerror)
    return "\n".join(said)
def run_terminal():
    sid = {"sessionId": "s1"}
    term = call("terminal/create", {**sid, "command": "sh", "args": ["-c", TERM, "sh", *sys.argv[1:]]})
    term = {**sid, "terminalId": term["terminalId"]}
    call("terminal/wait_for_exit", term)
    output = call("terminal/output", term)["output"]
    call("terminal/release", term)
    return output
while True:
    line = sys.stdin.readline()
    if not line:
        break
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": 1}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": mid, "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        said = run_terminal() if msg["params"]["prompt"][0]["text"] == "terminal" else write_all()
        text = {"type": "text", "text": said}
        update = {"sessionUpdate": "agent_message_chunk", "content": text}
        send({"jsonrpc": "2.0", "method": "session/update",
              "params": {"sessionId": "s1", "update": update}})
        send({"jsonrpc": "2.0", "id": mid, "result": {"stopReason": "end_turn"}})
    elif mid is not None:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": method}})
"""


async def check_writes(editor: TestEditor, agent: str, inside: Path, outside: Path) -> None:
    """The agent's own writes, then its terminal's: outside refused, inside written."""
    sid = (await editor.new_session(agent=agent))["sessionId"]
    assert (await editor.prompt(sid, "write"))["stopReason"] == "end_turn"
    said = texts(editor, sid)[-1]
    assert f"{outside}: Read-only file system" in said and f"{inside}: written" in said, said
    assert not outside.exists() and inside.read_text() == "x\n"
    assert (await editor.prompt(sid, "terminal"))["stopReason"] == "end_turn"
    said = texts(editor, sid)[-1]
    assert "Read-only file system" in said and f"{inside}.term: written" in said, said
    assert f"{outside}.term: written" not in said and not Path(f"{outside}.term").exists()
    assert Path(f"{inside}.term").read_text() == "x\n"


@needs_bwrap
async def test_the_commands_it_has_acp_lsp_run_are_confined_too(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (tmp_path / "agent.py").write_text(WRITING_AGENT, encoding="utf-8")
    inside, out = ws / "in.txt", outside / "out.txt"
    writer = {
        "command": sys.executable,
        "args": [str(tmp_path / "agent.py"), str(out), str(inside)],
    }
    editor = await start_demo(tmp_path, ws, {"writer": sandboxed(writer)})
    try:
        await check_writes(editor, "writer", inside, out)
    finally:
        await editor.shutdown_session()


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
SYSTEM_PYTHON = "/usr/bin/python3"  # the venv's interpreter may be out of reach for nobody


def unprivileged_run_skip() -> str | None:
    """Why the server cannot run as an unprivileged user here, if it cannot."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return "needs root and setpriv to run the server as nobody"
    probe = subprocess.run(
        [*NOBODY, SYSTEM_PYTHON, "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
    )
    if probe.stdout.strip() != str(sys.version_info[:2]):
        return f"nobody cannot run a Python {sys.version_info[:2]} here ({SYSTEM_PYTHON})"
    # a clone inside a private folder (`mktemp -d` makes it 0700) is out of nobody's reach
    package = Path(acp_lsp.__file__).parents[1]
    if any(p.stat().st_mode & 0o001 == 0 for p in [package, *package.parents] if p != Path("/")):
        return f"nobody cannot reach the checkout at {package} (a private folder above it)"
    return None


@needs_bwrap
async def test_as_an_unprivileged_user_through_user_namespaces(tmp_path: Path) -> None:
    """The path most users take: acp-lsp as a non-root user, so bwrap needs a user namespace."""
    reason = unprivileged_run_skip()
    if reason is not None:
        pytest.skip(reason)
    root = Path(tempfile.mkdtemp(prefix="acp-lsp-nobody-"))  # tmp_path is private to root
    try:
        for d in (root, root / "ws", root / "outside"):
            d.mkdir(exist_ok=True)
            d.chmod(0o777)
        (root / "agent.py").write_text(WRITING_AGENT, encoding="utf-8")
        inside, outside = root / "ws" / "in.txt", root / "outside" / "out.txt"
        site = next(p for p in sys.path if p.endswith("site-packages"))
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(root),
            "XDG_CONFIG_HOME": str(root / "xdg"),
            "ACP_LSP_DATA_DIR": str(root / "data"),
            "PYTHONPATH": os.pathsep.join([str(Path(acp_lsp.__file__).parents[1]), site]),
        }
        agent = {
            "command": SYSTEM_PYTHON,
            "args": [str(root / "agent.py"), str(outside), str(inside)],
        }
        config = ClientServerConfig(
            server_command=[*NOBODY, SYSTEM_PYTHON, "-m", "acp_lsp"],
            client_factory=TestEditor,
            server_env=env,
        )
        editor = await config.start()
        assert isinstance(editor, TestEditor)
        try:
            await editor.initialize_session(
                types.InitializeParams(
                    capabilities=capabilities("visual_studio_code"),
                    root_uri=(root / "ws").as_uri(),
                    workspace_folders=[
                        types.WorkspaceFolder(uri=(root / "ws").as_uri(), name="ws")
                    ],
                    initialization_options={"agents": {"writer": sandboxed(agent)}},
                )
            )
            await check_writes(editor, "writer", inside, outside)
            assert inside.stat().st_uid == 65534  # written by the user, mapped back
        finally:
            await editor.shutdown_session()
    finally:
        shutil.rmtree(root, ignore_errors=True)
