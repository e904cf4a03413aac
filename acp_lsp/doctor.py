"""``acp-lsp doctor``: is this install ready to use? Config files, the data directory, and
each agent started through a real acp-lsp server, the way an editor starts it (``initialize``,
a session, its login methods). Prints a table; exits 1 when something is broken.

A login an agent still needs is reported, not counted as broken: that is the user's next step.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient

from acp_lsp import __version__
from acp_lsp import protocol as p
from acp_lsp.config import (
    PACKAGE_RUNNERS,
    load_settings,
    merge_settings,
    read_toml,
    user_config_path,
)
from acp_lsp.history.paths import data_dir, history_path
from acp_lsp.lsp_protocol import AcpClientProtocol, stop_client

JsonObject = dict[str, Any]
OK, WARN, FAIL = "ok", "warn", "FAIL"


@dataclass
class Row:
    check: str
    state: str
    detail: str


def read_editor_settings(arg: str) -> tuple[JsonObject | None, Row]:
    """The settings an editor would send as initializationOptions (``-``: stdin), so that
    doctor sees the agents an editor defines in its own settings too."""
    label = "editor settings"
    try:
        text = sys.stdin.read() if arg == "-" else Path(arg).read_text(encoding="utf-8")
        data = json.loads(text)
    except OSError as exc:
        return None, Row(label, FAIL, f"{arg}: cannot read ({exc.strerror or exc})")
    except ValueError as exc:
        return None, Row(label, FAIL, f"{arg}: not JSON ({exc})")
    if not isinstance(data, dict):
        return None, Row(label, FAIL, f"{arg}: not a JSON object")
    agents = data.get("agents")
    count = len(agents) if isinstance(agents, dict) else 0
    return data, Row(label, OK, f"{'stdin' if arg == '-' else arg}: read ({count} agents)")


def check_config(
    workspace: Path, editor_settings: str | None = None
) -> tuple[list[Row], list[JsonObject], JsonObject | None]:
    """The config files' rows, the settings sources (lowest first) and the editor's own."""
    rows: list[Row] = []
    sources: list[JsonObject] = []
    editor: JsonObject | None = None
    for label, path in (
        ("user config", user_config_path(os.environ)),
        ("workspace config", workspace / "acp-lsp.toml"),
    ):
        if not path.exists():
            rows.append(Row(label, OK, f"{path}: not present (optional)"))
            continue
        problems: list[str] = []
        data = read_toml(path, problems)
        if problems:
            rows.append(Row(label, FAIL, "; ".join(problems)))
            continue
        sources.append(data)
        rows.append(Row(label, OK, f"{path}: read ({len(data.get('agents') or {})} agents)"))
    if editor_settings is not None:
        # the editor's settings come last: they win over the files, as in the server
        editor, row = read_editor_settings(editor_settings)
        rows.append(row)
        if editor is not None:
            sources.append(editor)
    settings, problems = load_settings(sources)
    for problem in problems:
        rows.append(Row("settings", FAIL, problem))
    rows.append(
        Row("agents", OK, f"{len(settings.agents)} configured, default {settings.default!r}")
    )
    return rows, sources, editor


def check_data_dir() -> Row:
    root = data_dir(os.environ)
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Row("data dir", FAIL, f"{root}: not writable ({exc.strerror or exc})")
    db = history_path(None, os.environ)
    size = db.stat().st_size if db.exists() else 0
    history = f"history {size / 1024:,.0f} KiB" if size else "no history yet"
    return Row("data dir", OK, f"{root}: writable; {history}")


def check_sandbox(sources: list[JsonObject]) -> list[Row]:
    """Whether bubblewrap can sandbox agents here (``sandbox = "workspace"``), or why not:
    a failure only for the agents that ask for it."""
    from acp_lsp.backends.agent_sandbox import SandboxUnavailable, describe

    settings, _ = load_settings(sources)
    users = {name: a.bwrap for name, a in settings.agents.items() if a.sandbox == "workspace"}
    rows: list[Row] = []
    for program in sorted(set(users.values()) or {"bwrap"}):
        names = sorted(n for n, prog in users.items() if prog == program)
        used = f"; used by {', '.join(names)}" if names else ""
        try:
            rows.append(Row("sandbox", OK, describe(program) + used))
        except SandboxUnavailable as exc:
            if names:
                rows.append(Row("sandbox", FAIL, f"{exc}; {', '.join(names)} cannot start"))
            else:
                unused = 'no agent sets sandbox = "workspace"'
                rows.append(Row("sandbox", OK, f"not available: {exc} ({unused})"))
    return rows


async def check_agents(
    workspace: Path,
    names: list[str] | None,
    timeout: float,
    sources: list[JsonObject],
    editor: JsonObject | None = None,
) -> list[Row]:
    settings, _ = load_settings(sources)
    wanted = names or sorted(settings.agents)
    rows: list[Row] = []
    starts: dict[str, Any] = {}
    for name in wanted:
        config = settings.agents.get(name)
        if config is None:
            rows.append(
                Row(f"agent {name}", FAIL, f"not configured ({', '.join(settings.agents)})")
            )
            continue
        if config.command is not None and shutil.which(config.command) is None:
            rows.append(Row(f"agent {name}", FAIL, f"command {config.command!r} not found"))
            continue
        starts[name] = {"startTimeout": timeout, "requestTimeout": timeout}
    if not starts:
        return rows
    # the server reads the files itself; what only the editor defines travels as an editor's
    # initializationOptions would, with doctor's timeouts on top
    init = merge_settings(dict(editor or {}), {"agents": starts})
    client = LanguageClient("acp-lsp-doctor", __version__, protocol_cls=AcpClientProtocol)
    await client.start_io(sys.executable, "-m", "acp_lsp", env={**os.environ})
    try:
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(experimental={"acp": {}}),
                root_uri=workspace.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
                initialization_options=init,
            )
        )
        client.initialized(types.InitializedParams())
        for name in starts:
            rows.append(await _start_agent(client, name, workspace, timeout, settings))
    finally:
        await stop_client(client)
    return rows


async def _start_agent(
    client: LanguageClient, name: str, workspace: Path, timeout: float, settings: Any
) -> Row:
    request = client.protocol.send_request_async
    label = f"agent {name}"
    config = settings.agents[name]
    began = time.monotonic()
    state, detail = OK, ""
    try:
        snap = await asyncio.wait_for(
            request(p.ACP_NEW_SESSION, {"agent": name, "cwd": str(workspace)}), timeout + 15
        )
        await request(p.ACP_CLOSE_SESSION, {"sessionId": snap["sessionId"]})
        detail = f"session started in {time.monotonic() - began:.1f} s"
    except JsonRpcException as exc:
        if exc.code == p.AUTH_REQUIRED:
            state, detail = WARN, f"needs a login: {exc.message}"
        else:
            state, detail = FAIL, str(exc.message)
            if os.path.basename(config.command or "") in PACKAGE_RUNNERS:
                detail += " (a first start downloads the agent: needs the package registry)"
    except TimeoutError:
        state, detail = FAIL, f"no answer within {timeout + 15:g} s"
    listed = (await request(p.ACP_LIST_AGENTS, {}))["agents"]
    info: JsonObject = next((a for a in listed if a["name"] == name), {})
    version = f"{info.get('title') or name} {info.get('version') or ''}".strip()
    methods = [m.get("name") or m.get("id") for m in info.get("authMethods") or []]
    extra = f"; logins: {', '.join(str(m) for m in methods)}" if methods else ""
    return Row(label, state, f"{version}: {detail}{extra}")


def render(rows: list[Row], out: TextIO) -> None:
    width = max(len(r.check) for r in rows)
    out.write(f"acp-lsp {__version__} doctor\n\n")
    for row in rows:
        # one line a check: an agent's stderr tail joins its message
        lines = [x.strip() for x in row.detail.splitlines() if x.strip() and x[:3] != "---"]
        out.write(f"  {row.check:<{width}}  {row.state:<4}  {' | '.join(lines)}\n")
    failed = sum(r.state == FAIL for r in rows)
    warned = sum(r.state == WARN for r in rows)
    out.write(f"\n{failed} problem(s), {warned} warning(s)\n")


def run_doctor(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    logging.getLogger("pygls").setLevel(logging.ERROR)  # the table says what matters
    workspace = Path(args.workspace or os.getcwd()).resolve()
    editor_settings: str | None = getattr(args, "editor_settings", None)
    rows, sources, editor = check_config(workspace, editor_settings)
    rows.append(check_data_dir())
    rows += check_sandbox(sources)
    if not args.no_agents:
        rows += asyncio.run(
            check_agents(workspace, args.agent or None, args.timeout, sources, editor)
        )
    render(rows, out)
    return 1 if any(r.state == FAIL for r in rows) else 0
