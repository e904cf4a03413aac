"""The production agents people run today, through the real server, offline and keyless.

Installed from npm at the versions the presets pin (scripts/fetch-agents.sh, run by
./run tests). Each runs with an empty HOME and no credentials: what a new user sees before
logging in. What is asserted is what the editor shows: sessions, modes, config options and
commands where the agent gives them, and an authentication error that says what to do.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig

from acp_lsp import protocol as p
from acp_lsp.presets import PRODUCTION_AGENTS, ProductionAgent, presets
from tests.support.lsp_editor import SERVER_COMMAND, TestEditor, capabilities
from tests.support.production import processes_of

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]
AGENTS = ROOT / ".cache" / "agents"
BY_NAME = {a.name: a for a in PRODUCTION_AGENTS}
CREDENTIALS = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
)


def package_dir(agent: ProductionAgent) -> Path:
    path = AGENTS / agent.name / "node_modules" / agent.package
    if not (path / "package.json").is_file():
        pytest.skip(f"{agent.spec} is not installed (scripts/fetch-agents.sh could not reach npm)")
    return path


def binary(agent: ProductionAgent) -> Path:
    package_dir(agent)
    return AGENTS / agent.name / "node_modules" / ".bin" / agent.bin


@pytest.mark.parametrize("agent", PRODUCTION_AGENTS, ids=lambda a: a.name)
def test_preset_is_what_the_pinned_package_documents(
    agent: ProductionAgent, tmp_path: Path
) -> None:
    preset = presets()[agent.name]
    assert preset["command"] == "npx"
    assert preset["args"] == ["-y", f"{agent.package}@{agent.version}", *agent.flags]
    meta = json.loads((package_dir(agent) / "package.json").read_text(encoding="utf-8"))
    assert meta["name"] == agent.package and meta["version"] == agent.version
    bins = meta["bin"] if isinstance(meta["bin"], dict) else {meta["name"]: meta["bin"]}
    # npx runs the package's only binary: it must be the one the preset means
    assert list(bins) == [agent.bin]
    for flag in agent.flags:
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "NO_COLOR": "1"}
        help_text = subprocess.run(
            [str(binary(agent)), "--help"], capture_output=True, text=True, env=env, timeout=90
        ).stdout
        line = next((ln for ln in help_text.splitlines() if ln.strip().startswith(flag + " ")), "")
        assert "ACP" in line and "deprecated" not in line, (
            f"{flag} in {agent.spec} --help: {line!r}"
        )


async def start(tmp_path: Path, workspace: Path, agent: ProductionAgent) -> TestEditor:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIALS}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local/share"),
    )
    config = ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=TestEditor, server_env=env
    )
    editor = await config.start()
    assert isinstance(editor, TestEditor)
    options = {"agents": {agent.name: {"command": str(binary(agent)), "args": list(agent.flags)}}}
    await editor.initialize_session(
        types.InitializeParams(
            capabilities=capabilities("visual_studio_code"),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            initialization_options={**options, "defaultAgent": agent.name},
        )
    )
    return editor


async def error_of(coro: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as info:
        await coro
    return info.value


async def finish(editor: TestEditor, agent: ProductionAgent, home: Path) -> None:
    # the server keeps serving after the agent refused
    listed = (await editor.acp(p.ACP_LIST_AGENTS))["agents"]
    entry = next(a for a in listed if a["name"] == agent.name)
    assert entry["version"] == agent.version
    await editor.shutdown_session()
    assert not editor.schema_errors, editor.schema_errors
    # nothing the agent started is left (its processes, and only this test's, have HOME=home)
    assert processes_of(home) == []


async def test_claude_sessions_modes_options_and_login(tmp_path: Path, workspace: Path) -> None:
    agent = BY_NAME["claude"]
    editor = await start(tmp_path, workspace, agent)
    snap = await editor.new_session()
    sid = snap["sessionId"]
    assert {m["id"] for m in snap["modes"]["availableModes"]} >= {"default", "acceptEdits", "plan"}
    categories = {o["id"]: o.get("category") for o in snap["configOptions"]}
    assert categories["model"] == "model" and categories["effort"] == "thought_level"
    assert categories["fast"] == "model_config"
    assert snap["promptCapabilities"]["image"] is True
    # slash commands arrive after the response, as an update
    await editor.wait_for(lambda: bool(editor.sessions[sid].other.get("commands")), timeout=30)
    await editor.acp(p.ACP_SET_MODE, {"sessionId": sid, "modeId": "plan"})
    await editor.wait_for(
        lambda: (editor.sessions[sid].other.get("modes") or {}).get("currentModeId") == "plan"
    )
    options = (
        await editor.acp(
            p.ACP_SET_CONFIG_OPTION, {"sessionId": sid, "configId": "effort", "value": "high"}
        )
    )["configOptions"]
    assert next(o for o in options if o["id"] == "effort")["currentValue"] == "high"
    err = await error_of(editor.prompt(sid, "hello", timeout=60))
    assert err.code == p.AUTH_REQUIRED
    login = err.data["loginTerminal"]
    assert login["args"][-4:-1] == ["--cli", "auth", "login"] and login["command"] == str(
        binary(agent)
    )
    assert "log in: Claude Subscription" in err.message
    # the session survives the refusal: the user logs in and tries again
    assert (await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid}))["status"] == "idle"
    answer = await editor.acp(
        p.ACP_AUTHENTICATE, {"agent": "claude", "methodId": login["methodId"]}
    )
    assert answer["terminal"]["args"] == login["args"]
    await finish(editor, agent, tmp_path / "home")


async def test_codex_names_the_variables_to_set(tmp_path: Path, workspace: Path) -> None:
    agent = BY_NAME["codex"]
    editor = await start(tmp_path, workspace, agent)
    err = await error_of(editor.new_session())
    assert err.code == p.AUTH_REQUIRED
    assert "set CODEX_API_KEY or OPENAI_API_KEY in the agent's env" in err.message
    methods = {m["id"]: m for m in err.data["authMethods"]}
    assert methods["codex-api-key"]["type"] == "env_var"
    answer = await editor.acp(p.ACP_AUTHENTICATE, {"agent": "codex", "methodId": "openai-api-key"})
    assert answer["envVars"] == [{"name": "OPENAI_API_KEY"}]
    await finish(editor, agent, tmp_path / "home")


async def test_gemini_says_the_key_is_missing(tmp_path: Path, workspace: Path) -> None:
    agent = BY_NAME["gemini"]
    editor = await start(tmp_path, workspace, agent)
    err = await error_of(editor.new_session())
    assert err.code == p.AUTH_REQUIRED
    assert "Gemini API key is missing" in err.message
    assert {"oauth-personal", "gemini-api-key"} <= {m["id"] for m in err.data["authMethods"]}
    await finish(editor, agent, tmp_path / "home")


async def test_qwen_offers_its_terminal_login(tmp_path: Path, workspace: Path) -> None:
    agent = BY_NAME["qwen"]
    editor = await start(tmp_path, workspace, agent)
    err = await error_of(editor.new_session())
    assert err.code == p.AUTH_REQUIRED
    login = err.data["loginTerminal"]
    assert login["methodId"] == "openai" and login["args"] == ["--acp", "--auth-type=openai"]
    await finish(editor, agent, tmp_path / "home")
