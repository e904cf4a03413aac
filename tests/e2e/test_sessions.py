"""Sessions, turns and errors through the real server (DESIGN §2), on both editor profiles."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from acp_lsp import protocol as p
from tests.agents import scripted_command
from tests.e2e.conftest import start_editor, with_fast_demo
from tests.support.editor_model import EditorModel, view_of
from tests.support.lsp_editor import TestEditor

pytestmark = pytest.mark.timeout(60)


def scripted(script: dict[str, Any], tmp_path: Path, **extra: Any) -> dict[str, Any]:
    argv = scripted_command(script, tmp_dir=tmp_path)
    return {"command": argv[0], "args": argv[1:], **extra}


async def error_of(coro: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as info:
        await coro
    return info.value


# -- bad input ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        (p.ACP_PROMPT, {"prompt": "hi"}, "sessionId"),
        (p.ACP_PROMPT, {"sessionId": 3, "prompt": "hi"}, "sessionId"),
        (p.ACP_PROMPT, {"sessionId": "s", "prompt": 5}, "prompt"),
        (p.ACP_REVIEW_EDIT, {"sessionId": "s", "action": "undo"}, "action"),
        (p.ACP_SET_FOLLOW, {"sessionId": "s", "enabled": "yes"}, "enabled"),
        (p.ACP_NEW_SESSION, {"additionalDirectories": "/tmp"}, "additionalDirectories"),
        (p.ACP_LOAD_SESSION, {"agent": "demo"}, "sessionId"),
    ],
)
async def test_malformed_params_name_the_field(
    editor: TestEditor, method: str, params: dict[str, Any], field: str
) -> None:
    err = await error_of(editor.acp(method, params))
    assert err.code == p.INVALID_PARAMS
    assert field in err.message and method in err.message
    # the server keeps serving
    assert (await editor.acp(p.ACP_LIST_AGENTS))["agents"]


async def test_non_object_params_are_refused(editor: TestEditor) -> None:
    err = await error_of(editor.acp(p.ACP_GET_SESSION, [1, 2]))  # type: ignore[arg-type]
    assert err.code == p.INVALID_PARAMS and "object" in err.message


async def test_unknown_agent_lists_the_configured_ones(editor: TestEditor) -> None:
    err = await error_of(editor.acp(p.ACP_NEW_SESSION, {"agent": "nope"}))
    assert err.code == p.UNKNOWN_AGENT
    assert "nope" in err.message
    assert {"demo", "claude", "gemini", "codex"} <= set(err.data["agents"])


async def test_unknown_session(editor: TestEditor) -> None:
    for method, params in [
        (p.ACP_PROMPT, {"sessionId": "ghost", "prompt": "x"}),
        (p.ACP_GET_SESSION, {"sessionId": "ghost"}),
        (p.ACP_CANCEL, {"sessionId": "ghost"}),
        (p.ACP_SET_FOLLOW, {"sessionId": "ghost", "enabled": False}),
    ]:
        err = await error_of(editor.acp(method, params))
        assert err.code == p.UNKNOWN_SESSION, method
        assert "ghost" in err.message


@pytest.mark.init_options(
    {
        "agents": {
            "missing": {"command": "no-such-agent-binary-xyz"},
            "quits": {
                "command": sys.executable,
                "args": [
                    "-c",
                    "import sys; sys.stderr.write('boom: no credentials\\n'); sys.exit(3)",
                ],
            },
        }
    }
)
async def test_agents_that_cannot_start(editor: TestEditor) -> None:
    err = await error_of(editor.acp(p.ACP_NEW_SESSION, {"agent": "missing"}))
    assert err.code == p.AGENT_UNAVAILABLE
    assert "no-such-agent-binary-xyz" in err.message and "not found" in err.message
    err = await error_of(editor.acp(p.ACP_NEW_SESSION, {"agent": "quits"}))
    assert err.code == p.AGENT_UNAVAILABLE
    assert "boom: no credentials" in err.data["stderr"]
    agents = {a["name"]: a for a in (await editor.acp(p.ACP_LIST_AGENTS))["agents"]}
    assert agents["quits"]["running"] is False and "error" in agents["quits"]
    # and the next request is served
    snap = await editor.new_session()
    assert snap["agent"] == "demo"


# -- configuration -----------------------------------------------------------------------
async def test_bad_settings_are_named_and_ignored(tmp_path: Path, workspace: Path) -> None:
    options = {"followAlong": "maybe", "agents": {"broken": {"command": "x", "bogus": 1}}}
    editor = await start_editor(tmp_path, workspace, "neovim", with_fast_demo(options))
    await editor.wait_for(lambda: len(editor.messages) >= 2)
    texts = " | ".join(m.message for m in editor.messages)
    assert "followAlong" in texts and "agents.broken" in texts and "bogus" in texts
    names = [a["name"] for a in (await editor.acp(p.ACP_LIST_AGENTS))["agents"]]
    assert "broken" not in names and "demo" in names
    assert (await editor.new_session())["agent"] == "demo"
    await editor.shutdown_session()


async def test_workspace_toml_and_did_change_configuration(tmp_path: Path, workspace: Path) -> None:
    (workspace / "acp-lsp.toml").write_text(
        '[agents.fromtoml]\ncommand = "python3"\ntitle = "From TOML"\n\n'
        '[agents.both]\ncommand = "python3"\ntitle = "toml title"\n',
        encoding="utf-8",
    )
    options = with_fast_demo({"agents": {"both": {"title": "init title"}}})
    editor = await start_editor(tmp_path, workspace, "visual_studio_code", options)
    agents = {a["name"]: a for a in (await editor.acp(p.ACP_LIST_AGENTS))["agents"]}
    assert agents["fromtoml"]["title"] == "From TOML"
    assert agents["both"]["title"] == "init title"  # initializationOptions win
    editor.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"acp": {"agents": {"later": {"command": "python3"}}, "defaultAgent": "later"}}
        )
    )

    async def configured() -> bool:
        agents = {a["name"]: a for a in (await editor.acp(p.ACP_LIST_AGENTS))["agents"]}
        return "later" in agents and agents["later"]["default"] is True

    for _ in range(50):
        if await configured():
            break
        await asyncio.sleep(0.05)
    assert await configured()
    await editor.shutdown_session()


async def test_empty_initialization_options_raise_no_warning(
    tmp_path: Path, workspace: Path
) -> None:
    """Neovim sent {} when no settings were set: the server warned 'must be an object', which
    stopped Neovim at start-up on a Press ENTER prompt."""
    editor = await start_editor(tmp_path, workspace, "neovim", {})
    await editor.acp("acp/listAgents")
    assert not [m for m in editor.messages if "initializationOptions" in m.message]
    await editor.shutdown_session()


# -- turns -------------------------------------------------------------------------------
async def test_updates_are_ordered_and_arrive_before_the_response(editor: TestEditor) -> None:
    snap = await editor.new_session()
    sid = snap["sessionId"]
    # nothing the snapshot holds comes again (the agent's updates after session/new may
    # follow the response at once: they carry later seqs)
    assert all(
        n[1]["seq"] > snap["seq"]
        for n in editor.notifications
        if n[1].get("sessionId") == sid and n[0] == "acp/sessionUpdate"
    )
    await editor.prompt(sid, "hello")
    seqs = [
        n[1]["seq"]
        for n in editor.notifications
        if n[0] == "acp/sessionUpdate" and n[1]["sessionId"] == sid
    ]
    assert seqs == list(range(1, len(seqs) + 1))
    # an editor rebuilding from snapshot + notifications sees exactly the bridge's state
    final = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    model = EditorModel(snap)
    for method, params in editor.notifications:
        if method == "acp/sessionUpdate" and params["sessionId"] == sid:
            model.apply_notification(params)
    assert model.view() == view_of(final)
    assert final["seq"] == seqs[-1]
    assert final["status"] == "idle"


async def test_one_turn_at_a_time(editor: TestEditor) -> None:
    sid = (await editor.new_session())["sessionId"]
    first = asyncio.ensure_future(editor.prompt(sid, "slow please"))
    await editor.wait_for(lambda: "running" in editor.status_values(sid))
    err = await error_of(editor.acp(p.ACP_PROMPT, {"sessionId": sid, "prompt": "again"}))
    assert err.code == p.TURN_RUNNING
    await editor.acp(p.ACP_CANCEL, {"sessionId": sid})
    assert (await first)["stopReason"] == "cancelled"
    assert editor.status_values(sid)[-1] == "idle"


async def test_cancel_request_on_prompt_cancels_the_turn(editor: TestEditor) -> None:
    sid = (await editor.new_session())["sessionId"]
    future = editor.protocol.send_request(
        p.ACP_PROMPT, {"sessionId": sid, "prompt": "slow please"}, msg_id="the-prompt"
    )
    await editor.wait_for(lambda: "running" in editor.status_values(sid))
    editor.protocol.notify("$/cancelRequest", types.CancelParams(id="the-prompt"))
    result = await asyncio.wait_for(asyncio.wrap_future(future), 15)
    assert result == {"stopReason": "cancelled"}
    await editor.wait_for(lambda: editor.status_values(sid)[-1] == "idle", timeout=15)
    assert editor.statuses[sid][-1].get("stopReason") == "cancelled"
    assert (await editor.prompt(sid, "/plan"))["stopReason"] == "end_turn"


async def test_modes_and_config_options(editor: TestEditor) -> None:
    snap = await editor.new_session()
    sid = snap["sessionId"]
    modes = snap["modes"]
    target = next(m["id"] for m in modes["availableModes"] if m["id"] != modes["currentModeId"])
    assert await editor.acp(p.ACP_SET_MODE, {"sessionId": sid, "modeId": target}) == {}
    await editor.wait_for(
        lambda: editor.sessions[sid].view().get("modes", {}).get("currentModeId") == target
    )
    option = snap["configOptions"][0]
    value = option["options"][0]["value"]
    result = await editor.acp(
        p.ACP_SET_CONFIG_OPTION, {"sessionId": sid, "configId": option["id"], "value": value}
    )
    changed = next(o for o in result["configOptions"] if o["id"] == option["id"])
    assert changed["currentValue"] == value
    final = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    assert final["modes"]["currentModeId"] == target


async def test_progress_reports_the_running_tool_call(tmp_path: Path, workspace: Path) -> None:
    editor = await start_editor(tmp_path, workspace, "visual_studio_code", with_fast_demo({}))
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "hello")
    reports = [r for items in editor.progress_reports.values() for r in items]
    kinds = [getattr(r, "kind", None) for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    messages = [getattr(r, "message", None) for r in reports if getattr(r, "kind", "") == "report"]
    assert any(m and "src/app.py" in m for m in messages), messages
    await editor.shutdown_session()


# -- session lifecycle -------------------------------------------------------------------
async def test_close_then_load_replays_history(editor: TestEditor) -> None:
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "/plan")
    before = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    listed = await editor.acp(p.ACP_LIST_SESSIONS, {})
    assert sid in [s["sessionId"] for s in listed["sessions"]]
    assert await editor.acp(p.ACP_CLOSE_SESSION, {"sessionId": sid}) == {}
    assert editor.status_values(sid)[-1] == "closed"
    # closed, it is still in the history: read-only, with what it said
    stored = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    assert stored["status"] == "stored" and len(stored["messages"]) == len(before["messages"])
    loaded = await editor.acp(p.ACP_LOAD_SESSION, {"agent": "demo", "sessionId": sid})
    assert loaded["sessionId"] == sid
    texts = ["".join(b.get("text", "") for b in m["content"]) for m in loaded["messages"]]
    old = ["".join(b.get("text", "") for b in m["content"]) for m in before["messages"]]
    assert texts == old
    # a loaded session takes new turns
    assert (await editor.prompt(sid, "/plan"))["stopReason"] == "end_turn"


async def test_restart_agent_fails_live_sessions(editor: TestEditor) -> None:
    sid = (await editor.new_session())["sessionId"]
    assert await editor.acp(p.ACP_RESTART_AGENT, {"agent": "demo"}) == {}
    await editor.wait_for(lambda: editor.status_values(sid)[-1:] == ["failed"])
    err = await error_of(editor.acp(p.ACP_PROMPT, {"sessionId": sid, "prompt": "x"}))
    assert err.code == p.AGENT_UNAVAILABLE
    fresh = await editor.new_session()
    assert (await editor.prompt(fresh["sessionId"], "/plan"))["stopReason"] == "end_turn"


async def test_authentication_flow(tmp_path: Path, workspace: Path) -> None:
    methods = [
        {"id": "key", "name": "API key", "description": "use a key"},
        {
            "id": "login",
            "name": "Log in",
            "type": "terminal",
            "args": ["--login"],
            "env": {"X": "1"},
        },
    ]
    script = {
        "initialize": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": methods},
        "on": {
            "session/new#1": [{"error": {"code": -32000, "message": "Authentication required"}}]
        },
    }
    options = with_fast_demo(
        {"agents": {"auth": scripted(script, tmp_path)}, "defaultAgent": "auth"}
    )
    editor = await start_editor(tmp_path, workspace, "neovim", options)
    err = await error_of(editor.acp(p.ACP_NEW_SESSION, {}))
    assert err.code == p.AUTH_REQUIRED
    assert [m["id"] for m in err.data["authMethods"]] == ["key", "login"]
    agents = {a["name"]: a for a in (await editor.acp(p.ACP_LIST_AGENTS))["agents"]}
    assert [m["id"] for m in agents["auth"]["authMethods"]] == ["key", "login"]
    terminal = await editor.acp(p.ACP_AUTHENTICATE, {"agent": "auth", "methodId": "login"})
    assert terminal["terminal"]["args"][-1] == "--login" and terminal["terminal"]["env"] == {
        "X": "1"
    }
    assert await editor.acp(p.ACP_AUTHENTICATE, {"agent": "auth", "methodId": "key"}) == {}
    assert (await editor.new_session())["agent"] == "auth"
    await editor.shutdown_session()


def says(text: str) -> dict[str, Any]:
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return {"on": {"session/prompt": [{"update": chunk}]}}


async def test_a_new_session_never_takes_the_id_of_a_closed_one(
    tmp_path: Path, workspace: Path
) -> None:
    # Two agents that both number their sessions scripted-1, scripted-2, …: once a's
    # scripted-1 is closed, b's scripted-1 is another conversation. Under the same id an
    # editor would show it inside the old one's transcript (and the history would mix them).
    agents = {}
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        agents[name] = scripted(says(f"from {name}"), tmp_path / name)
    settings = with_fast_demo({"agents": agents, "defaultAgent": "a"})
    editor = await start_editor(tmp_path, workspace, "neovim", settings)
    first = (await editor.new_session(agent="a"))["sessionId"]
    await editor.prompt(first, "hello a")
    assert await editor.acp(p.ACP_CLOSE_SESSION, {"sessionId": first}) == {}
    second = (await editor.new_session(agent="b"))["sessionId"]
    assert second != first
    await editor.prompt(second, "hello b")
    assert editor.sessions[second].message_texts() == ["hello b", "from b"]
    assert editor.sessions[first].message_texts() == ["hello a", "from a"]
    await editor.shutdown_session()
