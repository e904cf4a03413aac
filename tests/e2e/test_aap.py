"""An editor drives an AAP agent exactly as it drives an ACP agent, through the real server.

The AAP v3 test server (tests/aap_server, on 127.0.0.1) plays the agent; the scripted LSP
editor talks to a real ``acp-lsp`` process. Every test asserts what the editor sees (the
acp/* wire, its documents) and what reached the AAP server (the recorded requests).
Scenarios are picked by a keyword in the prompt (tests/aap_server/model.py).
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from pygls.exceptions import JsonRpcException

from acp_lsp import protocol as p
from acp_lsp.backends.aap_tools import CLIENT_TOOLS
from tests.aap_server import AapServer
from tests.e2e.conftest import ROOT, server_env, start_editor, with_fast_demo
from tests.support.editor_model import EditorModel, view_of
from tests.support.lsp_editor import TestEditor, pick

pytest_plugins = ["tests.aap_server.fixtures"]
pytestmark = pytest.mark.timeout(60)

JsonObject = dict[str, Any]
AGENT = "aap"  # the agent's name in the editor's configuration
MODES = ["delta", "message", "none"]


def aap_config(server: AapServer, **extra: Any) -> JsonObject:
    return {"url": server.url, "agent": "coder", **extra}


async def open_editor(
    tmp_path: Path,
    workspace: Path,
    server: AapServer,
    profile: str = "neovim",
    *,
    rich: bool = True,
    **agent: Any,
) -> TestEditor:
    """An editor whose default agent is the AAP test server's ``coder`` (demo also configured)."""
    options = {"agents": {AGENT: aap_config(server, **agent)}, "defaultAgent": AGENT}
    return await start_editor(tmp_path, workspace, profile, with_fast_demo(options), rich=rich)


async def close_editor(editor: TestEditor) -> None:
    await editor.shutdown_session()
    assert not editor.schema_errors, "\n".join(editor.schema_errors)


async def error_of(coro: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as info:
        await coro
    return info.value


def texts_by_role(editor: TestEditor, sid: str) -> list[tuple[str, str]]:
    model = editor.sessions[sid]
    return [(m["role"], "".join(b.get("text", "") for b in m["content"])) for m in model.messages]


def tool_text(call: JsonObject) -> str:
    return "".join(
        item.get("content", {}).get("text", "")
        for item in call.get("content") or []
        if item.get("type") == "content"
    )


async def assert_editor_matches_snapshot(editor: TestEditor, sid: str) -> JsonObject:
    """What the editor built from notifications is exactly the bridge's session."""
    final: JsonObject = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    assert editor.sessions[sid].view() == view_of(final)
    assert final["seq"] == editor.sessions[sid].seq
    return final


def turn_messages(server: AapServer, sid: str) -> list[list[JsonObject]]:
    return [body["messages"] for body in server.state.turn_bodies(sid)]


# -- agents and stream modes ---------------------------------------------------------------
@pytest.mark.parametrize("profile", ["visual_studio_code", "neovim"])
@pytest.mark.parametrize("mode", MODES)
async def test_stream_modes_text_and_thinking(
    tmp_path: Path, workspace: Path, aap_server: AapServer, mode: str, profile: str
) -> None:
    editor = await open_editor(tmp_path, workspace, aap_server, profile, stream=mode)
    listed = {a["name"]: a for a in (await editor.acp(p.ACP_LIST_AGENTS))["agents"]}
    assert listed[AGENT]["protocol"] == "aap" and listed[AGENT]["default"] is True

    snap = await editor.new_session()
    sid = snap["sessionId"]
    assert snap["agent"] == AGENT and snap["status"] == "idle"
    assert sid in aap_server.state.sessions  # the bridge's session is the server's

    result = await editor.prompt(sid, "think about it")
    assert result == {"stopReason": "end_turn"}
    assert texts_by_role(editor, sid) == [
        ("user", "think about it"),
        ("thought", "Let me think this through."),
        ("agent", "Here is my answer."),
    ]
    assert editor.status_values(sid) == ["running", "idle"]
    assert editor.statuses[sid][-1]["stopReason"] == "end_turn"
    await assert_editor_matches_snapshot(editor, sid)

    # exactly one turn request, in the configured mode, with only the new user message
    [body] = aap_server.state.turn_bodies(sid)
    assert body["stream"] == mode
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "think about it"}]}
    ]
    # once used, the agent shows with the title GET /meta gives it
    listed = {a["name"]: a for a in (await editor.acp(p.ACP_LIST_AGENTS))["agents"]}
    assert listed[AGENT]["title"] == "Coder" and listed[AGENT]["running"] is True

    # a second turn goes on in the same session: the server owns history, nothing re-sent
    assert (await editor.prompt(sid, "hello again")) == {"stopReason": "end_turn"}
    assert texts_by_role(editor, sid)[-1] == ("agent", "You said: hello again")
    assert turn_messages(aap_server, sid)[-1] == [
        {"role": "user", "content": [{"type": "text", "text": "hello again"}]}
    ]
    await close_editor(editor)


async def test_best_offered_mode_and_prompt_blocks(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    """No ``stream`` configured: delta. An editor's ContentBlock[] prompt becomes AAP content."""
    editor = await open_editor(tmp_path, workspace, aap_server)
    sid = (await editor.new_session())["sessionId"]
    app = (workspace / "src" / "app.py").as_uri()  # (a name without a scenario keyword)
    prompt = [
        {"type": "text", "text": "hi, see"},
        {"type": "resource_link", "uri": app, "name": "app.py"},
        {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
    ]
    assert await editor.prompt(sid, prompt) == {"stopReason": "end_turn"}
    [body] = aap_server.state.turn_bodies(sid)
    assert body["stream"] == "delta"
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "hi, see"},
                {"type": "text", "text": f"[app.py]({app})"},
                {"type": "image", "url": "data:image/png;base64,iVBORw0KGgo="},
            ],
        }
    ]
    # the editor shows the prompt as sent
    user = editor.sessions[sid].messages[0]
    assert user["role"] == "user" and user["content"] == prompt
    await close_editor(editor)


async def test_unoffered_stream_mode_falls_back_with_a_warning(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    """The ``basic`` agent offers only ``none`` (and only compacted history)."""
    editor = await open_editor(tmp_path, workspace, aap_server, agent="basic", stream="delta")
    sid = (await editor.new_session())["sessionId"]
    assert await editor.prompt(sid, "think about it") == {"stopReason": "end_turn"}
    assert [b["stream"] for b in aap_server.state.turn_bodies(sid)] == ["none"]
    logs = " | ".join(m.message for m in editor.log_messages)
    assert f"AAP agent '{AGENT}' does not offer stream mode 'delta'" in logs
    assert texts_by_role(editor, sid)[-1] == ("agent", "Here is my answer.")
    # history comes back from the type the agent declares (compacted: thinking dropped)
    await editor.acp(p.ACP_CLOSE_SESSION, {"sessionId": sid})
    loaded = await editor.acp(p.ACP_LOAD_SESSION, {"agent": AGENT, "sessionId": sid})
    assert [m["role"] for m in loaded["messages"]] == ["user", "agent"]
    await close_editor(editor)


async def test_other_stop_reasons_reach_the_editor(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    """refusal and max_tokens end the turn with that reason; error fails it; the session stays."""
    editor = await open_editor(tmp_path, workspace, aap_server)
    sid = (await editor.new_session())["sessionId"]
    for prompt, stop, answer in [
        ("please refuse", "refusal", "I can't help with that."),
        ("overflow the context", "max_tokens", "The context is full"),
    ]:
        assert await editor.prompt(sid, prompt) == {"stopReason": stop}
        assert texts_by_role(editor, sid)[-1] == ("agent", answer)
        assert editor.statuses[sid][-1] == {"sessionId": sid, "status": "idle", "stopReason": stop}
    err = await error_of(editor.prompt(sid, "fail please"))
    assert err.code == p.AGENT_ERROR and err.data == {"stopReason": "error"}
    assert AGENT in err.message
    last = editor.statuses[sid][-1]
    assert last["status"] == "idle" and last["error"]["code"] == p.AGENT_ERROR
    assert await editor.prompt(sid, "hello") == {"stopReason": "end_turn"}
    await assert_editor_matches_snapshot(editor, sid)
    await close_editor(editor)


# -- tools ---------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
async def test_trusted_server_tool_runs_inline(
    tmp_path: Path, workspace: Path, aap_server: AapServer, mode: str
) -> None:
    editor = await open_editor(
        tmp_path, workspace, aap_server, stream=mode, trustedTools=["get_weather"]
    )
    sid = (await editor.new_session())["sessionId"]
    [created] = aap_server.state.bodies("POST", "/sessions")
    assert created["agent"]["tools"] == [
        {"name": "get_weather", "trust": True},
        {"name": "delete_records", "trust": False},
    ]
    assert [t["name"] for t in created["tools"]] == ["read_file", "write_file"]

    assert await editor.prompt(sid, "weather in Paris?") == {"stopReason": "end_turn"}
    model = editor.sessions[sid]
    [call] = model.tool_calls.values()
    assert call["title"] == "Get weather"  # ToolSpec.title from GET /meta
    assert call["status"] == "completed"
    assert call["rawInput"] == {"city": "Paris"}
    assert tool_text(call) == "Sunny, 21°C in Paris"
    assert texts_by_role(editor, sid)[1:] == [
        ("agent", "Let me check."),
        ("agent", "Weather report: Sunny, 21°C in Paris"),
    ]
    # the order the editor shows: text, the tool call, then the follow-up text
    assert [next(iter(item)) for item in model.timeline] == [
        "message",
        "message",
        "toolCall",
        "message",
    ]
    assert editor.permission_requests == []
    assert len(aap_server.state.turn_bodies(sid)) == 1  # trusted: no second request
    await assert_editor_matches_snapshot(editor, sid)
    await close_editor(editor)


@pytest.mark.parametrize("mode", MODES)
async def test_untrusted_tool_permission_granted(
    tmp_path: Path, workspace: Path, aap_server: AapServer, mode: str
) -> None:
    editor = await open_editor(tmp_path, workspace, aap_server, "visual_studio_code", stream=mode)
    editor.permission_policy = pick("allow_once")
    sid = (await editor.new_session())["sessionId"]
    assert await editor.prompt(sid, "delete the users table") == {"stopReason": "end_turn"}
    # work-done progress names the tool call while it waits (as for ACP agents)
    reports = [r for items in editor.progress_reports.values() for r in items]
    assert getattr(reports[0], "kind", None) == "begin"
    assert getattr(reports[-1], "kind", None) == "end"
    assert "Delete records" in [getattr(r, "message", None) for r in reports]

    [asked] = editor.permission_requests
    assert asked["sessionId"] == sid
    assert asked["toolCall"]["title"] == "Delete records"
    assert asked["toolCall"]["rawInput"] == {"table": "users"}
    assert {o["kind"] for o in asked["options"]} == {"allow_once", "reject_once"}
    assert "awaiting_permission" in editor.status_values(sid)

    call_id = asked["toolCall"]["toolCallId"]
    assert turn_messages(aap_server, sid)[1] == [
        {"role": "tool_permission", "toolCallId": call_id, "granted": True}
    ]
    assert all(b["stream"] == mode for b in aap_server.state.turn_bodies(sid))
    call = editor.sessions[sid].tool_calls[call_id]
    assert call["status"] == "completed"
    assert tool_text(call) == "Deleted 3 rows from users"
    assert texts_by_role(editor, sid)[-1] == ("agent", "Outcome: Deleted 3 rows from users")
    await assert_editor_matches_snapshot(editor, sid)
    await close_editor(editor)


async def test_untrusted_tool_permission_denied_with_reason(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    editor = await open_editor(tmp_path, workspace, aap_server, profile="visual_studio_code")
    editor.permission_policy = lambda params: {
        "outcome": {"outcome": "selected", "optionId": "reject_once"},
        "reason": "not on production",
    }
    sid = (await editor.new_session())["sessionId"]
    assert await editor.prompt(sid, "delete the users table") == {"stopReason": "end_turn"}
    call_id = editor.permission_requests[0]["toolCall"]["toolCallId"]
    assert turn_messages(aap_server, sid)[1] == [
        {
            "role": "tool_permission",
            "toolCallId": call_id,
            "granted": False,
            "reason": "not on production",
        }
    ]
    call = editor.sessions[sid].tool_calls[call_id]
    assert call["status"] == "failed"
    assert texts_by_role(editor, sid)[-1] == (
        "agent",
        "Outcome: Tool call denied: not on production",
    )
    # nothing was deleted: the server's history holds the denial, not a result
    history = aap_server.state.sessions[sid].history
    assert {
        "role": "tool",
        "toolCallId": call_id,
        "content": "Tool call denied: not on production",
    } in history
    await assert_editor_matches_snapshot(editor, sid)
    await close_editor(editor)


async def test_dismissed_permission_is_a_denial(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    """A plain editor (window/showMessageRequest) that dismisses the prompt never approves."""
    editor = await open_editor(tmp_path, workspace, aap_server, rich=False)
    editor.message_policy = lambda params: None
    sid = (await editor.new_session())["sessionId"]
    assert await editor.prompt(sid, "delete the users table") == {"stopReason": "end_turn"}
    [request] = editor.message_requests
    assert "Delete records" in request.message
    assert [a.title for a in request.actions or []] == ["Allow", "Reject"]
    [answer] = turn_messages(aap_server, sid)[1]
    assert answer["role"] == "tool_permission" and answer["granted"] is False
    assert texts_by_role(editor, sid)[-1][1].startswith("Outcome: Tool call denied")
    await close_editor(editor)


async def test_client_read_file_reads_the_unsaved_buffer(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("saved on disk\n", encoding="utf-8")
    editor = await open_editor(tmp_path, workspace, aap_server)
    editor.open(notes, "typed but not saved\n")
    sid = (await editor.new_session())["sessionId"]
    assert await editor.prompt(sid, "read my notes") == {"stopReason": "end_turn"}

    [call] = editor.sessions[sid].tool_calls.values()
    assert call["title"] == "Read file" and call["kind"] == "read"
    assert call["status"] == "completed"
    assert call["locations"] == [{"path": str(notes)}]
    assert editor.permission_requests == []  # the bridge's own read in the workspace
    _user_turn, second = turn_messages(aap_server, sid)
    assert second == [
        {"role": "tool", "toolCallId": call["toolCallId"], "content": "typed but not saved\n"}
    ]
    assert texts_by_role(editor, sid)[-1] == ("agent", "The file says: typed but not saved\n")
    assert notes.read_text(encoding="utf-8") == "saved on disk\n"
    # follow-along: the editor was shown the file the agent read
    await editor.wait_for(lambda: bool(editor.shown_documents))
    assert editor.shown_documents[-1].uri == notes.as_uri()
    assert editor.shown_documents[-1].take_focus is False
    await assert_editor_matches_snapshot(editor, sid)
    await close_editor(editor)


@pytest.mark.parametrize("profile", ["visual_studio_code", "neovim"])
async def test_client_write_file_lands_in_the_editor_buffer(
    tmp_path: Path, workspace: Path, aap_server: AapServer, profile: str
) -> None:
    """The agent replaces the file it knows (the disk); the user's unsaved line is kept."""
    out = workspace / "out.txt"
    out.write_text("old text\n", encoding="utf-8")
    editor = await open_editor(tmp_path, workspace, aap_server, profile)
    editor.open(out, "old text\nplus an unsaved line\n")
    sid = (await editor.new_session())["sessionId"]
    assert await editor.prompt(sid, "write the file") == {"stopReason": "end_turn"}

    assert editor.applied_edits, "the write reached the editor as workspace/applyEdit"
    merged = "hello from the agent\nplus an unsaved line\n"
    assert editor.doc(out).text == merged
    assert editor.doc(out).version > 1
    assert out.read_text(encoding="utf-8") == merged  # saved by the editor
    [call] = editor.sessions[sid].tool_calls.values()
    assert call["kind"] == "edit" and call["status"] == "completed"
    [answer] = turn_messages(aap_server, sid)[1]
    assert answer == {"role": "tool", "toolCallId": call["toolCallId"], "content": f"Wrote {out}"}
    await close_editor(editor)


async def test_client_write_file_creates_a_new_file(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    out = workspace / "out.txt"
    editor = await open_editor(tmp_path, workspace, aap_server, "visual_studio_code")
    sid = (await editor.new_session())["sessionId"]
    assert await editor.prompt(sid, "write the file") == {"stopReason": "end_turn"}
    assert editor.doc(out).text == "hello from the agent\n"
    assert out.read_text(encoding="utf-8") == "hello from the agent\n"
    assert editor.sessions[sid].tool_calls["call_001"]["status"] == "completed"
    await close_editor(editor)


async def test_parallel_calls_resubmitted_in_one_request(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    (workspace / "a.txt").write_text("A", encoding="utf-8")
    (workspace / "b.txt").write_text("B", encoding="utf-8")
    editor = await open_editor(
        tmp_path, workspace, aap_server, trustedTools=["get_weather"], stream="message"
    )
    editor.permission_policy = pick("allow_once")
    sid = (await editor.new_session())["sessionId"]
    assert await editor.prompt(sid, "do these in parallel") == {"stopReason": "end_turn"}

    calls = editor.sessions[sid].tool_calls
    assert list(calls) == ["call_001", "call_002", "call_003", "call_004"]
    assert {c["status"] for c in calls.values()} == {"completed"}
    # one permission prompt: the untrusted call; client tools and the trusted one ran unasked
    assert [r["toolCall"]["toolCallId"] for r in editor.permission_requests] == ["call_004"]
    # every answer went back together, in one request
    assert turn_messages(aap_server, sid)[1:] == [
        [
            {"role": "tool", "toolCallId": "call_001", "content": "A"},
            {"role": "tool", "toolCallId": "call_002", "content": "B"},
            {"role": "tool_permission", "toolCallId": "call_004", "granted": True},
        ]
    ]
    assert texts_by_role(editor, sid)[-1] == (
        "agent",
        "All done: Sunny, 21°C in Oslo | A | B | Deleted 3 rows from logs",
    )
    await assert_editor_matches_snapshot(editor, sid)
    await close_editor(editor)


async def test_unexposed_tool_is_shown_and_never_fatal(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    editor = await open_editor(tmp_path, workspace, aap_server)
    sid = (await editor.new_session())["sessionId"]
    assert await editor.prompt(sid, "solve the mystery") == {"stopReason": "end_turn"}
    [call] = editor.sessions[sid].tool_calls.values()
    assert call["title"] == "internal_lookup" and call["status"] == "completed"
    assert editor.permission_requests == []
    assert texts_by_role(editor, sid)[-1] == ("agent", "Looked it up: 42")
    await close_editor(editor)


# -- sessions ------------------------------------------------------------------------------
async def test_load_session_resolves_an_unanswered_tool_call(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    """The first editor goes away while a permission prompt is open; the next one resumes."""
    first = await open_editor(tmp_path / "one", workspace, aap_server)
    never: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    first.permission_policy = lambda _params: never
    sid = (await first.new_session())["sessionId"]
    turn = asyncio.ensure_future(first.prompt(sid, "delete the users table"))
    await first.wait_for(lambda: bool(first.permission_requests))
    await first.shutdown_session()  # the editor (and its acp-lsp) is gone mid-turn
    turn.cancel()
    assert not first.schema_errors
    assert len(aap_server.state.turn_bodies(sid)) == 1  # the call is still unanswered

    second = await open_editor(tmp_path / "two", workspace, aap_server, "visual_studio_code")
    second.permission_policy = pick("allow_once")
    snap = await second.acp(p.ACP_LOAD_SESSION, {"agent": AGENT, "sessionId": sid})
    assert snap["sessionId"] == sid and snap["status"] == "idle"
    [asked] = second.permission_requests
    assert asked["toolCall"]["toolCallId"] == "call_001"
    assert asked["toolCall"]["title"] == "Delete records"
    assert turn_messages(aap_server, sid)[1:] == [
        [{"role": "tool_permission", "toolCallId": "call_001", "granted": True}]
    ]
    texts = [
        (m["role"], "".join(b.get("text", "") for b in m["content"])) for m in snap["messages"]
    ]
    assert texts == [
        ("user", "delete the users table"),
        ("agent", "Outcome: Deleted 3 rows from users"),
    ]
    [call] = snap["toolCalls"]
    assert call["toolCallId"] == "call_001" and call["status"] == "completed"

    # the resumed session is an ordinary session: the editor follows it and prompts it
    second.sessions[sid] = EditorModel(snap)
    assert await second.prompt(sid, "thanks") == {"stopReason": "end_turn"}
    assert texts_by_role(second, sid)[-1] == ("agent", "You said: thanks")
    await assert_editor_matches_snapshot(second, sid)
    await close_editor(second)


async def test_close_then_load_rebuilds_from_history(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    editor = await open_editor(tmp_path, workspace, aap_server, trustedTools=["get_weather"])
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "think about it")
    await editor.prompt(sid, "weather in Paris?")
    before = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    assert await editor.acp(p.ACP_CLOSE_SESSION, {"sessionId": sid}) == {}
    assert sid in aap_server.state.sessions  # history stays with the agent

    loaded = await editor.acp(p.ACP_LOAD_SESSION, {"agent": AGENT, "sessionId": sid})
    assert ("GET", {"type": "full"}) in [
        (r.method, r.query) for r in aap_server.state.requests if r.path.endswith("/history")
    ]

    def shown(snap: JsonObject) -> JsonObject:
        messages = [(m["role"], m["content"]) for m in snap["messages"]]
        kinds = [next(iter(item)) for item in snap["timeline"]]
        return {"messages": messages, "toolCalls": snap["toolCalls"], "timeline": kinds}

    assert shown(loaded) == shown(before)
    assert loaded["status"] == "idle"
    assert len(aap_server.state.turn_bodies(sid)) == 2  # loading posts nothing
    await close_editor(editor)


async def test_load_session_resumes_a_client_tool_call(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    """History ends with an unanswered read_file: the loading editor runs it, one request."""
    (workspace / "notes.txt").write_text("from disk\n", encoding="utf-8")
    async with httpx.AsyncClient(base_url=aap_server.url + "/") as http:
        created = await http.post(
            "sessions", json={"agent": {"name": "coder"}, "tools": list(CLIENT_TOOLS)}
        )
        sid = created.json()["sessionId"]
        answer = await http.post(
            f"sessions/{sid}/turns",
            json={"messages": [{"role": "user", "content": "read my notes"}]},
        )
        assert answer.json()["stopReason"] == "tool_use"

    editor = await open_editor(tmp_path, workspace, aap_server)
    snap = await editor.acp(p.ACP_LOAD_SESSION, {"agent": AGENT, "sessionId": sid})
    assert turn_messages(aap_server, sid)[1:] == [
        [{"role": "tool", "toolCallId": "call_001", "content": "from disk\n"}]
    ]
    [call] = snap["toolCalls"]
    assert call["title"] == "Read file" and call["status"] == "completed"
    assert snap["messages"][-1]["content"][0]["text"] == "The file says: from disk\n"
    assert editor.permission_requests == []
    await close_editor(editor)


async def test_list_and_delete_sessions(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    editor = await open_editor(tmp_path, workspace, aap_server)
    ids = [(await editor.new_session())["sessionId"] for _ in range(3)]
    # a session of another agent on the same server is not this agent's
    async with httpx.AsyncClient(base_url=aap_server.url + "/") as http:
        other = (await http.post("sessions", json={"agent": {"name": "basic"}})).json()
    await editor.acp(p.ACP_CLOSE_SESSION, {"sessionId": ids[0]})

    listed = (await editor.acp(p.ACP_LIST_SESSIONS, {"agent": AGENT}))["sessions"]
    by_id = {s["sessionId"]: s for s in listed}
    assert set(by_id) == set(ids)  # every page (the server pages by 2), only this agent's
    assert other["sessionId"] not in by_id
    assert {s["agent"] for s in listed} == {AGENT}
    assert [by_id[i]["live"] for i in ids] == [False, True, True]
    assert [
        r.query for r in aap_server.state.requests if r.path == "/sessions" and r.method == "GET"
    ] == [
        {},
        {"after": "c2"},
    ]

    # delete a live session: gone on the server, closed in the editor
    assert await editor.acp(p.ACP_DELETE_SESSION, {"sessionId": ids[1]}) == {}
    assert ids[1] not in aap_server.state.sessions
    assert editor.status_values(ids[1])[-1] == "closed"
    err = await error_of(editor.acp(p.ACP_GET_SESSION, {"sessionId": ids[1]}))
    assert err.code == p.UNKNOWN_SESSION
    # delete one the editor no longer tracks, by agent
    assert await editor.acp(p.ACP_DELETE_SESSION, {"agent": AGENT, "sessionId": ids[0]}) == {}
    assert ids[0] not in aap_server.state.sessions
    # deleting it again: the server has no such session
    err = await error_of(editor.acp(p.ACP_DELETE_SESSION, {"agent": AGENT, "sessionId": ids[0]}))
    assert err.code == p.UNKNOWN_SESSION and ids[0] in err.message
    listed = (await editor.acp(p.ACP_LIST_SESSIONS, {"agent": AGENT}))["sessions"]
    assert [s["sessionId"] for s in listed] == [ids[2]]
    # and it cannot be loaded any more
    err = await error_of(editor.acp(p.ACP_LOAD_SESSION, {"agent": AGENT, "sessionId": ids[0]}))
    assert err.code == p.UNKNOWN_SESSION and ids[0] in err.message
    await close_editor(editor)


# -- failures ------------------------------------------------------------------------------
async def test_auth_failure_names_the_agent_never_the_key(
    tmp_path: Path, workspace: Path, aap_server: AapServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-wrong-7f3a9c2e"
    monkeypatch.setenv("AAP_TEST_KEY", key)
    aap_server.state.api_key = "the-right-key"
    editor = await open_editor(tmp_path, workspace, aap_server, apiKey="${env:AAP_TEST_KEY}")
    err = await error_of(editor.new_session())
    assert err.code == p.AUTH_REQUIRED
    assert AGENT in err.message and "apiKey" in err.message
    # the key did go to the server (so its absence below means something), once: no retries
    [create] = [r for r in aap_server.state.requests if r.method == "POST"]
    assert create.authorization == f"Bearer {key}"

    # the server keeps serving; the other agent works
    demo = await editor.new_session(agent="demo")
    assert (await editor.prompt(demo["sessionId"], "hello"))["stopReason"] == "end_turn"
    # and once the key is right, the same configuration works (nothing was cached as broken)
    aap_server.state.api_key = key
    sid = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(sid, "hi"))["stopReason"] == "end_turn"
    # a key revoked mid-session: the turn fails clearly, the session stays
    aap_server.state.api_key = "rotated"
    turn_err = await error_of(editor.prompt(sid, "hi again"))
    assert turn_err.code == p.AUTH_REQUIRED and AGENT in turn_err.message
    assert editor.statuses[sid][-1]["status"] == "idle"
    assert editor.statuses[sid][-1]["error"]["code"] == p.AUTH_REQUIRED
    await editor.shutdown_session()

    seen = json.dumps(
        [
            err.message,
            err.data,
            turn_err.message,
            turn_err.data,
            [m.message for m in editor.messages],
            [m.message for m in editor.log_messages],
            editor.notifications,
        ],
        default=str,
    )
    assert key not in seen
    assert not editor.schema_errors


async def test_unreachable_server_and_wrong_version(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()  # nothing listens there now
    options = {
        "agents": {
            "down": {"url": f"http://127.0.0.1:{port}/v1"},
            "old": aap_config(aap_server),
            "ghost": aap_config(aap_server, agent="nobody"),
        }
    }
    editor = await start_editor(tmp_path, workspace, "neovim", with_fast_demo(options))
    err = await error_of(editor.new_session(agent="down"))
    assert err.code == p.AGENT_UNAVAILABLE
    assert "'down'" in err.message and f"127.0.0.1:{port}" in err.message
    err = await error_of(editor.new_session(agent="ghost"))
    assert err.code == p.AGENT_UNAVAILABLE
    assert "nobody" in err.message and "coder" in err.message  # says what it does offer
    aap_server.state.meta_version = 2
    err = await error_of(editor.new_session(agent="old"))
    assert err.code == p.AGENT_UNAVAILABLE
    assert "version 2" in err.message and "3" in err.message
    assert not aap_server.state.bodies("POST", "/sessions")  # refused before any session
    # nothing broke: the server goes on serving the demo agent
    sid = (await editor.new_session(agent="demo"))["sessionId"]
    assert (await editor.prompt(sid, "hello"))["stopReason"] == "end_turn"
    await close_editor(editor)


async def test_session_gone_on_the_server(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    editor = await open_editor(tmp_path, workspace, aap_server)
    sid = (await editor.new_session())["sessionId"]
    del aap_server.state.sessions[sid]  # deleted by another client
    err = await error_of(editor.prompt(sid, "hello"))
    assert err.code == p.UNKNOWN_SESSION and sid in err.message
    # the editor is told the session is closed (not idle: prompting again cannot work)
    last = editor.statuses[sid][-1]
    assert last["status"] == "closed" and last["error"]["code"] == p.UNKNOWN_SESSION
    assert editor.status_values(sid) == ["running", "closed"]
    # a new session works
    fresh = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(fresh, "hello"))["stopReason"] == "end_turn"
    await close_editor(editor)


async def test_restart_agent_keeps_aap_sessions(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    """An AAP agent's sessions live on its server: restarting the bridge's side keeps them."""
    editor = await open_editor(tmp_path, workspace, aap_server)
    sid = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(sid, "hello"))["stopReason"] == "end_turn"
    meta_reads = len(aap_server.state.bodies("GET", "/meta"))
    assert await editor.acp(p.ACP_RESTART_AGENT, {"agent": AGENT}) == {}
    assert (await editor.prompt(sid, "again"))["stopReason"] == "end_turn"
    assert texts_by_role(editor, sid)[-1] == ("agent", "You said: again")
    assert len(aap_server.state.bodies("GET", "/meta")) == meta_reads + 1  # read afresh
    await close_editor(editor)


async def test_grant_without_tool_result_event(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    """The reference SDK sends no tool_result after a grant (aap.md §10.2): still completed."""
    aap_server.state.silent_grants = True
    editor = await open_editor(tmp_path, workspace, aap_server)
    sid = (await editor.new_session())["sessionId"]
    assert await editor.prompt(sid, "delete the users table") == {"stopReason": "end_turn"}
    assert editor.sessions[sid].tool_calls["call_001"]["status"] == "completed"
    assert texts_by_role(editor, sid)[-1] == ("agent", "Outcome: Deleted 3 rows from users")
    await assert_editor_matches_snapshot(editor, sid)
    await close_editor(editor)


@pytest.mark.parametrize("mode", MODES)
async def test_stream_cut_mid_turn(
    tmp_path: Path, workspace: Path, aap_server: AapServer, mode: str
) -> None:
    editor = await open_editor(tmp_path, workspace, aap_server, stream=mode)
    sid = (await editor.new_session())["sessionId"]
    err = await error_of(editor.prompt(sid, "cut me off"))
    assert err.code == p.AGENT_ERROR
    assert AGENT in err.message
    assert "cut" in err.message or "before turn_stop" in err.message
    last = editor.statuses[sid][-1]
    assert last["status"] == "idle" and last["error"]["code"] == p.AGENT_ERROR
    if mode != "none":  # what streamed before the cut stays visible
        assert texts_by_role(editor, sid)[-1] == ("agent", "Partial answer that never")
    # the session is still usable
    assert await editor.prompt(sid, "hello") == {"stopReason": "end_turn"}
    assert texts_by_role(editor, sid)[-1] == ("agent", "You said: hello")
    await assert_editor_matches_snapshot(editor, sid)
    await close_editor(editor)


@pytest.mark.parametrize("mode", MODES)
async def test_cancel_mid_stream(
    tmp_path: Path, workspace: Path, aap_server: AapServer, mode: str
) -> None:
    aap_server.state.hang_seconds = 5  # bounds the server side of a JSON turn nobody awaits
    editor = await open_editor(tmp_path, workspace, aap_server, stream=mode)
    sid = (await editor.new_session())["sessionId"]
    turn = asyncio.ensure_future(editor.prompt(sid, "hang on"))
    if mode == "none":  # nothing streams: cancel while the request is open
        await editor.wait_for(lambda: len(aap_server.state.turn_bodies(sid)) == 1)
    else:
        await editor.wait_for(lambda: ("agent", "Working on it") in texts_by_role(editor, sid))
    assert await editor.acp(p.ACP_CANCEL, {"sessionId": sid}) == {}
    assert await turn == {"stopReason": "cancelled"}
    assert "cancelling" in editor.status_values(sid)
    assert editor.statuses[sid][-1] == {
        "sessionId": sid,
        "status": "idle",
        "stopReason": "cancelled",
    }
    if mode != "none":
        # closing the stream is v3's cancel: the server saw its client go away
        for _ in range(100):
            if aap_server.state.disconnects:
                break
            await asyncio.sleep(0.02)
        assert aap_server.state.disconnects == 1
    # the session is still usable
    assert await editor.prompt(sid, "hello") == {"stopReason": "end_turn"}
    assert texts_by_role(editor, sid)[-1] == ("agent", "You said: hello")
    await close_editor(editor)


async def test_cancel_while_permission_is_open(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    editor = await open_editor(tmp_path, workspace, aap_server)
    never: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    editor.permission_policy = lambda _params: never
    sid = (await editor.new_session())["sessionId"]
    turn = asyncio.ensure_future(editor.prompt(sid, "delete the users table"))
    await editor.wait_for(lambda: bool(editor.permission_requests))
    assert editor.status_values(sid)[-1] == "awaiting_permission"
    await editor.acp(p.ACP_CANCEL, {"sessionId": sid})
    assert await turn == {"stopReason": "cancelled"}
    assert editor.sessions[sid].tool_calls["call_001"]["status"] == "cancelled"
    # the next prompt first answers the call the cancelled turn left open, in one request
    editor.permission_policy = pick("allow_once")
    assert await editor.prompt(sid, "hello") == {"stopReason": "end_turn"}
    [answers] = turn_messages(aap_server, sid)[1:]
    assert answers[0]["role"] == "tool_permission" and answers[0]["granted"] is False
    assert answers[0]["toolCallId"] == "call_001"
    assert answers[1] == {"role": "user", "content": [{"type": "text", "text": "hello"}]}
    assert texts_by_role(editor, sid)[-1] == ("agent", "You said: hello")
    await close_editor(editor)


# -- ACP and AAP side by side --------------------------------------------------------------
async def test_acp_and_aap_agents_in_one_editor(
    tmp_path: Path, workspace: Path, aap_server: AapServer
) -> None:
    editor = await open_editor(tmp_path, workspace, aap_server, "visual_studio_code")
    agents = {a["name"]: a for a in (await editor.acp(p.ACP_LIST_AGENTS))["agents"]}
    assert agents["demo"]["protocol"] == "acp" and agents[AGENT]["protocol"] == "aap"
    acp_sid = (await editor.new_session(agent="demo"))["sessionId"]
    aap_sid = (await editor.new_session(agent=AGENT))["sessionId"]
    acp_turn = asyncio.ensure_future(editor.prompt(acp_sid, "hello"))
    aap_turn = asyncio.ensure_future(editor.prompt(aap_sid, "think about it"))
    assert (await acp_turn)["stopReason"] == "end_turn"
    assert (await aap_turn)["stopReason"] == "end_turn"
    for sid in (acp_sid, aap_sid):
        assert editor.status_values(sid)[0] == "running"
        assert editor.status_values(sid)[-1] == "idle"
        await assert_editor_matches_snapshot(editor, sid)
    assert texts_by_role(editor, aap_sid)[-1] == ("agent", "Here is my answer.")
    assert [
        r["agent"] for r in (await editor.acp(p.ACP_LIST_SESSIONS, {"agent": "demo"}))["sessions"]
    ] == ["demo"]
    await close_editor(editor)


# -- acp-lsp demo --agent <an AAP agent> ---------------------------------------------------
@pytest.mark.timeout(120)
def test_demo_command_drives_an_aap_agent(tmp_path: Path, aap_server: AapServer) -> None:
    """``acp-lsp demo --agent aapdemo --config FILE`` against the test server, as a user runs it."""
    config = tmp_path / "aap.toml"
    config.write_text(
        f'[agents.aapdemo]\nurl = "{aap_server.url}"\nagent = "coder"\n'
        'trustedTools = ["get_weather"]\n',
        encoding="utf-8",
    )
    env = {**server_env(tmp_path), "NO_COLOR": "1"}
    command = [sys.executable, "-m", "acp_lsp", "demo", "--yes", "--agent", "aapdemo"]
    command += ["--config", str(config), "--prompt", "delete the old logs"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=100, cwd=ROOT)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "aapdemo" in out
    assert "? permission: Delete records" in out and "→ Allow (--yes)" in out
    assert "✔ [delete] Delete records (completed)" in out
    assert "agent › Outcome: Deleted 3 rows from users" in out
    assert "turn ended: end_turn" in out
    # the server really ran it: one session, a turn, then the permission in a second request
    [sid] = aap_server.state.sessions
    assert turn_messages(aap_server, sid)[1] == [
        {"role": "tool_permission", "toolCallId": "call_001", "granted": True}
    ]
