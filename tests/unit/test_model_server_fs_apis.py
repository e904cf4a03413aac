"""The scripted model server's OpenAI Chat Completions (Qwen Code) and Gemini APIs.

Requests are shaped like the ones Qwen Code 0.24.4 and Gemini CLI 0.61.0 send (recorded
from the real agents); the answers must be what their SDKs parse: SSE chunks, tool calls
with the argument names of the request's own tool schemas, valid JSON for side requests.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.model_server import ModelServer, Say, Script, Tool
from tests.model_server.gemini import lower_types
from tests.model_server.script import read_edit_answer

JsonObject = dict[str, Any]
ROOT = "/ws"
PATH = "/ws/greet.py"
REMINDER = (
    "<system-reminder>\nThis is the Qwen Code. We are setting up the context.</system-reminder>"
)
CONTEXT = "<session_context>\nThis is the Gemini CLI.\n</session_context>"


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with ModelServer(read_edit_answer(ROOT)) as server:
        yield server


def sse_data(text: str) -> list[Any]:
    """The ``data:`` payloads of an SSE body (``[DONE]`` kept as a string)."""
    out: list[Any] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.startswith("data: "):
            payload = line[len("data: ") :]
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


# -- OpenAI Chat Completions (Qwen Code) -------------------------------------------------------


def function(name: str, **props: Any) -> JsonObject:
    schema = {"type": "object", "properties": props, "required": list(props)}
    return {"type": "function", "function": {"name": name, "parameters": schema}}


QWEN_TOOLS = [
    function("read_file", file_path={"type": "string"}, limit={"type": ["integer", "null"]}),
    function(
        "edit",
        file_path={"type": "string"},
        old_string={"type": "string"},
        new_string={"type": "string"},
    ),
    function("write_file", file_path={"type": "string"}, content={"type": "string"}),
    function("run_shell_command", command={"type": "string"}),
]


def chat(messages: list[JsonObject], *, stream: bool = True, **extra: Any) -> JsonObject:
    system = {"role": "system", "content": "You are Qwen Code."}
    body = {"model": "qwen-scripted", "messages": [system, *messages], "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    return {"tools": QWEN_TOOLS, **body, **extra}


def prompt(text: str) -> JsonObject:
    # Qwen Code puts its reminders in the prompt's own message, before the user's text
    return {
        "role": "user",
        "content": [{"type": "text", "text": REMINDER}, {"type": "text", "text": text}],
    }


def called(name: str, args: JsonObject, n: int) -> list[JsonObject]:
    fn = {"name": name, "arguments": json.dumps(args)}
    call = {"id": f"call_{n}", "type": "function", "function": fn}
    result = {"role": "tool", "tool_call_id": f"call_{n}", "content": "ok"}
    return [{"role": "assistant", "content": None, "tool_calls": [call]}, result]


def post_chat(model: ModelServer, body: JsonObject) -> httpx.Response:
    return httpx.post(f"{model.url}/v1/chat/completions", json=body, timeout=10)


def streamed_call(chunks: list[Any]) -> tuple[str, JsonObject, str]:
    """(tool name, arguments, finish reason) of a streamed tool-call answer."""
    name, arguments, finish = "", "", ""
    for chunk in chunks:
        if chunk == "[DONE]" or not chunk["choices"]:
            continue
        choice = chunk["choices"][0]
        for call in choice["delta"].get("tool_calls") or []:
            name += call["function"].get("name", "")
            arguments += call["function"].get("arguments", "")
        finish = choice["finish_reason"] or finish
    return name, json.loads(arguments), finish


def test_chat_plays_read_edit_answer_with_the_requests_own_argument_names(
    model: ModelServer,
) -> None:
    first = post_chat(model, chat([prompt("Change the greeting.")]))
    assert first.headers["content-type"].startswith("text/event-stream")
    chunks = sse_data(first.text)
    assert chunks[-1] == "[DONE]"
    assert chunks[-2]["choices"] == [] and chunks[-2]["usage"]["total_tokens"] > 0
    assert streamed_call(chunks) == ("read_file", {"file_path": PATH}, "tool_calls")

    history = [prompt("Change the greeting."), *called("read_file", {"file_path": PATH}, 1)]
    second = sse_data(post_chat(model, chat(history)).text)
    assert streamed_call(second) == (
        "edit",
        {"file_path": PATH, "old_string": "Hello", "new_string": "Howdy"},
        "tool_calls",
    )

    history += called("edit", {"file_path": PATH}, 2)
    third = sse_data(post_chat(model, chat(history)).text)
    text = "".join(
        c["choices"][0]["delta"].get("content") or ""
        for c in third
        if c != "[DONE]" and c["choices"]
    )
    assert text == "I updated the greeting in greet.py."
    assert [c["choices"][0]["finish_reason"] for c in third[:-2]][-1] == "stop"
    # three pieces (Say(chunks=3)) after the role chunk
    assert sum(1 for c in third[:-2] if c["choices"][0]["delta"].get("content")) == 3
    assert [r.step for r in model.turn_requests("openai-chat")] == model.script.turns[0]


def test_chat_counts_turns_by_the_users_prompts_not_reminders(model: ModelServer) -> None:
    model.script = Script("two", [[Say("first")], [Say("second")]])
    reminder_only = {"role": "user", "content": [{"type": "text", "text": REMINDER}]}
    history = [
        prompt("one"),
        {"role": "assistant", "content": "first"},
        reminder_only,
        prompt("two"),
    ]
    answer = post_chat(model, chat(history, stream=False)).json()
    assert answer["object"] == "chat.completion"
    assert answer["choices"][0]["message"] == {"role": "assistant", "content": "second"}
    assert answer["choices"][0]["finish_reason"] == "stop"


def test_chat_not_streamed_tool_call(model: ModelServer) -> None:
    answer = post_chat(model, chat([prompt("go")], stream=False)).json()
    [call] = answer["choices"][0]["message"]["tool_calls"]
    assert call["type"] == "function" and call["id"]
    assert call["function"]["name"] == "read_file"
    assert json.loads(call["function"]["arguments"]) == {"file_path": PATH}
    assert answer["choices"][0]["finish_reason"] == "tool_calls"


def test_chat_side_requests_never_take_a_turns_step(model: ModelServer) -> None:
    # the suggestion and memory requests carry the turn's tools but are not the turn
    suggestion = chat([prompt("go"), {"role": "user", "content": "[SUGGESTION MODE: x]"}])
    memory = chat([prompt("go"), {"role": "user", "content": "Managed memory has TWO dirs"}])
    for body in (suggestion, memory):
        chunks = sse_data(post_chat(model, body).text)
        deltas = [c["choices"][0]["delta"] for c in chunks if c != "[DONE]" and c["choices"]]
        assert not any(d.get("tool_calls") for d in deltas)
    # the auto-mode classifier forces its one tool: it gets "do not block"
    classifier = {
        "model": "qwen-scripted",
        "messages": [{"role": "system", "content": "You are a security classifier."}],
        "stream": False,
        "tools": [function("respond_in_schema", shouldBlock={"type": "boolean"})],
        "tool_choice": "required",
    }
    [call] = post_chat(model, classifier).json()["choices"][0]["message"]["tool_calls"]
    assert call["function"]["name"] == "respond_in_schema"
    assert json.loads(call["function"]["arguments"]) == {"shouldBlock": False}
    assert [r.kind for r in model.requests] == ["side", "side", "side"]
    assert model.turn_requests() == []
    # the turn itself still starts at its first step
    first = sse_data(post_chat(model, chat([prompt("go")])).text)
    assert streamed_call(first)[0] == "read_file"


def test_chat_thought_and_stall(model: ModelServer) -> None:
    model.script = Script("t", [[Say("a b c d", chunks=4, thought="hmm", stall_after=2)]])
    with httpx.stream(
        "POST", f"{model.url}/v1/chat/completions", json=chat([prompt("go")]), timeout=10
    ) as response:
        lines = response.iter_lines()
        seen: list[JsonObject] = []
        while len([c for c in seen if c["choices"][0]["delta"].get("content")]) < 2:
            line = next(lines)
            if line.startswith("data: "):
                seen.append(json.loads(line[6:]))
        assert model.wait_stalled(10)
        assert seen[1]["choices"][0]["delta"] == {"reasoning_content": "hmm"}
        model.release()
        rest = sse_data("\n".join(lines))
    assert rest[-1] == "[DONE]"
    texts = [c["choices"][0]["delta"].get("content") for c in seen + rest[:-2]]
    assert "".join(t for t in texts if t) == "a b c d"


# -- Gemini (Gemini CLI) -----------------------------------------------------------------------


def declaration(name: str, required: list[str], **props: Any) -> JsonObject:
    schema = {"type": "object", "properties": props, "required": required}
    return {"name": name, "description": name, "parametersJsonSchema": schema}


STRING = {"type": "string"}
GEMINI_TOOLS = [
    {
        "functionDeclarations": [
            declaration("read_file", ["file_path"], file_path=STRING),
            declaration(
                "replace",
                ["file_path", "instruction", "old_string", "new_string"],
                file_path=STRING,
                instruction=STRING,
                old_string=STRING,
                new_string=STRING,
            ),
            declaration("write_file", ["file_path", "content"], file_path=STRING, content=STRING),
            declaration("run_shell_command", ["command"], command=STRING, dir_path=STRING),
        ]
    }
]


def user(*texts: str) -> JsonObject:
    return {"role": "user", "parts": [{"text": t} for t in texts]}


def gemini_call(name: str, n: int) -> list[JsonObject]:
    ident = f"{name}_{n}"
    return [
        {"role": "model", "parts": [{"functionCall": {"id": ident, "name": name, "args": {}}}]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"id": ident, "name": name, "response": {}}}],
        },
    ]


def generate(contents: list[JsonObject], **extra: Any) -> JsonObject:
    config = {"temperature": 1, "thinkingConfig": {"includeThoughts": True}}
    return {
        "contents": contents,
        "systemInstruction": {"parts": [{"text": "You are Gemini CLI."}]},
        "tools": GEMINI_TOOLS,
        "generationConfig": config,
        **extra,
    }


def post_gemini(model: ModelServer, method: str, body: JsonObject) -> httpx.Response:
    url = f"{model.url}/v1beta/models/gemini-2.5-pro:{method}"
    params = {"alt": "sse"} if method == "streamGenerateContent" else {}
    return httpx.post(url, params=params, json=body, timeout=10)


def parts_of(events: list[Any]) -> list[JsonObject]:
    return [p for e in events for p in e["candidates"][0]["content"]["parts"]]


def test_gemini_plays_read_edit_answer_with_replaces_required_arguments(
    model: ModelServer,
) -> None:
    turn = [user(CONTEXT, "Change the greeting.")]
    first = post_gemini(model, "streamGenerateContent", generate(turn))
    assert first.headers["content-type"].startswith("text/event-stream")
    events = sse_data(first.text)
    [part] = parts_of(events)
    assert part["functionCall"]["name"] == "read_file"
    assert part["functionCall"]["args"] == {"file_path": PATH}
    assert part["functionCall"]["id"]
    assert events[-1]["candidates"][0]["finishReason"] == "STOP"

    turn += gemini_call("read_file", 1)
    [part] = parts_of(sse_data(post_gemini(model, "streamGenerateContent", generate(turn)).text))
    args = part["functionCall"]["args"]
    assert part["functionCall"]["name"] == "replace"
    # every argument replace requires, by the names of its schema
    assert {k: args[k] for k in ("file_path", "old_string", "new_string")} == {
        "file_path": PATH,
        "old_string": "Hello",
        "new_string": "Howdy",
    }
    assert args["instruction"]

    turn += gemini_call("replace", 2)
    events = sse_data(post_gemini(model, "streamGenerateContent", generate(turn)).text)
    assert "".join(p.get("text", "") for p in parts_of(events)) == (
        "I updated the greeting in greet.py."
    )
    assert events[-1]["candidates"][0]["finishReason"] == "STOP"
    assert events[-1]["usageMetadata"]["totalTokenCount"] > 0
    assert [r.step for r in model.turn_requests("gemini")] == model.script.turns[0]


def test_gemini_second_turn_and_not_streamed(model: ModelServer) -> None:
    model.script = Script("two", [[Say("first")], [Tool("read", {"path": PATH}), Say("x")]])
    contents = [user(CONTEXT, "one"), {"role": "model", "parts": [{"text": "first"}]}, user("two")]
    answer = post_gemini(model, "generateContent", generate(contents)).json()
    [part] = answer["candidates"][0]["content"]["parts"]
    assert part["functionCall"]["name"] == "read_file"


def test_gemini_side_requests_get_json_of_their_schema(model: ModelServer) -> None:
    # the task-complexity router, as Gemini CLI sends it (Gemini's upper-case types)
    router = {
        "type": "OBJECT",
        "properties": {
            "complexity_reasoning": {"type": "STRING"},
            "complexity_score": {"type": "INTEGER", "description": "1-100"},
        },
        "required": ["complexity_reasoning", "complexity_score"],
    }
    config = {"responseMimeType": "application/json", "responseJsonSchema": router}
    body = {"contents": [user("Change the greeting.")], "generationConfig": config}
    answer = post_gemini(model, "generateContent", body).json()
    value = json.loads(answer["candidates"][0]["content"]["parts"][0]["text"])
    assert isinstance(value["complexity_reasoning"], str)
    assert isinstance(value["complexity_score"], int) and 1 <= value["complexity_score"] <= 100
    # the next-speaker check: the user speaks next, so the turn ends
    speaker = {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "next_speaker": {"type": "string", "enum": ["model", "user"]},
        },
    }
    config = {"responseMimeType": "application/json", "responseJsonSchema": speaker}
    answer = post_gemini(model, "generateContent", {**body, "generationConfig": config}).json()
    assert json.loads(answer["candidates"][0]["content"]["parts"][0]["text"])["next_speaker"] == (
        "user"
    )
    tokens = post_gemini(model, "countTokens", {"contents": [user("x")]}).json()
    assert tokens["totalTokens"] > 0
    assert [r.kind for r in model.requests] == ["side", "side", "side"]


def test_gemini_thought_parts_and_unknown_methods(model: ModelServer) -> None:
    model.script = Script("t", [[Say("done", thought="thinking it over")]])
    events = sse_data(post_gemini(model, "streamGenerateContent", generate([user("go")])).text)
    parts = parts_of(events)
    assert parts[0] == {"text": "thinking it over", "thought": True}
    assert "".join(p["text"] for p in parts[1:]) == "done"
    missing = post_gemini(model, "embedContent", {})
    assert missing.status_code == 404
    assert model.unknown_requests()[-1].path.endswith(":embedContent")


def test_lower_types_keeps_everything_but_the_case() -> None:
    schema = {"type": "OBJECT", "properties": {"a": {"type": ["STRING", "NULL"], "enum": ["X"]}}}
    assert lower_types(schema) == {
        "type": "object",
        "properties": {"a": {"type": ["string", "null"], "enum": ["X"]}},
    }


def test_a_step_no_offered_tool_can_do_ends_the_turn_with_a_line(model: ModelServer) -> None:
    # plan modes take the editing tools away: the model says so instead of calling one
    read_only = [{"functionDeclarations": [declaration("read_file", ["file_path"])]}]
    turn = [user(CONTEXT, "Change the greeting."), *gemini_call("read_file", 1)]
    body = generate(turn, tools=read_only)
    events = sse_data(post_gemini(model, "streamGenerateContent", body).text)
    [part] = parts_of(events)[:1]
    assert "no tool" in part["text"] and "replace" not in json.dumps(events)
    only_read = chat([prompt("go"), *called("read_file", {"file_path": PATH}, 1)])
    only_read["tools"] = QWEN_TOOLS[:1]
    answer = post_chat(model, {**only_read, "stream": False}).json()
    assert "no tool" in answer["choices"][0]["message"]["content"]
    assert [r.step for r in model.turn_requests()] == model.script.turns[0][1:2] * 2
