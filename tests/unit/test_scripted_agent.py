"""The scripted ACP agent (tests/agents/scripted_acp.py) against a minimal raw NDJSON client."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.agents import Peers, read_log, scripted_command
from tests.support.schema import (
    ConversationValidator,
    validate_agent_message,
    validate_agent_response,
    validate_client_message,
    validate_client_response,
)

pytestmark = pytest.mark.timeout(30)
PROMPT = [{"type": "text", "text": "hello"}]


class RawClient:
    """A child process spoken to in raw NDJSON; keeps every frame it read."""

    def __init__(self, proc: asyncio.subprocess.Process, log: Path) -> None:
        self.proc = proc
        self.log = log
        self.frames: list[Any] = []
        self.lines: list[bytes] = []
        self._next_id = 100

    async def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        await self.proc.stdin.drain()

    async def read_line(self) -> bytes:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), 10)
        if not line:
            raise EOFError("the agent closed stdout")
        self.lines.append(line)
        return line

    async def read(self) -> Any:
        frame = json.loads(await self.read_line())
        self.frames.append(frame)
        return frame

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request and read until its response (other frames are kept)."""
        self._next_id += 1
        request_id = self._next_id
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return await self.until(
            lambda f: isinstance(f, dict) and f.get("id") == request_id and "method" not in f
        )

    async def until(self, done: Callable[[Any], bool]) -> Any:
        while True:
            frame = await self.read()
            if done(frame):
                return frame

    async def answer(self, frame: dict[str, Any], result: Any) -> None:
        await self.send({"jsonrpc": "2.0", "id": frame["id"], "result": result})

    def updates(self) -> list[dict[str, Any]]:
        return [
            f["params"]["update"]
            for f in self.frames
            if isinstance(f, dict) and f.get("method") == "session/update"
        ]

    def received(self) -> list[dict[str, Any]]:
        return read_log(self.log)


@asynccontextmanager
async def scripted(
    tmp_path: Path, script: dict[str, Any], arg: str | None = None
) -> AsyncIterator[RawClient]:
    log = tmp_path / "received.jsonl"
    proc = await asyncio.create_subprocess_exec(
        *scripted_command(script, arg=arg, tmp_dir=tmp_path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "SCRIPTED_ACP_LOG": str(log)},
        cwd=str(tmp_path),
        limit=64 * 1024 * 1024,
    )
    try:
        yield RawClient(proc, log)
    finally:
        if proc.returncode is None:
            assert proc.stdin is not None
            proc.stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except TimeoutError:
                proc.kill()
                await proc.wait()


async def open_session(client: RawClient, cwd: Path) -> str:
    await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    response = await client.request("session/new", {"cwd": str(cwd), "mcpServers": []})
    return str(response["result"]["sessionId"])


async def test_defaults_templates_and_the_receive_log(tmp_path: Path) -> None:
    script = {
        "on": {
            "session/prompt": [
                {
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": "{prompt} from {cwd} ({arg})"},
                    }
                },
                {"update": {"sessionUpdate": "usage_update", "used": "{n}", "size": 100}},
            ]
        }
    }
    async with scripted(tmp_path, script, arg="A") as client:
        init = await client.request("initialize", {"protocolVersion": 1})
        assert init["result"]["protocolVersion"] == 1
        assert init["result"]["agentCapabilities"]["sessionCapabilities"] == {
            "list": {},
            "close": {},
            "resume": {},
        }
        sid = (await client.request("session/new", {"cwd": str(tmp_path), "mcpServers": []}))[
            "result"
        ]["sessionId"]
        assert sid == "scripted-1"
        done = await client.request("session/prompt", {"sessionId": sid, "prompt": PROMPT})
        assert done["result"] == {"stopReason": "end_turn"}
        assert client.updates() == [
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": f"hello from {tmp_path} (A)"},
            },
            {
                "sessionUpdate": "usage_update",
                "used": 1,
                "size": 100,
            },  # a lone placeholder keeps its type
        ]
        unknown = await client.request("weird/method", {})
        assert unknown["error"]["code"] == -32601
    assert [m["method"] for m in client.received()] == [
        "initialize",
        "session/new",
        "session/prompt",
        "weird/method",
    ]
    methods = {101: "initialize", 102: "session/new", 103: "session/prompt", 104: "weird/method"}
    for frame in client.frames:  # what the script sent is valid ACP
        validate_agent_message(frame, None if "method" in frame else methods[frame["id"]])


async def test_requests_to_the_client_save_and_expect(tmp_path: Path) -> None:
    script = {
        "on": {
            "session/prompt": [
                {
                    "request": "fs/read_text_file",
                    "params": {"sessionId": "{sessionId}", "path": "{cwd}/a.txt"},
                    "save_as": "r",
                },
                {
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": "read: {r.content}"},
                    }
                },
                {
                    "request": "fs/write_text_file",
                    "params": {"sessionId": "{sessionId}", "path": "{cwd}/a.txt", "content": "x"},
                    "expect": {"result": {}},
                },
                {
                    "request": "session/request_permission",
                    "params": {
                        "sessionId": "{sessionId}",
                        "toolCall": {"toolCallId": "c"},
                        "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
                    },
                    "expect": {"result": {"outcome": {"optionId": "ok"}}},
                },
            ]
        }
    }
    async with scripted(tmp_path, script) as client:
        sid = await open_session(client, tmp_path)
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "session/prompt",
                "params": {"sessionId": sid, "prompt": PROMPT},
            }
        )
        read = await client.until(lambda f: f.get("method") == "fs/read_text_file")
        assert read["params"] == {"sessionId": sid, "path": f"{tmp_path}/a.txt"}
        await client.answer(read, {"content": "ABC"})
        write = await client.until(lambda f: f.get("method") == "fs/write_text_file")
        await client.answer(write, {})
        permission = await client.until(lambda f: f.get("method") == "session/request_permission")
        await client.answer(
            permission, {"outcome": {"outcome": "cancelled"}}
        )  # not what it expects
        response = await client.until(lambda f: f.get("id") == 7)
    assert client.updates()[0]["content"]["text"] == "read: ABC"
    assert response["error"]["code"] == -32603
    [failure] = response["error"]["data"]
    assert failure.startswith("session/request_permission: expected")
    responses = [m for m in client.received() if "method" not in m]
    assert [r["id"] for r in responses] == [read["id"], write["id"], permission["id"]]


async def test_sessions_list_load_replay_and_nth_call_override(tmp_path: Path) -> None:
    history = [
        {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "earlier"}},
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "reply"}},
    ]
    script = {
        "sessions": {"old": {"cwd": "/w", "title": "Old one", "history": history}},
        "on": {"session/prompt#2": [{"respond": {"stopReason": "max_tokens"}}]},
    }
    async with scripted(tmp_path, script) as client:
        await client.request("initialize", {"protocolVersion": 1})
        listed = await client.request("session/list", {})
        assert listed["result"] == {
            "sessions": [{"sessionId": "old", "cwd": "/w", "title": "Old one"}]
        }
        loaded = await client.request(
            "session/load", {"sessionId": "old", "cwd": "/w", "mcpServers": []}
        )
        assert loaded["result"] == {}
        assert client.updates() == history  # replayed before the response
        params = {"sessionId": "old", "prompt": PROMPT}
        assert (await client.request("session/prompt", params))["result"][
            "stopReason"
        ] == "end_turn"
        assert (await client.request("session/prompt", params))["result"][
            "stopReason"
        ] == "max_tokens"
        assert (await client.request("session/prompt", params))["result"][
            "stopReason"
        ] == "end_turn"
    for frame in client.frames:
        if "method" in frame:
            validate_agent_message(frame)


async def test_cancel_cuts_a_sleep_short_unless_ignored(tmp_path: Path) -> None:
    script = {
        "on": {
            "session/prompt": [{"sleep": 20}],
            "session/prompt#2": [{"ignore_cancel": True}, {"sleep": 0.2}],
        }
    }
    async with scripted(tmp_path, script) as client:
        sid = await open_session(client, tmp_path)
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/prompt",
                "params": {"sessionId": sid, "prompt": PROMPT},
            }
        )
        await client.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}
        )
        first = await client.until(lambda f: f.get("id") == 1)
        assert first["result"] == {"stopReason": "cancelled"}
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/prompt",
                "params": {"sessionId": sid, "prompt": PROMPT},
            }
        )
        await client.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}
        )
        second = await client.until(lambda f: f.get("id") == 2)
        assert second["result"] == {"stopReason": "end_turn"}  # it ignored the cancel


async def test_wait_cancel_and_a_hanging_handler(tmp_path: Path) -> None:
    script = {
        "on": {
            "session/prompt": [{"wait_cancel": True}, {"respond": {"stopReason": "cancelled"}}],
            "session/set_mode": [{"hang": True}],
        }
    }
    async with scripted(tmp_path, script) as client:
        sid = await open_session(client, tmp_path)
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/set_mode",
                "params": {"sessionId": sid, "modeId": "x"},
            }
        )
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/prompt",
                "params": {"sessionId": sid, "prompt": PROMPT},
            }
        )
        listed = await client.request("session/list", {})  # the hung handler blocks nothing else
        assert listed["result"]["sessions"][0]["sessionId"] == sid
        await client.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}
        )
        done = await client.until(lambda f: f.get("id") == 2)
        assert done["result"]["stopReason"] == "cancelled"
    assert not [f for f in client.frames if f.get("id") == 1]  # set_mode never answered


async def test_bad_frames_stderr_and_a_crash_mid_turn(tmp_path: Path) -> None:
    script = {
        "on": {
            "session/prompt": [
                {"raw": "this is not json"},
                {"bytes_b64": base64.b64encode(b'{"bad": "\xff\xfe"}\n').decode()},
                {"json": [{"jsonrpc": "2.0", "method": "session/update", "params": {}}]},
                {"json": {"jsonrpc": "2.0", "id": 9999, "result": {}}},
                {"notify": "_vendor/ping", "params": {"x": 1}},
                {"stderr": "noise\n", "repeat": 20000},
                {
                    "request": "session/request_permission",
                    "wait": False,
                    "params": {
                        "sessionId": "{sessionId}",
                        "toolCall": {"toolCallId": "c"},
                        "options": [],
                    },
                },
                {"exit": 3},
            ]
        }
    }
    async with scripted(tmp_path, script) as client:
        sid = await open_session(client, tmp_path)
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/prompt",
                "params": {"sessionId": sid, "prompt": PROMPT},
            }
        )
        assert client.proc.stderr is not None
        stderr_task = asyncio.create_task(client.proc.stderr.read())  # drained, or it would block
        lines = [await client.read_line() for _ in range(6)]
        with pytest.raises(EOFError):
            await client.read_line()
        assert await asyncio.wait_for(client.proc.wait(), 10) == 3
        stderr = await stderr_task
    assert lines[0] == b"this is not json\n"
    assert lines[1] == b'{"bad": "\xff\xfe"}\n'
    assert json.loads(lines[2]) == [{"jsonrpc": "2.0", "method": "session/update", "params": {}}]
    assert json.loads(lines[3])["id"] == 9999
    assert json.loads(lines[4])["method"] == "_vendor/ping"
    assert json.loads(lines[5])["method"] == "session/request_permission"
    assert stderr.count(b"noise\n") == 20000


async def test_crash_at_start(tmp_path: Path) -> None:
    script = {"start": [{"stderr": "cannot start: no credentials\n"}, {"exit": 2}]}
    async with scripted(tmp_path, script) as client:
        assert await asyncio.wait_for(client.proc.wait(), 10) == 2
        assert client.proc.stdout is not None and client.proc.stderr is not None
        assert await client.proc.stdout.read() == b""
        assert await client.proc.stderr.read() == b"cannot start: no credentials\n"


async def test_flood_of_20000_chunks_in_order(tmp_path: Path) -> None:
    script = {
        "on": {"session/prompt": [{"flood": {"count": 20000, "text": "c{i} ", "messageId": "m1"}}]}
    }
    async with scripted(tmp_path, script) as client:
        sid = await open_session(client, tmp_path)
        done = await client.request("session/prompt", {"sessionId": sid, "prompt": PROMPT})
    assert done["result"]["stopReason"] == "end_turn"
    chunks = client.updates()
    assert len(chunks) == 20000
    assert [c["content"]["text"] for c in chunks[:3]] == ["c0 ", "c1 ", "c2 "]
    assert all(c["content"]["text"] == f"c{i} " for i, c in enumerate(chunks))
    assert {c["messageId"] for c in chunks} == {"m1"}
    validate_agent_message(client.frames[-2])


async def test_ten_megabyte_line(tmp_path: Path) -> None:
    script = {
        "on": {
            "session/prompt": [
                {"flood": {"count": 1, "text": "y", "text_repeat": 10 * 1024 * 1024}}
            ]
        }
    }
    async with scripted(tmp_path, script) as client:
        sid = await open_session(client, tmp_path)
        await client.request("session/prompt", {"sessionId": sid, "prompt": PROMPT})
    [chunk] = client.updates()
    assert chunk["content"]["text"] == "y" * (10 * 1024 * 1024)


async def test_write_then_report_shapes_of_claude_agent_acp(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("old\n")
    diff = {"type": "diff", "path": "{cwd}/a.py", "oldText": None, "newText": "new\n"}
    script = {
        "on": {
            "session/prompt": [
                {
                    "update": {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": "w1",
                        "status": "in_progress",
                    }
                },  # before its tool_call
                {"write_file": {"path": "a.py", "content": "new\n"}},
                {
                    "update": {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": "w1",
                        "status": "completed",
                        "content": [diff],
                        "locations": [{"path": "{cwd}/a.py"}],
                    }
                },
                {
                    "update": {
                        "sessionUpdate": "tool_call",
                        "toolCallId": "x",
                        "title": "Custom",
                        "kind": "_vendor_kind",
                    }
                },
            ]
        }
    }
    async with scripted(tmp_path, script) as client:
        sid = await open_session(client, tmp_path)
        await client.request("session/prompt", {"sessionId": sid, "prompt": PROMPT})
    assert (tmp_path / "a.py").read_text() == "new\n"  # the agent wrote it itself
    updates = [f for f in client.frames if f.get("method") == "session/update"]
    assert updates[1]["params"]["update"]["content"][0] == {**diff, "path": f"{tmp_path}/a.py"}
    for frame in updates[:2]:
        validate_agent_message(frame)  # v1-valid, even with oldText null
    with pytest.raises(AssertionError, match="_vendor_kind"):
        validate_agent_message(updates[2])  # a `_` kind is not v1: the schema catches it


def test_peers_were_fetched() -> None:
    peers = Peers()
    assert peers.missing() == [], "run scripts/fetch-test-peers.sh"
    assert "$defs" in json.loads(peers.schema.read_text())


# -- tests/support/schema.py: per-method validation (reference/acp.md §10) ---------------------


def _note(update: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": update},
    }


@pytest.mark.parametrize(
    ("check", "message", "needle"),
    [
        (  # tool_call without title
            "agent",
            _note({"sessionUpdate": "tool_call", "toolCallId": "t"}),
            "'title' is a required property",
        ),
        (  # unknown sessionUpdate
            "agent",
            _note({"sessionUpdate": "bogus"}),
            "matches no variant",
        ),
        (  # session/new without mcpServers
            "client",
            {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w"}},
            "'mcpServers' is a required property",
        ),
        (  # passes the envelope's ExtRequest branch, but not PromptRequest
            "client",
            {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"garbage": 1}},
            "'sessionId' is a required property",
        ),
        (
            "client",
            {"jsonrpc": "2.0", "id": 1, "method": "session/fly", "params": {}},
            "not a request",
        ),
        ("client", {"id": 1, "method": "session/cancel", "params": {"sessionId": "s"}}, "jsonrpc"),
        ("client", {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}}, "exactly one"),
    ],
)
def test_schema_negatives(check: str, message: dict[str, Any], needle: str) -> None:
    validate = validate_agent_message if check == "agent" else validate_client_message
    with pytest.raises(AssertionError, match=re.escape(needle)):
        validate(message)


def test_schema_results_by_method() -> None:
    with pytest.raises(AssertionError, match="optionId"):  # selected without optionId
        validate_client_response("session/request_permission", {"outcome": {"outcome": "selected"}})
    with pytest.raises(AssertionError, match="not of type 'object'"):  # null result
        validate_client_message({"jsonrpc": "2.0", "id": 3, "result": None}, "fs/write_text_file")
    with pytest.raises(AssertionError, match="stopReason"):
        validate_agent_response("session/prompt", {})
    validate_client_response("session/request_permission", {"outcome": {"outcome": "cancelled"}})
    validate_client_message({"jsonrpc": "2.0", "id": 3, "result": {}}, "fs/write_text_file")
    validate_client_message(
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32002, "message": "gone"}}
    )
    validate_client_message({"jsonrpc": "2.0", "id": 4, "method": "_zed.dev/x", "params": {"a": 1}})
    validate_agent_response("session/prompt", {"stopReason": "cancelled"})


def test_conversation_validator_pairs_responses_with_requests() -> None:
    conversation = ConversationValidator()
    conversation.from_agent(
        {
            "jsonrpc": "2.0",
            "id": "a1",
            "method": "fs/read_text_file",
            "params": {"sessionId": "s", "path": "/a"},
        }
    )
    with pytest.raises(AssertionError, match="fs/read_text_file result"):
        conversation.from_client({"jsonrpc": "2.0", "id": "a1", "result": {"text": "wrong field"}})
    conversation.from_client(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    )
    with pytest.raises(AssertionError, match="protocolVersion"):
        conversation.from_agent({"jsonrpc": "2.0", "id": 0, "result": {}})
