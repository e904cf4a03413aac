"""The HTTP side of the AAP v3 test server: endpoints, auth, and turn framing (aap.md §3, §4).

Mounted under ``/v1`` so clients must keep the base path when joining URLs. Every request is
recorded in ``ServerState.requests`` before it is answered, so tests can assert exactly what a
client sent. Error bodies follow the reference SDK: ``{"error": "<text>"}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route

from tests.aap_server.model import run_turn
from tests.aap_server.state import (
    AGENTS,
    AapSession,
    JsonObject,
    RecordedRequest,
    ServerState,
    agent_info,
)

BASE_PATH = "/v1"
STREAM_MODES = ("delta", "message", "none")
HISTORY_TYPES = ("compacted", "full")

Handler = Callable[[Request, ServerState, Any], Awaitable[Response]]


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _endpoint(state: ServerState, handler: Handler, public: bool = False) -> Callable[..., Any]:
    """Record the request, check the bearer key, parse the JSON body, then run ``handler``."""

    async def endpoint(request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        state.requests.append(
            RecordedRequest(
                method=request.method,
                path=request.url.path.removeprefix(BASE_PATH),
                query=dict(request.query_params),
                body=body,
                authorization=request.headers.get("authorization"),
            )
        )
        expected = None if public or state.api_key is None else f"Bearer {state.api_key}"
        if expected is not None and request.headers.get("authorization") != expected:
            return _error(401, "invalid or missing API key")
        if raw and isinstance(body, str):
            return _error(400, "body is not JSON")
        return await handler(request, state, body)

    return endpoint


def _session(request: Request, state: ServerState) -> AapSession | None:
    return state.sessions.get(request.path_params["session_id"])


async def get_meta(request: Request, state: ServerState, body: Any) -> Response:
    return JSONResponse({"version": state.meta_version, "agents": AGENTS})


async def list_sessions(request: Request, state: ServerState, body: Any) -> Response:
    ids = list(state.sessions)
    after = request.query_params.get("after")
    start = int(after.removeprefix("c")) if after and after.startswith("c") else 0
    page = ids[start : start + state.page_size]
    out: JsonObject = {"sessions": [state.sessions[i].info() for i in page]}
    if start + state.page_size < len(ids):
        out["next"] = f"c{start + state.page_size}"
    return JSONResponse(out)


async def create_session(request: Request, state: ServerState, body: Any) -> Response:
    if not isinstance(body, dict) or not isinstance(body.get("agent"), dict):
        return _error(400, "agent is required")
    agent = body["agent"]
    info = agent_info(str(agent.get("name")))
    if info is None:
        return _error(400, f"unknown agent {agent.get('name')!r}")
    exposed = {t["name"] for t in info.get("tools", [])}
    tools = agent.get("tools") or []
    unknown = [t.get("name") for t in tools if t.get("name") not in exposed]
    if unknown:
        return _error(400, f"unknown server tools: {unknown}")
    problem = _check_options(info, agent.get("options") or {})
    if problem:
        return _error(400, problem)
    session = AapSession(
        session_id=state.new_session_id(),
        agent=info["name"],
        tools=tools,
        options=dict(agent.get("options") or {}),
        client_tools=list(body.get("tools") or []),
        history=list(body.get("messages") or []),
    )
    state.sessions[session.session_id] = session
    return JSONResponse({"sessionId": session.session_id}, status_code=201)


def _check_options(info: JsonObject, options: dict[str, Any]) -> str | None:
    declared = {o["name"]: o for o in info.get("options", [])}
    for name, value in options.items():
        spec = declared.get(name)
        if spec is None:
            return f"unknown option {name!r}"
        if spec["type"] == "select" and value not in spec["options"]:
            return f"option {name!r} must be one of {spec['options']}"
    return None


async def get_session(request: Request, state: ServerState, body: Any) -> Response:
    session = _session(request, state)
    if session is None:
        return _error(404, "Session not found")
    return JSONResponse(session.info())


async def delete_session(request: Request, state: ServerState, body: Any) -> Response:
    if state.sessions.pop(request.path_params["session_id"], None) is None:
        return _error(404, "Session not found")
    return Response(status_code=204)


async def get_history(request: Request, state: ServerState, body: Any) -> Response:
    session = _session(request, state)
    if session is None:
        return _error(404, "Session not found")
    kind = request.query_params.get("type")
    if kind not in HISTORY_TYPES:
        return _error(400, 'type must be "compacted" or "full"')
    declared = (agent_info(session.agent) or {}).get("capabilities", {}).get("history", {})
    if kind not in declared:
        return _error(404, "Specified history not found")
    history = session.history if kind == "full" else _compact(session.history)
    return JSONResponse({"history": {kind: history}})


def _compact(history: list[JsonObject]) -> list[JsonObject]:
    """Compaction is agent-defined: this one drops thinking blocks."""
    out = []
    for message in history:
        content = message.get("content")
        if isinstance(content, list):
            message = {**message, "content": [b for b in content if b.get("type") != "thinking"]}
        out.append(message)
    return out


async def post_turn(request: Request, state: ServerState, body: Any) -> Response:
    session = _session(request, state)
    if session is None:
        return _error(404, "Session not found")
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return _error(400, "messages is required")
    mode = body.get("stream", "none")
    offered = (agent_info(session.agent) or {}).get("capabilities", {}).get("stream", {"none": {}})
    if mode not in STREAM_MODES or mode not in offered:
        return _error(400, f"stream mode {mode!r} is not offered by agent {session.agent!r}")
    problem = _apply_overrides(session, body)
    if problem:
        return _error(400, problem)
    events = run_turn(state, session, body["messages"])
    if mode == "none":
        return await _json_turn(events)
    return StreamingResponse(
        _sse_turn(state, events, delta=mode == "delta"),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache"},
    )


def _apply_overrides(session: AapSession, body: JsonObject) -> str | None:
    """Turn-level overrides persist for the session (aap.md §3)."""
    agent = body.get("agent")
    if isinstance(agent, dict):
        if agent.get("name") not in (None, session.agent):
            return "agent.name cannot change"
        if agent.get("tools") is not None:
            session.tools = list(agent["tools"])
        if agent.get("options"):
            session.options.update(agent["options"])
    if body.get("tools") is not None:
        session.client_tools = list(body["tools"])
    return None


async def _json_turn(events: AsyncIterator[tuple[str, Any]]) -> Response:
    produced: list[JsonObject] = []
    async for name, data in events:
        if name == "message":
            produced.append(data)
        elif name == "tool_result":
            produced.append({"role": "tool", **data})
        elif name == "cut":
            # A connection that dies mid-body: the client gets truncated JSON.
            return Response(b'{"stopReason": "end_', media_type="application/json")
        elif name == "turn_stop":
            return JSONResponse({"stopReason": data, "messages": produced})
    return _error(500, "turn ended without a stop reason")


def _frame(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def _pieces(value: str) -> list[str]:
    """Split text into word-sized deltas (at least one)."""
    return re.findall(r"\S+\s*|\s+", value) or [value]


async def _sse_turn(
    state: ServerState, events: AsyncIterator[tuple[str, Any]], delta: bool
) -> AsyncIterator[str]:
    finished = False
    try:
        yield _frame("turn_start", {})
        async for name, data in events:
            if name == "cut":
                finished = True
                return
            if name == "turn_stop":
                finished = True
                yield _frame("turn_stop", {"stopReason": data})
                return
            if name == "tool_result":
                yield _frame("tool_result", data)
                continue
            for block in data["content"]:  # an assistant message
                for frame in _block_frames(block, delta):
                    yield frame
    finally:
        if not finished:  # the client closed the stream (Starlette cancelled us)
            state.disconnects += 1


def _block_frames(block: JsonObject, delta: bool) -> list[str]:
    kind = block.get("type")
    if kind == "tool_use":
        data = {k: block[k] for k in ("toolCallId", "name", "input")}
        return [_frame("tool_call", data)]
    if kind in ("text", "thinking"):
        value = block[kind]
        if delta:
            return [_frame(f"{kind}_delta", {"delta": piece}) for piece in _pieces(value)]
        return [_frame(kind, {kind: value})]
    return []


def create_app(state: ServerState) -> Starlette:
    def route(path: str, handler: Handler, methods: list[str], public: bool = False) -> Route:
        return Route(path, _endpoint(state, handler, public), methods=methods)

    routes = [
        route("/meta", get_meta, ["GET"], public=True),
        route("/sessions", list_sessions, ["GET"]),
        route("/sessions", create_session, ["POST"]),
        route("/sessions/{session_id}", get_session, ["GET"]),
        route("/sessions/{session_id}", delete_session, ["DELETE"]),
        route("/sessions/{session_id}/history", get_history, ["GET"]),
        route("/sessions/{session_id}/turns", post_turn, ["POST"]),
    ]
    return Starlette(routes=[Mount(BASE_PATH, routes=routes)])
