"""The OpenAI Responses API as codex-acp 0.16.0 (Codex) uses it: ``POST /v1/responses``.

Streamed (SSE): ``response.created``, then per output item ``response.output_item.added``,
its deltas (``response.output_text.delta``, ``response.reasoning_summary_text.delta``) and
``response.output_item.done``, then ``response.completed`` with usage. A tool call is an
item of type ``function_call`` with a ``call_id`` (arguments as a JSON string); its result
comes back as a ``function_call_output`` item in the next request's ``input``. Edits use
the freeform ``apply_patch`` tool when the request offers it (a ``custom_tool_call`` whose
``input`` is the patch; ``custom_tool_call_output`` comes back), else an ``apply_patch``
heredoc through ``exec_command``. A request
without the command tool (``exec_command``/``shell``) is a *side* request, answered at once.
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
from tests.model_server.tool_calls import edit_patch, render_tool

API = "openai-responses"
_ids = count(1)
# Context Codex sends as user messages that the user did not type
CONTEXT_TAGS = ("<environment_context>", "<user_instructions>", "<INSTRUCTIONS>", "# AGENTS.md")
RESULT_TYPES = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def _texts(item: JsonObject) -> list[str]:
    content = item.get("content")
    if isinstance(content, str):
        return [content]
    return [str(c.get("text", "")) for c in content or [] if isinstance(c, dict)]


def _is_prompt(item: JsonObject) -> bool:
    if item.get("type", "message") != "message" or item.get("role") != "user":
        return False
    return any(t.strip() and not t.lstrip().startswith(CONTEXT_TAGS) for t in _texts(item))


def position(items: list[JsonObject]) -> tuple[int, int]:
    """(user turn, step): prompts are user messages the user typed (not Codex's context);
    the step is the number of tool results since the last prompt."""
    return conversation_position(items, lambda i: int(i.get("type") in RESULT_TYPES), _is_prompt)


# A tool offered inside a Responses namespace (Codex: MCP servers as ``mcp__<server>``) is
# scripted as ``<namespace>__<tool>``; its schema says where it lives.
NAMESPACED = "x-scripted-namespace"


def tool_schemas(body: JsonObject) -> dict[str, Any]:
    tools: dict[str, Any] = {}
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and tool.get("type") == "namespace" and tool.get("name"):
            for inner in tool.get("tools") or []:
                if isinstance(inner, dict) and inner.get("name"):
                    where = (tool["name"], inner["name"])
                    schema = {**(inner.get("parameters") or {}), NAMESPACED: where}
                    tools[f"{tool['name']}__{inner['name']}"] = schema
        elif isinstance(tool, dict) and tool.get("type") == "custom" and tool.get("name"):
            tools[tool["name"]] = {"type": "custom"}  # freeform: the input is raw text
        elif isinstance(tool, dict) and tool.get("name"):
            tools[tool["name"]] = tool.get("parameters") or {}
        elif isinstance(tool, dict) and tool.get("type") == "local_shell":
            tools["local_shell"] = {}
    return tools


def custom_patch(tools: dict[str, Any]) -> bool:
    """The request offers ``apply_patch`` as a freeform (custom) tool."""
    return bool((tools.get("apply_patch") or {}).get("type") == "custom")


def is_turn(body: JsonObject) -> bool:
    return any(n in tool_schemas(body) for n in ("exec_command", "shell", "local_shell"))


def _sse(data: JsonObject) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def _response(model: str, status: str, output: list[JsonObject]) -> JsonObject:
    out: JsonObject = {
        "id": f"resp_scripted_{next(_ids)}",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": output,
    }
    if status == "completed":
        out["usage"] = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 110,
        }
    return out


def items_of(step: Step, tools: dict[str, Any]) -> list[JsonObject]:
    """The output items of the response for ``step`` (text of a Say filled when streamed)."""
    if isinstance(step, Tool) and step.action in ("edit", "write") and custom_patch(tools):
        # what Codex's own models do when offered the freeform apply_patch tool
        n = next(_ids)
        return [
            {
                "type": "custom_tool_call",
                "id": f"ctc_scripted_{n}",
                "call_id": f"call_scripted_{n}",
                "name": "apply_patch",
                "input": edit_patch(step),
                "status": "completed",
            }
        ]
    if isinstance(step, Tool):
        call = render_tool(step, tools)
        n = next(_ids)
        item: JsonObject = {
            "type": "function_call",
            "id": f"fc_scripted_{n}",
            "call_id": f"call_scripted_{n}",
            "name": call.name,
            "arguments": json.dumps(call.arguments),
            "status": "completed",
        }
        where = (tools.get(call.name) or {}).get(NAMESPACED)
        if where:  # a namespaced function is called by its own name, with its namespace
            item["namespace"], item["name"] = where
        return [item]
    items: list[JsonObject] = []
    if step.thought:
        items.append(
            {
                "type": "reasoning",
                "id": f"rs_scripted_{next(_ids)}",
                "summary": [{"type": "summary_text", "text": step.thought}],
            }
        )
    items.append(
        {
            "type": "message",
            "id": f"msg_scripted_{next(_ids)}",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": step.text, "annotations": []}],
        }
    )
    return items


async def stream(
    state: ServerState, step: Step, items: list[JsonObject], model: str
) -> AsyncIterator[bytes]:
    created = _response(model, "in_progress", [])
    yield _sse({"type": "response.created", "response": created})
    for index, item in enumerate(items):
        if item["type"] == "message":
            shell = {**item, "status": "in_progress", "content": []}
            yield _sse({"type": "response.output_item.added", "output_index": index, "item": shell})
            part = {"type": "output_text", "text": "", "annotations": []}
            yield _sse(
                {
                    "type": "response.content_part.added",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "part": part,
                }
            )
            say = step if isinstance(step, Say) else Say(item["content"][0]["text"])
            async for piece in state.pieces(say):
                yield _sse(
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "delta": piece,
                    }
                )
        else:
            yield _sse({"type": "response.output_item.added", "output_index": index, "item": item})
            if item["type"] == "reasoning":
                yield _sse(
                    {
                        "type": "response.reasoning_summary_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "summary_index": 0,
                        "delta": item["summary"][0]["text"],
                    }
                )
        yield _sse({"type": "response.output_item.done", "output_index": index, "item": item})
    done = {**_response(model, "completed", items), "id": created["id"]}
    yield _sse({"type": "response.completed", "response": done})


def side_step(body: JsonObject) -> Say:
    fmt = ((body.get("text") or {}).get("format")) or {}
    if fmt.get("type") == "json_schema":
        return Say(json.dumps(sample_json(fmt.get("schema") or {})))
    return Say("Scripted session")


def routes(state: ServerState) -> list[Route]:
    async def responses(request: Request) -> Response:
        body = await request.json()
        model = str(body.get("model") or "gpt-scripted")
        turn, index = position(body.get("input") or [])
        step: Step = state.script.step(turn, index)
        entry = Recorded(API, "POST", request.url.path, request.url.query, body, step=step)
        if not is_turn(body):
            entry.kind, entry.step = "side", None
            step = side_step(body)
        state.record(entry)
        items = items_of(step, tool_schemas(body))
        if body.get("stream"):
            events = stream(state, step, items, model)
            return serve(
                state,
                entry,
                StreamingResponse(
                    events, media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
                ),
            )
        if isinstance(step, Say):
            async for _ in state.pieces(step):
                pass
        return serve(state, entry, JSONResponse(_response(model, "completed", items)))

    return [Route("/v1/responses", responses, methods=["POST"])]
