"""Settings changes (DESIGN §2 "Configuration": initializationOptions, later
workspace/didChangeConfiguration, section ``acp``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from acp_lsp import protocol as p
from tests.e2e.conftest import start_editor, with_fast_demo
from tests.review_findings.helpers import agent_config, error_of
from tests.support.lsp_editor import TestEditor

pytestmark = pytest.mark.timeout(60)

SAY_ARG = [
    {
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "arg={arg}"},
        }
    }
]


async def last_agent_text(editor: TestEditor, sid: str) -> str:
    snap = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    agent = [m for m in snap["messages"] if m["role"] == "agent"]
    return "".join(b.get("text", "") for b in agent[-1]["content"])


async def agent_names(editor: TestEditor) -> set[str]:
    return {a["name"] for a in (await editor.acp(p.ACP_LIST_AGENTS))["agents"]}


async def test_changed_agent_settings_apply_after_restart(tmp_path: Path, workspace: Path) -> None:
    log = tmp_path / "agent.log"
    script = {"on": {"session/prompt": SAY_ARG}}

    def options(arg: str, **more: Any) -> dict[str, Any]:
        agents = {"scripted": agent_config(script, tmp_path, log, arg=arg), **more}
        return with_fast_demo({"defaultAgent": "scripted", "agents": agents})

    editor = await start_editor(tmp_path, workspace, "visual_studio_code", options("one"))
    first = (await editor.new_session())["sessionId"]
    await editor.prompt(first, "go")
    assert await last_agent_text(editor, first) == "arg=one"

    # The user edits the agent's arguments (say, a new model flag) in the settings.
    marker = {"marker": {"command": "true"}}
    editor.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"acp": options("two", **marker)})
    )
    names: set[str] = set()

    async def refresh() -> None:
        names.update(await agent_names(editor))

    for _ in range(100):
        await refresh()
        if "marker" in names:
            break
    assert "marker" in names  # the new settings were loaded

    await editor.acp(p.ACP_RESTART_AGENT, {"agent": "scripted"})
    second = (await editor.new_session())["sessionId"]
    await editor.prompt(second, "go")
    text = await last_agent_text(editor, second)
    await editor.shutdown_session()
    assert text == "arg=two", "the restarted agent still runs with the old settings"


async def test_agent_removed_from_settings_is_unknown(tmp_path: Path, workspace: Path) -> None:
    log = tmp_path / "agent.log"
    agents = {"scripted": agent_config({"on": {"session/prompt": SAY_ARG}}, tmp_path, log)}
    editor = await start_editor(
        tmp_path, workspace, "visual_studio_code", with_fast_demo({"agents": agents})
    )
    await editor.new_session(agent="scripted")
    editor.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"acp": with_fast_demo({})})
    )
    gone: list[bool] = []

    async def check() -> None:
        gone.append("scripted" not in await agent_names(editor))

    for _ in range(100):
        await check()
        if gone[-1]:
            break
    assert gone[-1]  # acp/listAgents no longer shows it
    error = await error_of(editor.new_session(agent="scripted"))
    await editor.shutdown_session()
    assert error["code"] == p.UNKNOWN_AGENT, error
