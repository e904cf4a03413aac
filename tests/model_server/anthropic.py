"""The Anthropic Messages API as claude-agent-acp 0.101.0 (Claude Code) uses it.

``POST /v1/messages?beta=true`` with ``stream: true`` (SSE) or not, and
``POST /v1/messages/count_tokens``. A request is a *turn* request when it offers the tools
the script needs (Claude Code's ``Read``/``Edit``/``Bash``…); anything else (the session
title, the next-prompt suggestion, the auto-mode safety classifier) is a *side* request,
answered at once so it never holds the turn up.
"""

from __future__ import annotations

import json
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
    sample_json,
)
from tests.model_server.tool_calls import render_tool

API = "anthropic"
MODEL = "claude-scripted"
SUGGESTION = "[SUGGESTION MODE"
_ids = count(1)


def _blocks(message: JsonObject) -> list[JsonObject]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _is_prompt(blocks: list[JsonObject]) -> bool:
    """A user message the user wrote: text that is not only Claude Code's reminders."""
    return any(
        b.get("type") == "text"
        and not str(b.get("text", "")).lstrip().startswith("<system-reminder>")
        for b in blocks
    )


def position(messages: list[JsonObject]) -> tuple[int, int]:
    """(user turn, step) of a request: a prompt is a user message with text of its own and
    no tool result (consecutive ones are one prompt); the step is the number of tool
    results since the last prompt. Other roles (Claude Code sends "system") are skipped."""
    turn, step, previous = -1, 0, ""
    for message in messages:
        role = message.get("role")
        blocks = _blocks(message)
        if role == "assistant":
            previous = "assistant"
        elif role == "user":
            results = sum(1 for b in blocks if b.get("type") == "tool_result")
            if results:
                step, previous = step + results, "result"
            elif _is_prompt(blocks) and previous != "prompt":
                turn, step, previous = turn + 1, 0, "prompt"
    return max(turn, 0), step


def text_of(body: JsonObject) -> str:
    """All the text of a request (system and messages), for picking side answers."""
    parts: list[str] = []
    system = body.get("system")
    if isinstance(system, str):
        parts.append(system)
    elif isinstance(system, list):
        parts += [b.get("text", "") for b in system if isinstance(b, dict)]
    for message in body.get("messages") or []:
        parts += [b.get("text", "") for b in _blocks(message) if b.get("type") == "text"]
    return "\n".join(parts)


def side_answer(body: JsonObject) -> tuple[str, str | None]:
    """A short answer that Claude Code's side requests parse, and the stop sequence it
    ended on: JSON of the asked schema (the session title); a low severity for the
    auto-mode safety classifier (stage 1 stops at ``</severity>``, stage 2 thinks first);
    else a line."""
    fmt = (body.get("output_config") or {}).get("format") or {}
    if fmt.get("type") == "json_schema":
        return json.dumps(sample_json(fmt.get("schema") or {})), None
    if "</severity>" in (body.get("stop_sequences") or []):
        return "<severity>5", "</severity>"
    text = text_of(body)
    if "<severity>" in text:
        return (
            "<thinking>A routine change in the workspace.</thinking>\n<severity>5</severity>",
            None,
        )
    if SUGGESTION in text:
        return "run the tests", None
    return "Scripted session", None


def tool_schemas(body: JsonObject) -> dict[str, Any]:
    return {
        t["name"]: t.get("input_schema") or {}
        for t in body.get("tools") or []
        if isinstance(t, dict) and "name" in t
    }


def is_turn(body: JsonObject) -> bool:
    """A request that carries the agent's own tools (Read…/Bash) is part of the turn, except
    the next-prompt suggestion Claude Code forks from the conversation after a turn."""
    tools = tool_schemas(body)
    if not any(n in tools for n in ("Read", "Bash", "Edit", "Write")):
        return False
    messages = body.get("messages") or []
    last = _blocks(messages[-1]) if messages else []
    return not any(str(b.get("text", "")).startswith(SUGGESTION) for b in last)


def _sse(event: str, data: JsonObject) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _usage(output: int = 1) -> JsonObject:
    return {
        "input_tokens": 100,
        "output_tokens": output,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _message_shell(model: str) -> JsonObject:
    return {
        "id": f"msg_scripted_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": _usage(),
    }


def content_of(step: Step, tools: dict[str, Any]) -> tuple[list[JsonObject], str]:
    """The response's content blocks and stop reason for ``step``."""
    if isinstance(step, Tool):
        call = render_tool(step, tools)
        block = {
            "type": "tool_use",
            "id": f"toolu_scripted_{next(_ids)}",
            "name": call.name,
            "input": call.arguments,
        }
        return [block], "tool_use"
    blocks: list[JsonObject] = []
    if step.thought:
        blocks.append({"type": "thinking", "thinking": step.thought, "signature": "scripted"})
    blocks.append({"type": "text", "text": step.text})
    return blocks, "end_turn"


async def stream(
    state: ServerState,
    step: Step,
    blocks: list[JsonObject],
    stop: str,
    model: str,
    stop_sequence: str | None = None,
) -> AsyncIterator[bytes]:
    yield _sse("message_start", {"type": "message_start", "message": _message_shell(model)})
    for index, block in enumerate(blocks):
        kind = block["type"]
        if kind == "text":
            start: JsonObject = {"type": "text", "text": ""}
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
        else:
            start = {**block, "input": {}}
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
        deltas: list[JsonObject] = []
        if kind == "text" and isinstance(step, Say):
            async for piece in state.pieces(step):
                yield _delta(index, {"type": "text_delta", "text": piece})
        elif kind == "text":
            deltas.append({"type": "text_delta", "text": block["text"]})
        elif kind == "thinking":
            deltas.append({"type": "thinking_delta", "thinking": block["thinking"]})
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        else:
            deltas.append({"type": "input_json_delta", "partial_json": json.dumps(block["input"])})
        for delta in deltas:
            yield _delta(index, delta)
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": stop_sequence},
            "usage": {"output_tokens": 10},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


def _delta(index: int, delta: JsonObject) -> bytes:
    return _sse(
        "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    )


def routes(state: ServerState) -> list[Route]:
    async def messages(request: Request) -> Response:
        body = await request.json()
        model = str(body.get("model") or MODEL)
        turn, index = position(body.get("messages") or [])
        step = state.script.step(turn, index)
        entry = Recorded(API, "POST", request.url.path, request.url.query, body, step=step)
        stop_sequence = None
        if not is_turn(body):
            entry.kind, entry.step = "side", None
            text, stop_sequence = side_answer(body)
            step = Say(text)
        state.record(entry)
        blocks, stop = content_of(step, tool_schemas(body))
        if stop_sequence is not None:
            stop = "stop_sequence"
        if body.get("stream"):
            events = stream(state, step, blocks, stop, model, stop_sequence)
            return serve(
                state,
                entry,
                StreamingResponse(
                    events, media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
                ),
            )
        if isinstance(step, Say):
            async for _ in state.pieces(step):  # a stall holds a non-streamed answer too
                pass
        message = {**_message_shell(model), "content": blocks, "stop_reason": stop}
        message["stop_sequence"] = stop_sequence
        message["usage"] = _usage(10)
        return serve(state, entry, JSONResponse(message))

    async def count_tokens(request: Request) -> Response:
        body = await request.json()
        state.record(Recorded(API, "POST", request.url.path, request.url.query, body, kind="side"))
        return JSONResponse({"input_tokens": 100})

    return [
        Route("/v1/messages", messages, methods=["POST"]),
        Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
    ]
