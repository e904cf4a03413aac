"""The server survives every malformed ``acp/*`` request: a hypothesis fuzz of params.

One real server takes several hundred generated requests, one after the other: every acp/*
method, with params that mix valid values (live session ids, configured agents, real
directories) with wrong types, missing and unknown fields, NUL bytes, odd unicode, huge and
nested values, and params that are not objects at all. Every request must get exactly one
answer, promptly: a result, or an error with a documented code and a message. Afterwards the
server still works. The fuzz drives real state changes too (sessions created, closed,
prompted, agents restarted, sessions reloaded), so the paths after those are fuzzed as well.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from pygls.exceptions import JsonRpcException

from acp_lsp import protocol as p
from tests.reliability.conftest import Bridge, record_figure, scripted
from tests.support.lsp_editor import TestEditor

pytestmark = pytest.mark.timeout(600)

# ACP_LSP_FUZZ_EXAMPLES / ACP_LSP_FUZZ_SEED run a longer or different fuzz by hand.
EXAMPLES = int(os.environ.get("ACP_LSP_FUZZ_EXAMPLES", "400"))
SEED = os.environ.get("ACP_LSP_FUZZ_SEED")
DOCUMENTED = {
    p.INVALID_PARAMS,
    p.AUTH_REQUIRED,
    p.UNKNOWN_SESSION,
    p.RESOURCE_NOT_FOUND,
    p.UNKNOWN_AGENT,
    p.TURN_RUNNING,
    p.AGENT_UNAVAILABLE,
    p.NOT_SUPPORTED,
    p.AGENT_ERROR,
}
FUZZ_AGENT = {
    "initialize": {
        "protocolVersion": 1,
        "agentInfo": {"name": "fuzz", "version": "1"},
        "authMethods": [{"id": "login", "name": "Log in"}],
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"embeddedContext": True, "image": True},
            "sessionCapabilities": {"list": {}, "close": {}, "resume": {}, "delete": {}},
        },
    },
    "new_session": {
        "modes": {"currentModeId": "a", "availableModes": [{"id": "a", "name": "A"}]},
    },
    "on": {
        "session/prompt": [
            {
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "ok"},
                }
            }
        ]
    },
}

AGENTS = ["fz", "fz2"]


class State:
    """What the fuzz knows is live, so generated requests can hit real objects too."""

    def __init__(self, editor: TestEditor, workspace: Path) -> None:
        self.editor = editor
        self.workspace = workspace
        self.sessions: list[str] = []
        self.outcomes: Counter[str] = Counter()
        self.methods: Counter[str] = Counter()
        self.history: list[str] = []  # the last requests, for a failure report


@pytest.fixture
async def state(bridge: Bridge, tmp_path: Path, workspace: Path) -> AsyncIterator[State]:
    agents = {name: scripted(FUZZ_AGENT, pids=tmp_path / f"{name}.pids") for name in AGENTS}
    editor = await bridge.start(agents, options={"fs": {"allowOutsideWorkspace": False}})
    fuzz = State(editor, workspace)
    for agent in AGENTS:
        fuzz.sessions.append((await editor.new_session(agent=agent))["sessionId"])
    yield fuzz
    # after the whole fuzz: every method was hit, and the server still does real work
    record_figure("fuzz_requests", sum(fuzz.methods.values()))
    record_figure("fuzz_outcomes", dict(fuzz.outcomes))
    assert set(fuzz.methods) == set(METHOD_FIELDS), fuzz.methods
    listed = await editor.acp("acp/listAgents")
    assert {a["name"] for a in listed["agents"]} >= set(AGENTS)
    sid = (await editor.new_session(agent="fz"))["sessionId"]
    assert (await editor.prompt(sid, "still alive?"))["stopReason"] == "end_turn"
    assert editor.sessions[sid].message_texts() == ["still alive?", "ok"]


json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    st.sampled_from(["", "\x00", "../../etc/passwd", "~", "\u202e", "\ud7ff", "a" * 5000, "/"]),
)
# A nested object with a "jsonrpc" key is a known pygls parsing bug (see
# test_nested_jsonrpc_key_is_answered below); everything else is fair game.
keys = st.text(max_size=10).filter(lambda key: key != "jsonrpc")
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=12,
)
content_block = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=50)}),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["image", "audio", "resource", "resource_link", "_x"])},
        optional={"data": json_value, "uri": json_value, "resource": json_value},
    ),
    st.dictionaries(keys, json_value, max_size=3),
)

# Field name -> strategy of plausible values; garbage of any type is mixed in below.
FIELDS = {
    "sessionId": "session",
    "agent": "agent",
    "cwd": "dir",
    "additionalDirectories": "dirs",
    "prompt": "prompt",
    "workDoneToken": "token",
    "modeId": "text",
    "configId": "text",
    "value": "value",
    "enabled": "bool",
    "action": "action",
    "toolCallId": "text",
    "path": "dir",
    "methodId": "method",
    "includeRegistry": "bool",
    "query": "text",
    "cursor": "text",
    "limit": "count",
    "title": "text",
    "format": "format",
    "messageIndex": "count",
    "restoreFiles": "bool",
    "dryRun": "bool",
}
METHOD_FIELDS = {
    p.ACP_LIST_AGENTS: ["includeRegistry"],
    p.ACP_NEW_SESSION: ["agent", "cwd", "additionalDirectories"],
    p.ACP_LIST_SESSIONS: ["agent", "cwd", "query", "cursor", "limit"],
    p.ACP_LOAD_SESSION: ["agent", "sessionId", "cwd"],
    p.ACP_GET_SESSION: ["sessionId"],
    p.ACP_PROMPT: ["sessionId", "prompt", "workDoneToken"],
    p.ACP_CANCEL: ["sessionId"],
    p.ACP_SET_MODE: ["sessionId", "modeId"],
    p.ACP_SET_CONFIG_OPTION: ["sessionId", "configId", "value"],
    p.ACP_CLOSE_SESSION: ["sessionId"],
    p.ACP_DELETE_SESSION: ["sessionId", "agent"],
    p.ACP_SET_FOLLOW: ["sessionId", "enabled"],
    p.ACP_REVIEW_EDIT: ["sessionId", "action", "toolCallId", "path"],
    p.ACP_AUTHENTICATE: ["agent", "methodId"],
    p.ACP_RESTART_AGENT: ["agent"],
    p.ACP_LOGOUT: ["agent"],
    p.ACP_FORK_SESSION: ["sessionId"],
    p.ACP_RENAME_SESSION: ["sessionId", "title"],
    p.ACP_EXPORT_SESSION: ["sessionId", "format"],
    p.ACP_INSTALL_AGENT: ["agent"],
    p.ACP_UPDATE_AGENT: ["agent"],
    p.ACP_RESTORE_CHECKPOINT: ["sessionId", "messageIndex", "dryRun"],
    p.ACP_REWIND_SESSION: ["sessionId", "messageIndex", "restoreFiles"],
}
assert set(METHOD_FIELDS) == set(p.EDITOR_REQUESTS)


class LiveSession:
    """Stands for the n-th live session, resolved when the request is sent (so what is drawn
    never depends on the server's state)."""

    def __init__(self, index: int) -> None:
        self.index = index


def plausible(kind: str, ws: str) -> st.SearchStrategy[Any]:
    sessions = st.integers(min_value=0, max_value=63).map(LiveSession)
    return {
        "session": st.one_of(sessions, sessions, st.text(max_size=12)),
        "agent": st.sampled_from([*AGENTS, "nope", "", "FZ"]),
        "dir": st.sampled_from([ws, ws + "/src", ws + "/src/app.py", "/", "relative", ws + "/.."]),
        "dirs": st.lists(st.sampled_from([ws, "/tmp", "rel", "/nonexistent"]), max_size=3),
        "prompt": st.one_of(st.text(max_size=60), st.lists(content_block, max_size=4)),
        "token": st.one_of(st.text(max_size=10), st.integers()),
        "text": st.text(max_size=20),
        "value": st.one_of(st.text(max_size=10), st.booleans()),
        "bool": st.booleans(),
        "action": st.sampled_from(["accept", "reject", "ACCEPT", ""]),
        "method": st.sampled_from(["login", "other"]),
        "count": st.one_of(st.integers(min_value=-2, max_value=500), st.text(max_size=4)),
        "format": st.sampled_from(["markdown", "html", ""]),
    }[kind]


@st.composite
def requests(draw: st.DrawFn, ws: str) -> tuple[str, Any]:
    method = draw(st.sampled_from(sorted(METHOD_FIELDS)))
    shape = draw(st.sampled_from(["object"] * 8 + ["not-object", "absent"]))
    if shape == "absent":
        return method, None
    if shape == "not-object":
        return method, draw(st.one_of(json_leaf, st.lists(json_leaf, max_size=3)))
    params: dict[str, Any] = {}
    for name in METHOD_FIELDS[method]:
        how = draw(st.sampled_from(["plausible"] * 5 + ["garbage", "missing"]))
        if how == "plausible":
            params[name] = draw(plausible(FIELDS[name], ws))
        elif how == "garbage":
            params[name] = draw(json_value)
    if draw(st.booleans()):
        params.update(draw(st.dictionaries(keys, json_value, max_size=2)))
    return method, params


def resolve(value: Any, sessions: list[str]) -> Any:
    if isinstance(value, LiveSession):
        return sessions[value.index % len(sessions)] if sessions else "none"
    if isinstance(value, dict):
        return {k: resolve(v, sessions) for k, v in value.items()}
    return value


async def send(state: State, method: str, params: Any) -> tuple[str, Any]:
    """One request; ('result', value) or ('error', code). Fails if nothing comes back."""
    params = resolve(params, state.sessions)
    state.methods[method] += 1
    state.history = [*state.history[-15:], f"{method} {json.dumps(params)[:300]}"]
    try:
        result = await asyncio.wait_for(
            state.editor.protocol.send_request_async(method, params), timeout=30
        )
    except TimeoutError:
        history = "\n".join(state.history)
        raise AssertionError(f"no answer in 30 s; last requests:\n{history}") from None
    except JsonRpcException as exc:
        assert isinstance(exc.message, str) and exc.message, (method, params)
        assert exc.code in DOCUMENTED, (method, params, exc.code, exc.message)
        if exc.code == p.INVALID_PARAMS:
            assert ":" in exc.message, f"{method}: -32602 must name the field: {exc.message}"
        state.outcomes[f"error {exc.code}"] += 1
        return "error", exc.code
    state.outcomes["result"] += 1
    assert isinstance(result, dict), (method, result)
    json.dumps(result)
    if method in (p.ACP_NEW_SESSION, p.ACP_LOAD_SESSION) and isinstance(result, dict):
        sid = result.get("sessionId")
        if isinstance(sid, str) and sid not in state.sessions:
            state.sessions.append(sid)
    if method == p.ACP_CLOSE_SESSION and isinstance(params, dict):
        sid = params.get("sessionId")
        if sid in state.sessions:
            state.sessions.remove(sid)
    return "result", result


@pytest.mark.heavy
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=SEED is None,
    database=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.generate],  # the server is stateful: a replay would not be the same run
)
@seed(int(SEED or 0))
@given(data=st.data())
async def test_server_survives_fuzzed_acp_requests(state: State, data: st.DataObject) -> None:
    method, params = data.draw(requests(str(state.workspace)), label="request")
    await send(state, method, params)


async def test_nested_jsonrpc_key_is_answered(bridge: Bridge, tmp_path: Path) -> None:
    editor = await bridge.start({"fz": scripted(FUZZ_AGENT, pids=tmp_path / "p")})
    sid = (await editor.new_session())["sessionId"]
    block = {"type": "text", "text": "hi", "_meta": {"jsonrpc": "2.0", "note": 1}}
    result = await asyncio.wait_for(
        editor.protocol.send_request_async("acp/prompt", {"sessionId": sid, "prompt": [block]}),
        timeout=3,
    )
    assert result == {"stopReason": "end_turn"}
