"""The AAP v3 test server follows the specification (reference/aap.md §2-§6), seen over HTTP."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.aap_server import AapServer

pytest_plugins = ["tests.aap_server.fixtures"]  # the aap_server fixture
pytestmark = pytest.mark.timeout(15)

JsonObject = dict[str, Any]
REPO = Path(__file__).resolve().parents[2]
READ_FILE = {"name": "read_file", "description": "read", "parameters": {"type": "object"}}


@pytest.fixture
async def client(aap_server: AapServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=aap_server.url + "/", verify=False) as http:
        yield http


async def create(client: httpx.AsyncClient, agent: JsonObject, **body: Any) -> str:
    response = await client.post("sessions", json={"agent": agent, **body})
    assert response.status_code == 201
    session_id: str = response.json()["sessionId"]
    return session_id


def frames(sse: str) -> list[tuple[str, Any]]:
    """Parse an SSE body strictly: every frame is exactly `event:` then `data:`."""
    assert sse.endswith("\n\n")
    out = []
    for frame in sse[:-2].split("\n\n"):
        event, data = frame.split("\n")
        assert event.startswith("event: ") and data.startswith("data: ")
        out.append((event.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return out


async def turn(
    client: httpx.AsyncClient, sid: str, messages: list[JsonObject], stream: str = "delta"
) -> httpx.Response:
    return await client.post(f"sessions/{sid}/turns", json={"stream": stream, "messages": messages})


def user(text: str) -> JsonObject:
    return {"role": "user", "content": text}


async def test_meta_offers_two_agents_with_different_capabilities(
    client: httpx.AsyncClient,
) -> None:
    meta = (await client.get("meta")).json()
    assert meta["version"] == 3
    coder, basic = meta["agents"]
    assert coder["capabilities"]["stream"] == {"delta": {}, "message": {}, "none": {}}
    assert coder["capabilities"]["history"] == {"full": {}, "compacted": {}}
    assert basic["capabilities"]["stream"] == {"none": {}}
    assert basic["capabilities"]["history"] == {"compacted": {}}
    assert [t["name"] for t in coder["tools"]] == ["get_weather", "delete_records"]


async def test_sessions_create_get_delete_and_404s(client: httpx.AsyncClient) -> None:
    sid = await create(
        client, {"name": "coder", "options": {"token": "hunter2"}}, tools=[READ_FILE]
    )
    info = (await client.get(f"sessions/{sid}")).json()
    assert info == {
        "sessionId": sid,
        "agent": {"name": "coder", "tools": [], "options": {"token": "***"}},
        "tools": [READ_FILE],
    }
    assert (await client.delete(f"sessions/{sid}")).status_code == 204
    for method, path in [
        ("GET", f"sessions/{sid}"),
        ("DELETE", f"sessions/{sid}"),
        ("GET", f"sessions/{sid}/history?type=full"),
        ("POST", f"sessions/{sid}/turns"),
    ]:
        response = await client.request(method, path, json={"messages": []})
        assert (response.status_code, response.json()) == (404, {"error": "Session not found"})


async def test_bad_creations_are_400_with_an_error_body(client: httpx.AsyncClient) -> None:
    for agent in (
        {"name": "nobody"},
        {"name": "coder", "tools": [{"name": "launch_missiles"}]},
        {"name": "coder", "options": {"model": "huge"}},
    ):
        response = await client.post("sessions", json={"agent": agent})
        assert response.status_code == 400 and response.json()["error"]


async def test_session_list_pages_with_an_opaque_cursor(client: httpx.AsyncClient) -> None:
    ids = [await create(client, {"name": "coder"}) for _ in range(3)]
    first = (await client.get("sessions")).json()
    assert [s["sessionId"] for s in first["sessions"]] == ids[:2]
    second = (await client.get("sessions", params={"after": first["next"]})).json()
    assert [s["sessionId"] for s in second["sessions"]] == ids[2:]
    assert "next" not in second


async def test_history_type_is_required_and_must_be_declared(client: httpx.AsyncClient) -> None:
    coder = await create(client, {"name": "coder"})
    basic = await create(client, {"name": "basic"})
    assert (await client.get(f"sessions/{coder}/history")).status_code == 400
    undeclared = await client.get(f"sessions/{basic}/history", params={"type": "full"})
    assert (undeclared.status_code, undeclared.json()) == (
        404,
        {"error": "Specified history not found"},
    )
    await turn(client, coder, [user("think")])
    full = (await client.get(f"sessions/{coder}/history", params={"type": "full"})).json()
    compacted = (await client.get(f"sessions/{coder}/history", params={"type": "compacted"})).json()
    assert [b["type"] for b in full["history"]["full"][1]["content"]] == ["thinking", "text"]
    assert [b["type"] for b in compacted["history"]["compacted"][1]["content"]] == ["text"]


async def test_delta_mode_sse_framing(client: httpx.AsyncClient) -> None:
    sid = await create(client, {"name": "coder"})
    response = await turn(client, sid, [user("hello there")])
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    assert response.text.startswith("event: turn_start\ndata: {}\n\n")
    events = frames(response.text)
    assert events[-1] == ("turn_stop", {"stopReason": "end_turn"})
    deltas = [d["delta"] for e, d in events if e == "text_delta"]
    assert len(deltas) > 1 and "".join(deltas) == "You said: hello there"


async def test_message_mode_sends_whole_messages(client: httpx.AsyncClient) -> None:
    sid = await create(client, {"name": "coder"})
    events = frames((await turn(client, sid, [user("think")], stream="message")).text)
    assert events == [
        ("turn_start", {}),
        ("thinking", {"thinking": "Let me think this through."}),
        ("text", {"text": "Here is my answer."}),
        ("turn_stop", {"stopReason": "end_turn"}),
    ]


async def test_none_mode_answers_json_with_the_turns_messages(client: httpx.AsyncClient) -> None:
    sid = await create(client, {"name": "coder", "tools": [{"name": "get_weather", "trust": True}]})
    response = await turn(client, sid, [user("weather")], stream="none")
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["stopReason"] == "end_turn"
    assert [m["role"] for m in body["messages"]] == ["assistant", "tool", "assistant"]


async def test_undeclared_stream_mode_and_missing_messages_are_400(
    client: httpx.AsyncClient,
) -> None:
    sid = await create(client, {"name": "basic"})
    assert (await turn(client, sid, [user("hi")], stream="delta")).status_code == 400
    assert (await client.post(f"sessions/{sid}/turns", json={})).status_code == 400


async def test_bearer_auth_when_a_key_is_set(
    aap_server: AapServer, client: httpx.AsyncClient
) -> None:
    aap_server.state.api_key = "k-123"
    assert (await client.get("meta")).status_code == 200  # /meta stays public
    for headers in ({}, {"Authorization": "Bearer nope"}):
        response = await client.get("sessions", headers=headers)
        assert response.status_code == 401 and response.json()["error"]
    ok = await client.get("sessions", headers={"Authorization": "Bearer k-123"})
    assert ok.status_code == 200


async def test_trusted_tools_run_inline_untrusted_ones_stop_for_tool_use(
    client: httpx.AsyncClient,
) -> None:
    tools = [{"name": "get_weather", "trust": True}, {"name": "delete_records"}]
    sid = await create(client, {"name": "coder", "tools": tools}, tools=[READ_FILE])
    events = frames((await turn(client, sid, [user("parallel")])).text)
    names = [e for e, _ in events]
    assert names == ["turn_start", *["tool_call"] * 4, "tool_result", "turn_stop"]
    assert events[5][1] == {"toolCallId": "call_003", "content": "Sunny, 21°C in Oslo"}
    assert events[-1][1] == {"stopReason": "tool_use"}


async def test_permissions_run_or_deny_and_are_never_stored(
    client: httpx.AsyncClient,
) -> None:
    sid = await create(client, {"name": "coder", "tools": [{"name": "delete_records"}]})
    await turn(client, sid, [user("delete")])
    granted = frames(
        (
            await turn(
                client,
                sid,
                [{"role": "tool_permission", "toolCallId": "call_001", "granted": True}],
            )
        ).text
    )
    assert granted[1] == (
        "tool_result",
        {"toolCallId": "call_001", "content": "Deleted 3 rows from users"},
    )
    await turn(client, sid, [user("delete again")])
    denial = {"role": "tool_permission", "toolCallId": "call_002", "granted": False, "reason": "no"}
    await turn(client, sid, [denial])
    history = (await client.get(f"sessions/{sid}/history", params={"type": "full"})).json()
    messages = history["history"]["full"]
    assert {"role": "tool", "toolCallId": "call_002", "content": "Tool call denied: no"} in messages
    assert all(m["role"] != "tool_permission" for m in messages)


async def test_a_new_prompt_moves_on_from_unanswered_calls(client: httpx.AsyncClient) -> None:
    sid = await create(client, {"name": "coder", "tools": [{"name": "delete_records"}]})
    assert frames((await turn(client, sid, [user("delete")])).text)[-1][1] == {
        "stopReason": "tool_use"
    }
    events = frames((await turn(client, sid, [user("hello")], stream="message")).text)
    assert events[1:] == [
        ("text", {"text": "You said: hello"}),
        ("turn_stop", {"stopReason": "end_turn"}),
    ]


async def test_omitted_tools_are_disabled(client: httpx.AsyncClient) -> None:
    sid = await create(client, {"name": "coder"})
    events = frames((await turn(client, sid, [user("delete")], stream="message")).text)
    assert events[1] == (
        "text",
        {"text": "The delete_records tool is not available in this session."},
    )
    assert events[-1] == ("turn_stop", {"stopReason": "end_turn"})


async def test_turn_overrides_persist(client: httpx.AsyncClient) -> None:
    sid = await create(client, {"name": "coder"})
    body = {
        "agent": {"tools": [{"name": "get_weather"}], "options": {"model": "large"}},
        "tools": [READ_FILE],
        "messages": [user("hi")],
    }
    assert (await client.post(f"sessions/{sid}/turns", json=body)).status_code == 200
    info = (await client.get(f"sessions/{sid}")).json()
    assert info["agent"]["tools"] == [{"name": "get_weather"}]
    assert info["agent"]["options"] == {"model": "large"}
    assert info["tools"] == [READ_FILE]


async def test_a_cut_stream_has_no_turn_stop(client: httpx.AsyncClient) -> None:
    sid = await create(client, {"name": "coder"})
    events = frames((await turn(client, sid, [user("cut")])).text)
    assert [e for e, _ in events] == [
        "turn_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_delta",
    ]


async def test_a_client_closing_a_hanging_stream_is_seen(
    aap_server: AapServer, client: httpx.AsyncClient
) -> None:
    sid = await create(client, {"name": "coder"})
    async with client.stream(
        "POST", f"sessions/{sid}/turns", json={"stream": "delta", "messages": [user("hang")]}
    ) as response:
        async for line in response.aiter_lines():
            if "Working" in line:
                break
    for _ in range(200):  # bounded wait for the server thread to notice
        if aap_server.state.disconnects:
            break
        await asyncio.sleep(0.01)
    assert aap_server.state.disconnects == 1


async def test_every_request_is_recorded(aap_server: AapServer, client: httpx.AsyncClient) -> None:
    aap_server.state.api_key = "k"
    await client.post(
        "sessions", json={"agent": {"name": "coder"}}, headers={"Authorization": "Bearer k"}
    )
    [recorded] = aap_server.state.requests
    assert (recorded.method, recorded.path, recorded.body) == (
        "POST",
        "/sessions",
        {"agent": {"name": "coder"}},
    )
    assert recorded.authorization == "Bearer k"


def test_standalone_server_with_a_forced_scenario() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.aap_server", "--port", str(port), "--scenario", "refuse"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == f"AAP test server: http://127.0.0.1:{port}/v1"
        with httpx.Client(base_url=f"http://127.0.0.1:{port}/v1/", verify=False) as http:
            for _ in range(100):  # the banner comes just before uvicorn listens
                try:
                    http.get("meta")
                    break
                except httpx.ConnectError:
                    time.sleep(0.05)
            sid = http.post("sessions", json={"agent": {"name": "basic"}}).json()["sessionId"]
            answer = http.post(f"sessions/{sid}/turns", json={"messages": [user("hello")]})
            assert answer.json()["stopReason"] == "refusal"
    finally:
        process.terminate()
        process.wait(timeout=5)
