"""The production agents against the scripted model server, through the real acp-lsp server.

Each agent runs from its pinned install under ``.cache/agents`` (scripts/fetch-agents.sh)
with an empty HOME, its model API's base URL pointed at a :class:`ModelServer` on
127.0.0.1, a dummy key, and the settings that keep it off any other host (docs/agents.md
says where each comes from). Adding an agent is one function in :data:`CONFIGS`::

    def qwen_config(model: ModelServer, home: Path) -> JsonObject:
        return {"command": str(binary("qwen")), "args": [...], "env": {...}}

Use from a test::

    @pytest.fixture
    def model() -> Iterator[ModelServer]:
        with ModelServer() as server:
            yield server

    async def test_x(tmp_path: Path, model: ModelServer) -> None:
        model.script = read_edit_answer(str(workspace))
        editor = await start_agent(tmp_path, workspace, "claude", model)
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig

from acp_lsp import protocol as p
from acp_lsp.presets import PRODUCTION_AGENTS
from tests.model_server import ModelServer
from tests.support.lsp_editor import SERVER_COMMAND, PermissionPolicy, TestEditor, capabilities

JsonObject = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
AGENTS = ROOT / ".cache" / "agents"
BY_NAME = {a.name: a for a in PRODUCTION_AGENTS}
# never let a key of the developer's reach an agent under test
CREDENTIALS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
)
API_KEY = "sk-scripted-offline"
TURN = 180.0  # a whole turn on a shared 2-core machine: generous, never asserted on


def binary(name: str) -> Path:
    """The installed binary of production agent ``name``; skips the test when it is not."""
    agent = BY_NAME[name]
    package = AGENTS / agent.name / "node_modules" / agent.package / "package.json"
    if not package.is_file():
        pytest.skip(f"{agent.spec} is not installed (scripts/fetch-agents.sh could not reach npm)")
    return AGENTS / agent.name / "node_modules" / ".bin" / agent.bin


def claude_config(model: ModelServer, home: Path) -> JsonObject:
    """claude-agent-acp: the Anthropic API at ANTHROPIC_BASE_URL, nothing else."""
    return {
        "command": str(binary("claude")),
        "args": [],
        "startTimeout": 120.0,
        "env": {
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": API_KEY,
            # no telemetry, error reports, update checks or other non-model traffic
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_AUTOUPDATER": "1",
            # a scripted server that answers wrong fails the test now, not after retries
            "CLAUDE_CODE_MAX_RETRIES": "0",
        },
    }


CODEX_MODEL = "gpt-5.4"  # a model Codex knows: an unknown one adds a warning to the answer


def codex_home(model: ModelServer, home: Path) -> Path:
    """A CODEX_HOME whose config.toml sends Codex to the scripted Responses API only."""
    codex = home / ".codex"
    codex.mkdir(parents=True, exist_ok=True)
    (codex / "config.toml").write_text(
        f"""model = "{CODEX_MODEL}"
model_provider = "scripted"
check_for_update_on_startup = false
web_search = "disabled"

[model_providers.scripted]
name = "Scripted model"
base_url = "{model.url}/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

[history]
persistence = "none"
""",
        encoding="utf-8",
    )
    return codex


def codex_config(model: ModelServer, home: Path) -> JsonObject:
    """codex-acp: a CODEX_HOME whose model provider is the scripted Responses API."""
    return {
        "command": str(binary("codex")),
        "args": [],
        "startTimeout": 120.0,
        "env": {"CODEX_HOME": str(codex_home(model, home)), "OPENAI_API_KEY": API_KEY},
    }


SETTINGS_FILES = {"qwen": ".qwen/settings.json", "gemini": ".gemini/settings.json"}


def merged(base: JsonObject, extra: JsonObject) -> JsonObject:
    """``base`` with ``extra`` merged in, objects key by key."""
    out = dict(base)
    for key, value in extra.items():
        old = out.get(key)
        out[key] = (
            merged(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
        )
    return out


def write_settings(path: Path, settings: JsonObject) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2), encoding="utf-8")


QWEN_MODEL = "qwen-scripted"


def qwen_config(model: ModelServer, home: Path) -> JsonObject:
    """Qwen Code: OpenAI Chat Completions at OPENAI_BASE_URL (``--auth-type=openai``).

    ~/.qwen/settings.json turns off its usage statistics (Aliyun RUM), telemetry and update
    check, and its follow-up suggestion and managed-memory model requests (side requests
    the scripted model would answer, but each costs a model call per turn)."""
    write_settings(
        home / ".qwen" / "settings.json",
        {
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False},
            "ui": {"enableFollowupSuggestions": False},
            "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
        },
    )
    return {
        "command": str(binary("qwen")),
        "args": ["--acp", "--auth-type=openai"],
        "startTimeout": 120.0,
        "env": {
            "OPENAI_BASE_URL": f"{model.url}/v1",
            "OPENAI_API_KEY": API_KEY,
            "OPENAI_MODEL": QWEN_MODEL,
            "QWEN_USAGE_STATISTICS_ENABLED": "false",
            "QWEN_TELEMETRY_ENABLED": "false",
            "QWEN_CODE_LEGACY_MCP_BLOCKING": "1",  # as the preset: MCP tools from the first prompt
        },
    }


def gemini_config(model: ModelServer, home: Path) -> JsonObject:
    """Gemini CLI: Gemini's API at GOOGLE_GEMINI_BASE_URL (auth type "gateway").

    ~/.gemini/settings.json turns off its usage statistics (Clearcut, play.googleapis.com),
    telemetry and update check. The workspace stays untrusted, as for a new user: modes
    autoEdit and yolo (and "Allow for this session") need ``GEMINI_CLI_TRUST_WORKSPACE``."""
    write_settings(
        home / ".gemini" / "settings.json",
        {
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        },
    )
    return {
        "command": str(binary("gemini")),
        "args": ["--acp"],
        "startTimeout": 120.0,
        "env": {"GOOGLE_GEMINI_BASE_URL": model.url, "GEMINI_API_KEY": API_KEY},
    }


def codex_sandbox_path(home: Path) -> str | None:
    """A PATH on which Codex's Linux sandbox works, or None where it cannot here.

    The sandbox runs ``bwrap`` (bubblewrap) and then ``codex-linux-sandbox``, an alias of the
    Codex binary that the npm package does not install: this makes that alias."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None
    probe = subprocess.run([bwrap, "--ro-bind", "/", "/", "true"], capture_output=True)
    if probe.returncode != 0:
        return None  # no user namespaces here
    scope = AGENTS / "codex" / "node_modules" / "@zed-industries"
    native = next(scope.glob("codex-acp-linux-*/bin/codex-acp"), None)
    if native is None:
        return None
    bin_dir = home / "codex-bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    alias = bin_dir / "codex-linux-sandbox"
    if not alias.exists():
        alias.symlink_to(native)
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"


def codex_sandboxed_config(model: ModelServer, home: Path) -> JsonObject:
    """codex-acp as :func:`codex_config`, with its sandbox working (read-only and auto modes
    run commands in it); skips the test where bubblewrap cannot run."""
    config = codex_config(model, home)
    path = codex_sandbox_path(home)
    if path is None:
        pytest.skip("Codex's sandbox needs bubblewrap (bwrap) with user namespaces")
    config["env"]["PATH"] = path
    return config


CONFIGS: dict[str, Callable[[ModelServer, Path], JsonObject]] = {
    "claude": claude_config,
    "codex": codex_config,
    "codex-sandboxed": codex_sandboxed_config,
    "qwen": qwen_config,
    "gemini": gemini_config,
}


def agent_config(name: str, model: ModelServer, home: Path) -> JsonObject:
    """The acp-lsp agent config (command, args, env) of ``name`` against ``model``."""
    return CONFIGS[name](model, home)


def server_env(home: Path) -> dict[str, str]:
    """The acp-lsp server's environment: no credentials, an empty HOME, its own data dir."""
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIALS}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local/share"),
        ACP_LSP_DATA_DIR=str(home / "acp-lsp-data"),
    )
    return env


def processes_of(home: Path) -> list[str]:
    """Command lines of live processes whose HOME is ``home`` (the agents of one test: other
    tests on the machine run the same binaries with their own HOME)."""
    found = []
    marker = f"HOME={home}".encode() + b"\0"
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes() + b"\0"
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"\0" + marker in b"\0" + environ:
            found.append(cmdline.replace(b"\0", b" ").decode(errors="replace"))
    return found


async def start_agent(
    tmp_path: Path,
    workspace: Path,
    name: str,
    model: ModelServer,
    *,
    profile: str = "visual_studio_code",
    options: JsonObject | None = None,
    env: dict[str, str] | None = None,
    settings: JsonObject | None = None,
    editor_tools: list[str] | None = None,
) -> TestEditor:
    """The real acp-lsp server with agent ``name`` (the default) against ``model``, and a
    TestEditor initialized on ``workspace``. ``options`` merge into initializationOptions;
    ``env`` into the agent's environment; ``settings`` into its settings file (Qwen Code,
    Gemini CLI: :data:`SETTINGS_FILES`); ``editor_tools``: the tools the editor declares it
    answers through ``acp/editorTool`` (install the handler before a turn calls one)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    config = ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=TestEditor, server_env=server_env(home)
    )
    editor = await config.start()
    assert isinstance(editor, TestEditor)
    agent = agent_config(name, model, home)
    agent["env"] = {**agent["env"], **(env or {})}
    if settings:
        path = home / SETTINGS_FILES[name]
        write_settings(path, merged(json.loads(path.read_text(encoding="utf-8")), settings))
    init = {"agents": {name: agent}, "defaultAgent": name}
    caps = capabilities(profile)
    if editor_tools is not None:
        caps.experimental["acp"]["editorTools"] = editor_tools
    await editor.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            initialization_options={**init, **(options or {})},
        )
    )
    return editor


# -- what the editor shows -----------------------------------------------------------------------


def texts(editor: TestEditor, sid: str, role: str = "agent") -> list[str]:
    """The text of each message of ``role`` ("agent", "thought"), as the editor shows it."""
    return [
        "".join(b.get("text", "") for b in m["content"] if b.get("type") == "text")
        for m in editor.sessions[sid].messages
        if m["role"] == role
    ]


def tool_calls(editor: TestEditor, sid: str) -> list[JsonObject]:
    return list(editor.sessions[sid].tool_calls.values())


def diffs(call: JsonObject) -> list[JsonObject]:
    return [c for c in call.get("content") or [] if c.get("type") == "diff"]


async def open_session(editor: TestEditor, mode: str | None = None) -> str:
    """A new session of the default agent, in ``mode`` when given."""
    sid = str((await editor.new_session())["sessionId"])
    if mode is not None:
        await editor.acp(p.ACP_SET_MODE, {"sessionId": sid, "modeId": mode})
    return sid


async def ended(editor: TestEditor, sid: str, text: str, timeout: float = TURN) -> None:
    """One prompt of ``text`` in session ``sid``, which the agent answers to its end."""
    result = await editor.prompt(sid, text, timeout=timeout)
    assert result["stopReason"] == "end_turn", result


@dataclass
class Turns:
    """Whole turns of a production agent on ``workspace`` against ``model``."""

    tmp_path: Path
    workspace: Path
    model: ModelServer

    async def one(
        self,
        name: str,
        text: str,
        *,
        mode: str | None = None,
        policy: PermissionPolicy | None = None,
        opened: Path | None = None,
    ) -> tuple[TestEditor, str]:
        """Agent ``name`` started (with ``opened`` open in the editor and the user's answers
        to prompts from ``policy``), a session in ``mode`` and one whole turn of ``text``."""
        editor = await start_agent(self.tmp_path, self.workspace, name, self.model)
        if opened is not None:
            editor.open(opened)
        if policy is not None:
            editor.permission_policy = policy
        sid = await open_session(editor, mode)
        await ended(editor, sid, text)
        return editor, sid


async def cancel_mid_stream(editor: TestEditor, model: ModelServer, sid: str) -> None:
    """A turn on the :func:`stall` script, cancelled once its first words reached the editor."""
    turn = asyncio.ensure_future(editor.prompt(sid, "Tell me a story.", timeout=TURN))
    assert await asyncio.to_thread(model.wait_stalled, TURN), "the answer never started"
    await editor.wait_for(lambda: "one two" in "".join(texts(editor, sid)), timeout=TURN)
    assert (await editor.acp(p.ACP_CANCEL, {"sessionId": sid})) == {}
    result = await turn
    model.release()
    assert result["stopReason"] == "cancelled"
    assert editor.status_values(sid)[-1] == "idle"
