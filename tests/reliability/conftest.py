"""Fault injection through the real acp-lsp server: helpers shared by the reliability tests.

Every test here starts the real server (``python -m acp_lsp``) as a subprocess, drives it as
an editor would (``TestEditor``), injects a fault through a scripted agent, the editor or the
wire, and asserts what a user sees. Agents are the project's scripted raw-NDJSON agent
(tests/agents/scripted_acp.py) started through ``launcher.py``, which records every agent
pid (so tests can prove no process is left behind) and can make an agent ignore SIGTERM.

Tests marked ``heavy`` (soak, concurrency, fuzz, 10 MB frames) run by default, as part of
``./run tests``; ``-m "not heavy"`` leaves them out for a quick pass.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig

from tests.agents import read_log
from tests.support.lsp_editor import SERVER_COMMAND, TestEditor, capabilities, coverage_env

ROOT = Path(__file__).resolve().parents[2]
DEMO_WORKSPACE = ROOT / "acp_lsp" / "demo" / "workspace"
SCRIPTS = Path(__file__).resolve().parent / "scripts"
LAUNCHER = Path(__file__).resolve().parent / "launcher.py"
JsonObject = dict[str, Any]

# Small on purpose: an agent that ignores session/cancel is stopped this soon.
CANCEL_GRACE_S = 0.5


def script(name: str) -> JsonObject:
    """A scripted-agent script from tests/reliability/scripts/NAME.json."""
    loaded: JsonObject = json.loads((SCRIPTS / f"{name}.json").read_text(encoding="utf-8"))
    return loaded


def scripted(
    *steps: JsonObject,
    pids: Path,
    log: Path | None = None,
    ignore_term: bool = False,
    print_env: str | None = None,
    env: dict[str, str] | None = None,
    request_timeout: float | None = None,
) -> JsonObject:
    """Agent config running the scripted agent: the n-th start runs the n-th script of
    ``steps`` (the last one from then on), and appends its pid to ``pids``."""
    texts = [json.dumps(s) for s in steps]
    big = [t for t in texts if len(t) > 100_000]
    assert not big, "scripts over 100 kB: put them in tests/reliability/scripts/"
    args = [str(LAUNCHER), str(pids)]
    if ignore_term:
        args.append("--ignore-term")
    if print_env is not None:
        args += ["--print-env", print_env]
    config: JsonObject = {"command": sys.executable, "args": [*args, "--", *texts]}
    agent_env = dict(env or {})
    if log is not None:
        agent_env["SCRIPTED_ACP_LOG"] = str(log)
    if agent_env:
        config["env"] = agent_env
    if request_timeout is not None:
        config["requestTimeout"] = request_timeout
    return config


def read_pids(path: Path) -> list[int]:
    """Pids of every agent the launcher started, in start order."""
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        return []
    return [int(line) for line in text.splitlines() if line.strip()]


def demo_agent(*, pidfile: Path | None = None, state_dir: Path | None = None) -> JsonObject:
    """The built-in demo agent without streaming pauses, optionally reporting its pid."""
    env = {"ACP_DEMO_DELAY": "0", **coverage_env()}
    if state_dir is not None:
        env["ACP_DEMO_STATE_DIR"] = str(state_dir)
    argv = [sys.executable, "-m", "acp_lsp.demo.agent"]
    if pidfile is None:
        return {"command": argv[0], "args": argv[1:], "env": env}
    return {
        "command": "/bin/sh",
        "args": ["-c", 'echo $$ >> "$0"; exec "$@"', str(pidfile), *argv],
        "env": env,
    }


def server_env(tmp_path: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg-config")
    env["ACP_LSP_DATA_DIR"] = str(tmp_path / "data")  # the session history of this test
    env.update(extra or {})
    return env


class Bridge:
    """Starts servers for one test and stops them (and checks the schema) afterwards."""

    def __init__(self, tmp_path: Path, workspace: Path) -> None:
        self.tmp_path = tmp_path
        self.workspace = workspace
        self.editors: list[TestEditor] = []
        self.log_file = tmp_path / "server.log"

    async def start(
        self,
        agents: dict[str, JsonObject],
        *,
        profile: str = "neovim",
        rich: bool = True,
        options: JsonObject | None = None,
        env: dict[str, str] | None = None,
        folders: list[Path] | None = None,
    ) -> TestEditor:
        init: JsonObject = {
            "agents": agents,
            "defaultAgent": next(iter(agents)),
            "cancelGraceS": CANCEL_GRACE_S,
            "followAlong": False,
            **(options or {}),
        }
        config = ClientServerConfig(
            server_command=[*SERVER_COMMAND, "-v", "--log-file", str(self.log_file)],
            client_factory=TestEditor,
            server_env=server_env(self.tmp_path, env),
        )
        editor = await config.start()
        assert isinstance(editor, TestEditor)
        roots = folders or [self.workspace]
        result = await editor.initialize_session(
            types.InitializeParams(
                capabilities=capabilities(profile, rich=rich),
                root_uri=roots[0].as_uri(),
                workspace_folders=[
                    types.WorkspaceFolder(uri=r.as_uri(), name=r.name) for r in roots
                ],
                initialization_options=init,
            )
        )
        encoding = result.capabilities.position_encoding
        editor.encoding = str(encoding) if encoding else "utf-16"
        self.editors.append(editor)
        return editor

    def server_pid(self, editor: TestEditor) -> int:
        server = editor._server
        assert server is not None
        return int(server.pid)

    def server_log(self) -> str:
        return self.log_file.read_text(encoding="utf-8", errors="replace")

    async def close(self) -> list[str]:
        errors: list[str] = []
        for editor in self.editors:
            server = editor._server
            if server is not None and server.returncode is None and editor.error is None:
                await asyncio.wait_for(editor.shutdown_session(), 30)
            errors.extend(editor.schema_errors)
        return errors


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(DEMO_WORKSPACE, ws, ignore=shutil.ignore_patterns("__pycache__"))
    return ws


@pytest.fixture
async def bridge(tmp_path: Path, workspace: Path) -> AsyncIterator[Bridge]:
    b = Bridge(tmp_path, workspace)
    yield b
    errors = await b.close()
    assert not errors, "messages that break docs/acp-lsp.schema.json:\n" + "\n".join(errors)


# -- processes ---------------------------------------------------------------------------------


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not count)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


async def wait_gone(pids: list[int], timeout: float = 10.0) -> list[int]:
    """Wait (bounded) until none of ``pids`` runs; returns those still running."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        left = [pid for pid in pids if alive(pid)]
        if not left or loop.time() >= deadline:
            return left
        await asyncio.sleep(0.05)


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


async def eventually(
    predicate: Callable[[], bool | Awaitable[bool]], timeout: float = 10.0, what: str = ""
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = predicate()
        if not isinstance(value, bool):
            value = await value
        if value:
            return
        if loop.time() >= deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await asyncio.sleep(0.02)


def responses(log: Path) -> dict[Any, JsonObject]:
    """Responses the scripted agent received, by request id."""
    return {m["id"]: m for m in read_log(log) if "method" not in m and "id" in m}


def received(log: Path, method: str) -> list[JsonObject]:
    """Messages of ``method`` the scripted agent received."""
    return [m for m in read_log(log) if m.get("method") == method]


async def error_of(awaitable: Awaitable[Any]) -> JsonObject:
    """The JSON-RPC error an editor request ends with (fails if it succeeds)."""
    from pygls.exceptions import JsonRpcException

    try:
        result = await awaitable
    except JsonRpcException as exc:
        return {"code": exc.code, "message": exc.message, "data": getattr(exc, "data", None)}
    raise AssertionError(f"expected an error, got {result!r}")


def record_figure(name: str, value: Any) -> None:
    """Keep a measured figure for docs/reliability.md: appended as one JSON line to the file
    named by env ACP_LSP_RELIABILITY_FIGURES (nothing is written without it)."""
    target = os.environ.get("ACP_LSP_RELIABILITY_FIGURES")
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"name": name, "value": value}) + "\n")
