"""The OpenAI Chat Completions API as Qwen Code 0.24.4 uses it: ``POST /v1/chat/completions``.

Streamed (``stream: true``, SSE): ``data: {chat.completion.chunk}`` lines whose
``choices[0].delta`` carries ``content`` pieces or ``tool_calls`` (``index``, ``id``,
``function.name``, ``function.arguments`` as a JSON string), a chunk with the
``finish_reason`` (``stop`` / ``tool_calls``), a usage chunk with no choices (Qwen asks for
it with ``stream_options.include_usage``), then ``data: [DONE]``. Not streamed: one
``chat.completion`` object. A tool result comes back as a ``role: "tool"`` message.

Qwen Code sends side requests through the same endpoint: the next-prompt suggestion and
the managed-memory extraction (with the turn's tools: told apart by the last user message's
text), and in mode ``auto`` a safety classifier before an edit or a command (not streamed,
``tool_choice: "required"`` with one tool, ``respond_in_schema {shouldBlock}``). They are
answered at once (a forced tool gets a call with arguments of its schema: ``shouldBlock:
false``), and never count as a turn's step.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from itertools import count
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.model_server.faults import serve
from tests.model_server.script import (
    JsonObject,
    Recorded,
    Say,
    ServerState,
    Step,
    Tool,
    conversation_position,
    sample_json,
)
from tests.model_server.tool_calls import ToolCall, playable, render_tool

API = "openai-chat"
_ids = count(1)
# Qwen Code's recovery prompts after a stream cut mid-answer or the output token limit: the
# model is to go on from where its answer stopped, in the same turn
RECOVERY_PREFIXES = ("The connection dropped mid-response.", "Output token limit hit.")
# Text Qwen Code puts in user messages that the user did not type
CONTEXT_PREFIXES = ("<system-reminder>", *RECOVERY_PREFIXES)
# The first words of Qwen Code's own side requests (they carry the turn's tools too)
SIDE_PREFIXES = ("[SUGGESTION MODE", "Managed memory has")
TURN_TOOLS = ("read_file", "edit", "write_file", "run_shell_command")


def _texts(message: JsonObject) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [str(p.get("text", "")) for p in content if isinstance(p, dict)]
    return []


def _is_prompt(message: JsonObject) -> bool:
    if message.get("role") != "user":
        return False
    return any(t.strip() and not t.lstrip().startswith(CONTEXT_PREFIXES) for t in _texts(message))


def position(messages: list[JsonObject]) -> tuple[int, int]:
    """(user turn, step): prompts are user messages with text that is not Qwen's context;
    the step is the number of tool results since the last prompt."""
    return conversation_position(messages, lambda m: int(m.get("role") == "tool"), _is_prompt)


def resumed(step: Step, messages: list[JsonObject]) -> Step:
    """The rest of a Say when the request asks to go on after a cut (its last user message is
    a recovery prompt, the assistant message before it the part already delivered)."""
    if not isinstance(step, Say) or len(messages) < 2:
        return step
    last, previous = messages[-1], messages[-2]
    if last.get("role") != "user" or not any(
        t.lstrip().startswith(RECOVERY_PREFIXES) for t in _texts(last)
    ):
        return step
    delivered = "".join(_texts(previous)) if previous.get("role") == "assistant" else ""
    if not delivered or not step.text.startswith(delivered):
        return step
    return Say(step.text[len(delivered) :], chunks=step.chunks)


def tool_schemas(body: JsonObject) -> dict[str, Any]:
    tools: dict[str, Any] = {}
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name"):
            tools[function["name"]] = function.get("parameters") or {}
    return tools


def is_side(body: JsonObject) -> bool:
    """A request of the agent's own (suggestion, memory, JSON) rather than the user's turn."""
    if (body.get("response_format") or {}).get("type") in ("json_schema", "json_object"):
        return True
    if body.get("tool_choice") == "required" or not any(
        n in tool_schemas(body) for n in TURN_TOOLS
    ):
        return True
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    if not users:
        return True
    return any(t.lstrip().startswith(SIDE_PREFIXES) for t in _texts(users[-1]))


def forced_call(body: JsonObject) -> ToolCall | None:
    """The call a side request forces (the auto-mode classifier's ``respond_in_schema``)."""
    tools = tool_schemas(body)
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        name = str((choice.get("function") or {}).get("name", ""))
    elif choice == "required" and len(tools) == 1:
        name = next(iter(tools))
    else:
        return None
    return ToolCall(name, sample_json(tools.get(name) or {})) if name in tools else None


def side_step(body: JsonObject) -> Say:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema") or {}
        return Say(json.dumps(sample_json(schema)))
    if fmt.get("type") == "json_object":
        return Say("{}")
    return Say("Nothing to add.")


def _call(step: Tool | ToolCall, tools: dict[str, Any]) -> JsonObject:
    call = render_tool(step, tools) if isinstance(step, Tool) else step
    return {
        "id": f"call_scripted_{next(_ids)}",
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
    }


def _usage() -> JsonObject:
    return {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}


def _chunk(ident: str, model: str, delta: JsonObject | None, finish: str | None) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    data: JsonObject = {
        "id": ident,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
    }
    if delta is None:
        data["usage"] = _usage()
    return f"data: {json.dumps(data)}\n\n".encode()


async def stream(
    state: ServerState, step: Step | ToolCall, tools: dict[str, Any], model: str
) -> AsyncIterator[bytes]:
    ident = f"chatcmpl-scripted-{next(_ids)}"
    if isinstance(step, Tool | ToolCall):
        call = {"index": 0, **_call(step, tools)}
        yield _chunk(ident, model, {"role": "assistant", "tool_calls": [call]}, None)
        yield _chunk(ident, model, {}, "tool_calls")
    else:
        yield _chunk(ident, model, {"role": "assistant", "content": ""}, None)
        if step.thought:
            # Qwen Code reads thoughts from ``reasoning_content`` (as DashScope sends them)
            yield _chunk(ident, model, {"reasoning_content": step.thought}, None)
        async for piece in state.pieces(step):
            yield _chunk(ident, model, {"content": piece}, None)
        yield _chunk(ident, model, {}, "stop")
    yield _chunk(ident, model, None, None)
    yield b"data: [DONE]\n\n"


async def completion(
    state: ServerState, step: Step | ToolCall, tools: dict[str, Any], model: str
) -> JsonObject:
    message: JsonObject = {"role": "assistant", "content": None}
    if isinstance(step, Tool | ToolCall):
        message["tool_calls"] = [_call(step, tools)]
        finish = "tool_calls"
    else:
        async for _ in state.pieces(step):  # a stall holds a non-streamed answer too
            pass
        message["content"] = step.text
        if step.thought:
            message["reasoning_content"] = step.thought
        finish = "stop"
    return {
        "id": f"chatcmpl-scripted-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _usage(),
    }


def routes(state: ServerState) -> list[Route]:
    async def chat_completions(request: Request) -> Response:
        body = await request.json()
        model = str(body.get("model") or "qwen-scripted")
        step: Step | ToolCall
        if is_side(body):
            entry = Recorded(API, "POST", request.url.path, request.url.query, body, kind="side")
            step = forced_call(body) or side_step(body)
        else:
            messages = body.get("messages") or []
            turn, index = position(messages)
            step = resumed(state.script.step(turn, index), messages)
            entry = Recorded(API, "POST", request.url.path, request.url.query, body, step=step)
        state.record(entry)
        tools = tool_schemas(body)
        if not isinstance(step, ToolCall):
            step = playable(step, tools)
        if body.get("stream"):
            events = stream(state, step, tools, model)
            return serve(
                state,
                entry,
                StreamingResponse(
                    events, media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
                ),
            )
        return serve(state, entry, JSONResponse(await completion(state, step, tools, model)))

    return [Route("/v1/chat/completions", chat_completions, methods=["POST"])]
