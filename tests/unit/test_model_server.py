"""The scripted model server, over HTTP (httpx), without any agent."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.model_server import ModelServer, Say, Script, Tool, render_tool
from tests.model_server.script import read_edit_answer, sample_json, several_turns, stall
from tests.model_server.tool_calls import apply_patch_command

ROOT = Path(__file__).resolve().parents[2]
CLAUDE_SCHEMAS: dict[str, dict[str, Any]] = {
    "Read": {"file_path": {}},
    "Edit": {"file_path": {}, "old_string": {}, "new_string": {}},
    "Write": {"file_path": {}, "content": {}},
    "Bash": {"command": {}, "description": {}},
}
CLAUDE_TOOLS: list[dict[str, Any]] = [
    {"name": n, "input_schema": {"type": "object", "properties": props}}
    for n, props in CLAUDE_SCHEMAS.items()
]
CODEX_TOOLS = [
    {"type": "function", "name": "exec_command", "parameters": {"properties": {"cmd": {}}}},
    {"type": "function", "name": "update_plan", "parameters": {}},
]


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "greet.py").write_text('def greet():\n    return "Hello"\n', encoding="utf-8")
    return tmp_path


def sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    """(event, data) pairs of an SSE body."""
    out = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((fields["event"], json.loads(fields["data"])))
    return out


def claude_stream(model: ModelServer, messages: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    body = {"model": "m", "messages": messages, "tools": CLAUDE_TOOLS, "stream": True}
    r = httpx.post(f"{model.url}/v1/messages?beta=true", json=body, timeout=10)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    return sse(r.text)


def tool_use(events: list[tuple[str, dict[str, Any]]]) -> tuple[str, str, dict[str, Any]]:
    [start] = [d["content_block"] for e, d in events if e == "content_block_start"]
    partial = "".join(d["delta"]["partial_json"] for e, d in events if e == "content_block_delta")
    return start["id"], start["name"], json.loads(partial)


def text_of(events: list[tuple[str, dict[str, Any]]]) -> str:
    return "".join(
        d["delta"]["text"]
        for e, d in events
        if e == "content_block_delta" and d["delta"]["type"] == "text_delta"
    )


# -- script -------------------------------------------------------------------------------------


def test_say_streams_its_text_in_the_pieces_asked() -> None:
    say = Say("abcdefghij", chunks=3)
    assert say.pieces() == ["abcd", "efg", "hij"]
    assert Say("ab", chunks=10).pieces() == ["a", "b"]


def test_past_the_scripts_end_the_model_still_answers() -> None:
    script = several_turns("/w", turns=2)
    assert script.step(0, 0) == Tool("read", {"path": "/w/greet.py"})
    assert script.step(1, 0) == Say("Turn 2: done.")
    assert isinstance(script.step(2, 0), Say) and isinstance(script.step(0, 5), Say)


def test_tools_are_picked_from_the_request_and_named_by_its_schemas(ws: Path) -> None:
    path = str(ws / "greet.py")
    claude: dict[str, Any] = {t["name"]: t["input_schema"] for t in CLAUDE_TOOLS}
    edit = Tool("edit", {"path": path, "old": "Hello", "new": "Howdy"})
    assert render_tool(edit, claude).arguments == {
        "file_path": path,
        "old_string": "Hello",
        "new_string": "Howdy",
    }
    qwen: dict[str, Any] = {
        "read_file": {"properties": {"absolute_path": {}}},
        "run_shell_command": {},
    }
    assert render_tool(Tool("read", {"path": path}), qwen).arguments == {"absolute_path": path}
    gemini: dict[str, Any] = {"replace": {"properties": {"file_path": {}, "instruction": {}}}}
    assert "instruction" in render_tool(edit, gemini).arguments
    # Codex has one command tool: cat, apply_patch, rm
    codex: dict[str, Any] = {"exec_command": {"properties": {"cmd": {}}}}
    assert render_tool(Tool("read", {"path": path}), codex).arguments == {"cmd": f"cat {path}"}
    patch = render_tool(edit, codex).arguments["cmd"]
    assert patch == apply_patch_command(
        path, 'def greet():\n    return "Hello"\n', 'def greet():\n    return "Howdy"\n'
    )
    assert '-    return "Hello"\n+    return "Howdy"\n*** End Patch' in patch
    assert render_tool(Tool("delete", {"path": path}), codex).arguments == {"cmd": f"rm {path}"}


def test_side_requests_get_json_of_the_schema_they_ask_for() -> None:
    schema = {
        "type": "object",
        "properties": {"title": {"type": "string"}, "n": {"type": "integer"}},
    }
    assert sample_json(schema) == {"title": "Scripted session", "n": 0}


# -- Anthropic Messages -------------------------------------------------------------------------


def test_anthropic_plays_a_turn_from_the_requests_own_conversation(
    model: ModelServer, ws: Path
) -> None:
    model.script = read_edit_answer(str(ws))
    prompt = {"role": "user", "content": [{"type": "text", "text": "change it"}]}
    first = claude_stream(model, [prompt])
    assert first[0][0] == "message_start" and first[-1][0] == "message_stop"
    call_id, name, args = tool_use(first)
    assert (name, args) == ("Read", {"file_path": str(ws / "greet.py")})
    stop = next(d for e, d in first if e == "message_delta")["delta"]["stop_reason"]
    assert stop == "tool_use"
    conversation = [
        prompt,
        {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": name}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id}]},
    ]
    assert tool_use(claude_stream(model, conversation))[1] == "Edit"
    done = [*conversation, conversation[1], conversation[2]]
    final = claude_stream(model, done)
    assert text_of(final) == "I updated the greeting in greet.py."
    assert [r.step for r in model.turn_requests("anthropic")] == model.script.turns[0]


def test_anthropic_answers_without_streaming_too(model: ModelServer) -> None:
    model.script = Script("s", [[Say("plain answer")]])
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": CLAUDE_TOOLS}
    message = httpx.post(f"{model.url}/v1/messages", json=body, timeout=10).json()
    assert message["content"] == [{"type": "text", "text": "plain answer"}]
    assert message["stop_reason"] == "end_turn"


def test_claude_codes_side_requests_never_hold_the_turn(model: ModelServer) -> None:
    url = f"{model.url}/v1/messages?beta=true"
    user = [{"role": "user", "content": "Rename the module"}]
    title_format = {"type": "json_schema", "schema": {"properties": {"title": {}}}}
    title = {"model": "m", "messages": user, "output_config": {"format": title_format}}
    assert json.loads(httpx.post(url, json=title).json()["content"][0]["text"]) == {
        "title": "Scripted session"
    }
    stage1 = {"model": "m", "messages": user, "stop_sequences": ["</severity>"]}
    answer = httpx.post(url, json=stage1).json()
    assert answer["content"][0]["text"] == "<severity>5"
    assert (answer["stop_reason"], answer["stop_sequence"]) == ("stop_sequence", "</severity>")
    suggestion = [*user, {"role": "user", "content": "[SUGGESTION MODE: Suggest what…]"}]
    body = {"model": "m", "messages": suggestion, "tools": CLAUDE_TOOLS, "stream": True}
    assert text_of(sse(httpx.post(url, json=body).text)) == "run the tests"
    assert [r.kind for r in model.requests] == ["side", "side", "side"]
    assert model.turn_requests() == []


def test_count_tokens_and_unknown_routes(model: ModelServer) -> None:
    r = httpx.post(f"{model.url}/v1/messages/count_tokens", json={"messages": []})
    assert r.json() == {"input_tokens": 100}
    r = httpx.post(f"{model.url}/v1/embeddings", json={"input": "x"})
    assert r.status_code == 404
    assert "no route for POST /v1/embeddings" in r.json()["error"]["message"]
    [unknown] = model.unknown_requests()
    assert (unknown.path, unknown.body) == ("/v1/embeddings", {"input": "x"})


def test_a_stalled_answer_goes_on_when_released(model: ModelServer) -> None:
    model.script = stall()
    body = {"model": "m", "messages": [{"role": "user", "content": "go"}], "tools": CLAUDE_TOOLS}
    got: list[str] = []

    def read() -> None:
        got.append(httpx.post(f"{model.url}/v1/messages", json={**body, "stream": True}).text)

    reader = threading.Thread(target=read)
    reader.start()
    assert model.wait_stalled(10)
    assert not got  # the stream is held open
    model.release()
    reader.join(10)
    assert text_of(sse(got[0])) == "one two three four five six"


# -- OpenAI Responses ---------------------------------------------------------------------------


def responses(model: ModelServer, items: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    body = {"model": "gpt", "input": items, "tools": CODEX_TOOLS, "stream": True}
    r = httpx.post(f"{model.url}/v1/responses", json=body, timeout=10)
    assert r.status_code == 200
    events = sse(r.text)
    assert all(e == d["type"] for e, d in events)
    return events


def test_responses_plays_a_turn_with_function_calls(model: ModelServer, ws: Path) -> None:
    model.script = read_edit_answer(str(ws))
    context = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "<environment_context>…"}],
    }
    prompt = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    events = responses(model, [context, prompt])
    assert [e for e, _ in events] == [
        "response.created",
        "response.output_item.added",
        "response.output_item.done",
        "response.completed",
    ]
    call = events[2][1]["item"]
    assert (call["type"], call["name"]) == ("function_call", "exec_command")
    assert json.loads(call["arguments"]) == {"cmd": f"cat {ws / 'greet.py'}"}
    output = {"type": "function_call_output", "call_id": call["call_id"], "output": "…"}
    patch = responses(model, [context, prompt, call, output])[2][1]["item"]
    assert json.loads(patch["arguments"])["cmd"].startswith("apply_patch <<'EOF'")
    final = responses(model, [context, prompt, call, output, patch, output])
    text = "".join(d["delta"] for e, d in final if e == "response.output_text.delta")
    assert text == "I updated the greeting in greet.py."
    assert final[-1][1]["response"]["usage"]["total_tokens"] > 0
    # a second prompt starts turn 2 (past this script's end: a plain answer)
    again = {**prompt, "content": [{"type": "input_text", "text": "again"}]}
    more = responses(model, [context, prompt, call, output, patch, output, again])
    assert "has no turn 2" in "".join(
        d["delta"] for e, d in more if e == "response.output_text.delta"
    )


def test_responses_edits_with_the_freeform_apply_patch_tool_when_offered(
    model: ModelServer, ws: Path
) -> None:
    model.script = Script(
        "e", [[Tool("edit", {"path": str(ws / "greet.py"), "old": "Hello", "new": "Hi"})]]
    )
    custom = {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}}
    body = {"model": "gpt", "input": [], "tools": [*CODEX_TOOLS, custom], "stream": True}
    events = sse(httpx.post(f"{model.url}/v1/responses", json=body, timeout=10).text)
    item = next(d["item"] for e, d in events if e == "response.output_item.done")
    assert (item["type"], item["name"]) == ("custom_tool_call", "apply_patch")
    assert item["input"].startswith(f"*** Begin Patch\n*** Update File: {ws / 'greet.py'}\n")
    assert '-    return "Hello"\n+    return "Hi"\n*** End Patch\n' in item["input"]


# -- standalone ---------------------------------------------------------------------------------


def test_runs_standalone(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [sys.executable, "-m", "tests.model_server", "--port", str(port)]
    proc = subprocess.Popen(
        [*command, "--script", "answer", "--root", str(tmp_path)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        assert f"http://127.0.0.1:{port}" in proc.stderr.readline()
        body = {
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
            "tools": CLAUDE_TOOLS,
        }
        for _ in range(100):  # the banner comes just before uvicorn listens
            try:
                r = httpx.post(f"http://127.0.0.1:{port}/v1/messages", json=body, timeout=5)
                break
            except httpx.ConnectError:
                threading.Event().wait(0.1)
        else:
            raise AssertionError("the standalone server never listened")
        assert r.json()["content"][0]["text"] == "Hello from the scripted model."
    finally:
        proc.terminate()
        proc.wait(10)
