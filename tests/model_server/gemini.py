"""Gemini's ``generateContent`` API as Gemini CLI 0.61.0 uses it (``GOOGLE_GEMINI_BASE_URL``).

- ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse``: the turn. The request has
  ``contents`` (``role`` user/model, ``parts`` of ``text`` / ``functionCall`` /
  ``functionResponse``) and ``tools: [{functionDeclarations: [{name,
  parametersJsonSchema}]}]``; the answer is SSE ``data: {GenerateContentResponse}`` events,
  ``candidates[0].content.parts`` with ``text`` pieces (``thought: true`` for a thought) or
  one ``functionCall`` (``name``, ``args``, ``id``), ``finishReason: "STOP"`` and
  ``usageMetadata`` on the last.
- ``POST /v1beta/models/<model>:generateContent``: side requests (the task-complexity router,
  the next-speaker check) asking for JSON of ``generationConfig.responseJsonSchema``
  (Gemini's upper-case type names); an answer that does not parse is retried slowly, so it
  gets valid JSON of that schema.
- ``POST /v1beta/models/<model>:countTokens``.

A request is part of the turn when it offers the tools the script needs; a tool result is a
``functionResponse`` part (one per call) in the next request's ``contents``.
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
    conversation_position,
    sample_json,
)
from tests.model_server.tool_calls import playable, render_tool

API = "gemini"
_ids = count(1)
# Text Gemini CLI puts in user contents that the user did not type
CONTEXT_PREFIXES = ("<session_context>", "<system-reminder>")
TURN_TOOLS = ("read_file", "replace", "write_file", "run_shell_command")
# the next-speaker check: "user" ends the turn ("model" would make the agent go on)
NEXT_SPEAKER = {"next_speaker": "user", "reasoning": "The answer is complete."}


def _texts(content: JsonObject) -> list[str]:
    return [str(p["text"]) for p in content.get("parts") or [] if "text" in p]


def _is_prompt(content: JsonObject) -> bool:
    if content.get("role", "user") != "user":
        return False
    parts = content.get("parts") or []
    if any("functionResponse" in p for p in parts):
        return False
    return any(t.strip() and not t.lstrip().startswith(CONTEXT_PREFIXES) for t in _texts(content))


def position(contents: list[JsonObject]) -> tuple[int, int]:
    """(user turn, step): prompts are user contents with text that is not Gemini CLI's
    context; the step is the number of function responses since the last prompt."""
    return conversation_position(
        contents,
        lambda c: sum(1 for p in c.get("parts") or [] if "functionResponse" in p),
        _is_prompt,
    )


def tool_schemas(body: JsonObject) -> dict[str, Any]:
    tools: dict[str, Any] = {}
    for tool in body.get("tools") or []:
        for decl in (tool or {}).get("functionDeclarations") or []:
            if isinstance(decl, dict) and decl.get("name"):
                schema = decl.get("parametersJsonSchema") or decl.get("parameters") or {}
                tools[decl["name"]] = lower_types(schema)
    return tools


def is_turn(body: JsonObject) -> bool:
    return any(n in tool_schemas(body) for n in TURN_TOOLS)


def lower_types(schema: Any) -> Any:
    """A JSON schema with Gemini's ``"OBJECT"``/``"STRING"`` type names made JSON Schema's."""
    if isinstance(schema, list):
        return [lower_types(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: lower_types(v) for k, v in schema.items()}
    kind = schema.get("type")
    if isinstance(kind, str):
        out["type"] = kind.lower()
    elif isinstance(kind, list):
        out["type"] = [k.lower() if isinstance(k, str) else k for k in kind]
    return out


def side_json(schema: Any) -> Any:
    """Valid JSON of the asked schema; numbers in range where the schema says one."""
    schema = lower_types(schema)
    value = sample_json(schema)
    props = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(value, dict) and isinstance(props, dict):
        if "next_speaker" in props:
            value.update({k: v for k, v in NEXT_SPEAKER.items() if k in props})
        for key, prop in props.items():
            if isinstance(prop, dict) and prop.get("type") in ("integer", "number"):
                value[key] = prop.get("minimum", 1)  # the router's score is 1-100
    return value


def side_step(body: JsonObject) -> Say:
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    if schema is not None:
        return Say(json.dumps(side_json(schema)))
    if config.get("responseMimeType") == "application/json":
        return Say("{}")
    return Say("Scripted session")


def _usage() -> JsonObject:
    return {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}


def _response(model: str, parts: list[JsonObject], finish: str | None) -> JsonObject:
    candidate: JsonObject = {"content": {"role": "model", "parts": parts}, "index": 0}
    out: JsonObject = {"candidates": [candidate], "modelVersion": model}
    if finish is not None:
        candidate["finishReason"] = finish
        out["usageMetadata"] = _usage()
    return out


def _call_part(step: Tool, tools: dict[str, Any]) -> JsonObject:
    call = render_tool(step, tools)
    ident = f"{call.name}_scripted_{next(_ids)}"
    return {"functionCall": {"name": call.name, "args": call.arguments, "id": ident}}


def _sse(data: JsonObject) -> bytes:
    return f"data: {json.dumps(data)}\r\n\r\n".encode()


async def stream(
    state: ServerState, step: Step, tools: dict[str, Any], model: str
) -> AsyncIterator[bytes]:
    if isinstance(step, Tool):
        yield _sse(_response(model, [_call_part(step, tools)], "STOP"))
        return
    if step.thought:
        yield _sse(_response(model, [{"text": step.thought, "thought": True}], None))
    async for piece in state.pieces(step):
        yield _sse(_response(model, [{"text": piece}], None))
    # the last event carries the finish reason and the usage, with no new text
    yield _sse(_response(model, [{"text": ""}], "STOP"))


async def complete(state: ServerState, step: Step, tools: dict[str, Any], model: str) -> JsonObject:
    if isinstance(step, Tool):
        return _response(model, [_call_part(step, tools)], "STOP")
    async for _ in state.pieces(step):  # a stall holds a non-streamed answer too
        pass
    parts: list[JsonObject] = []
    if step.thought:
        parts.append({"text": step.thought, "thought": True})
    parts.append({"text": step.text})
    return _response(model, parts, "STOP")


def routes(state: ServerState) -> list[Route]:
    async def model_call(request: Request) -> Response:
        # one route for "<model>:<method>": starlette cannot split a path segment at ":"
        model, _, method = request.path_params["call"].partition(":")
        if method not in ("streamGenerateContent", "generateContent", "countTokens"):
            return await _unknown(request)
        body = await request.json()
        path, query = request.url.path, request.url.query
        if method == "countTokens":
            state.record(Recorded(API, "POST", path, query, body, kind="side"))
            return JSONResponse({"totalTokens": 100})
        step: Step
        if is_turn(body):
            turn, index = position(body.get("contents") or [])
            step = state.script.step(turn, index)
            entry = state.record(Recorded(API, "POST", path, query, body, step=step))
        else:
            step = side_step(body)
            entry = state.record(Recorded(API, "POST", path, query, body, kind="side"))
        tools = tool_schemas(body)
        step = playable(step, tools)
        if method == "streamGenerateContent":
            events = stream(state, step, tools, model)
            return serve(
                state,
                entry,
                StreamingResponse(
                    events, media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
                ),
            )
        return serve(state, entry, JSONResponse(await complete(state, step, tools, model)))

    async def _unknown(request: Request) -> Response:
        body = await request.body()
        state.record(
            Recorded(
                "unknown",
                request.method,
                request.url.path,
                request.url.query,
                body.decode("utf-8", "replace"),
                kind="unknown",
            )
        )
        message = f"scripted model server: no route for {request.method} {request.url.path}"
        return JSONResponse({"error": {"code": 404, "message": message}}, status_code=404)

    return [Route("/v1beta/models/{call:path}", model_call, methods=["POST"])]
