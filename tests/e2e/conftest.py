"""End-to-end fixtures: the real acp-lsp server driven by a scripted LSP editor."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig

from tests.agents import scripted_command
from tests.support.lsp_editor import SERVER_COMMAND, TestEditor, capabilities, coverage_env

ROOT = Path(__file__).resolve().parents[2]
DEMO_WORKSPACE = ROOT / "acp_lsp" / "demo" / "workspace"
PROFILES = ["visual_studio_code", "neovim"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(DEMO_WORKSPACE, ws)
    return ws


def server_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg-config")
    env["ACP_DEMO_DELAY"] = "0"
    env["ACP_LSP_DATA_DIR"] = str(tmp_path / "data")  # the session history of this test
    return env


async def start_editor(
    tmp_path: Path,
    workspace: Path,
    profile: str,
    init_options: dict[str, Any] | None = None,
    *,
    rich: bool = True,
) -> TestEditor:
    config = ClientServerConfig(
        server_command=SERVER_COMMAND,
        client_factory=TestEditor,
        server_env=server_env(tmp_path),
    )
    editor = await config.start()
    assert isinstance(editor, TestEditor)
    result = await editor.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(profile, rich=rich),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            initialization_options=init_options or {},
        )
    )
    encoding = result.capabilities.position_encoding
    editor.encoding = str(encoding) if encoding else "utf-16"
    return editor


@pytest.fixture(params=PROFILES)
async def editor(
    request: pytest.FixtureRequest, tmp_path: Path, workspace: Path
) -> AsyncIterator[TestEditor]:
    marker = request.node.get_closest_marker("init_options")
    options = with_fast_demo(marker.args[0] if marker else {})
    ed = await start_editor(tmp_path, workspace, request.param, options)
    yield ed
    await ed.shutdown_session()
    assert not ed.schema_errors, "messages that break docs/acp-lsp.schema.json:\n" + "\n".join(
        ed.schema_errors
    )


def with_fast_demo(options: dict[str, Any]) -> dict[str, Any]:
    """The demo agent without its streaming pauses (tests need no theatre)."""
    agents = dict(options.get("agents") or {})
    demo = dict(agents.get("demo") or {})
    demo.setdefault("env", {"ACP_DEMO_DELAY": "0", **coverage_env()})
    agents["demo"] = demo
    return {**options, "agents": agents}


def python_agent(*args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": list(args)}


def scripted_agent(
    script: dict[str, Any], tmp_path: Path, log: Path | None = None
) -> dict[str, Any]:
    """initializationOptions with the scripted agent (tests/agents) playing ``script`` as
    the default agent (``log``: where it writes what it received)."""
    argv = scripted_command(script, tmp_dir=tmp_path)
    agent: dict[str, Any] = {"command": argv[0], "args": argv[1:]}
    if log is not None:
        agent["env"] = {"SCRIPTED_ACP_LOG": str(log)}
    return {"agents": {"scripted": agent}, "defaultAgent": "scripted"}


ScriptedLaunch = Callable[..., Awaitable[TestEditor]]


@pytest.fixture
async def launch(tmp_path: Path, workspace: Path) -> AsyncIterator[ScriptedLaunch]:
    """``start(script, profile=..., rich=...)``: an editor on the workspace whose default agent
    plays ``script``, logging what it received to ``tmp_path / "agent.log"``; every editor
    started is shut down (unless the test did) and its messages checked against the schema."""
    editors: list[TestEditor] = []

    async def start(
        script: dict[str, Any], *, profile: str = "visual_studio_code", rich: bool = True
    ) -> TestEditor:
        options = scripted_agent(script, tmp_path, tmp_path / "agent.log")
        editor = await start_editor(tmp_path, workspace, profile, options, rich=rich)
        editors.append(editor)
        return editor

    yield start
    for editor in editors:
        if editor._server is not None and editor._server.returncode is None:  # not yet stopped
            await editor.shutdown_session()
        assert not editor.schema_errors, "\n".join(editor.schema_errors)
