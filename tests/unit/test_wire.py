"""The ACP wire layer against real child processes (tests/unit/wire_peers/*.py)."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_lsp.backends.wire import (
    REQUEST_CANCELLED,
    AgentGone,
    AgentProcess,
    LineBuffer,
    RpcError,
)
from acp_lsp.backends.wire_frames import NOT_PARSED, parse_frame
from tests.support.procs import running

pytestmark = pytest.mark.timeout(30)

PEERS = Path(__file__).parent / "wire_peers"
SCRIPTED = PEERS / "scripted_agent.py"
STUBBORN = PEERS / "stubborn_agent.py"
# PYTHONCOERCECLOCALE=0: else the Python peer adds LC_CTYPE to its own environment (PEP 538).
ENV = {"PATH": os.environ.get("PATH", os.defpath), "PYTHONCOERCECLOCALE": "0", "WIRE_TEST": "1"}

# process groups (getpgid, killpg) and SIGKILL are POSIX; Windows stops a tree otherwise
# (acp_lsp/platform/stop.py, tests/unit/test_platform_procs.py)
posix_groups = pytest.mark.skipif(
    sys.platform == "win32", reason="process groups (getpgid, killpg) and SIGKILL are POSIX"
)

RequestHandler = Callable[[str, Any], Awaitable[Any]]


class Recorded:
    """What the wire handed to our callbacks."""

    def __init__(self) -> None:
        self.notifications: list[tuple[str, Any]] = []
        self.stderr: list[str] = []
        self.exits: list[int | None] = []
        self.sent: list[dict[str, Any]] = []
        self.stderr_line_seen: dict[str, asyncio.Event] = {}

    def on_notification(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))

    def on_stderr(self, line: str) -> None:
        self.stderr.append(line)
        event = self.stderr_line_seen.get(line)
        if event is not None:
            event.set()

    def wait_stderr_line(self, line: str) -> asyncio.Event:
        return self.stderr_line_seen.setdefault(line, asyncio.Event())


async def method_not_found(method: str, params: Any) -> Any:
    raise RpcError(-32601, f"Method not found: {method}")


Spawn = Callable[..., Awaitable[tuple[AgentProcess, Recorded]]]


@pytest.fixture
async def spawn() -> AsyncIterator[Spawn]:
    started: list[AgentProcess] = []

    async def _spawn(
        script: Path = SCRIPTED,
        *,
        on_request: RequestHandler = method_not_found,
        on_notification: Callable[[str, Any], None] | None = None,
        cwd: str | None = None,
    ) -> tuple[AgentProcess, Recorded]:
        rec = Recorded()
        agent = await AgentProcess.start(
            sys.executable,
            [str(script)],
            env=ENV,
            cwd=cwd,
            on_notification=on_notification or rec.on_notification,
            on_request=on_request,
            on_stderr=rec.on_stderr,
            on_exit=rec.exits.append,
            on_send=rec.sent.append,
            name="peer",
        )
        started.append(agent)
        return agent, rec

    yield _spawn
    for agent in started:
        await agent.close(grace=0.5)


async def wait_group_gone(pgid: int) -> None:
    """Until the kernel forgets the group (killed zombies wait for init to reap them)."""
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        await asyncio.sleep(0.02)


# ---------------------------------------------------------------- requests and notifications


async def test_concurrent_requests_answered_out_of_order_reach_their_callers(
    spawn: Spawn,
) -> None:
    agent, _ = await spawn()
    held = [asyncio.create_task(agent.request("hold", {"n": n})) for n in range(5)]
    await asyncio.sleep(0)  # all five are queued before the release
    released = await agent.request("release", {})
    assert released == "released"
    assert await asyncio.gather(*held) == [{"n": n} for n in range(5)]


async def test_error_response_raises_rpc_error(spawn: Spawn) -> None:
    agent, _ = await spawn()
    with pytest.raises(RpcError) as caught:
        await agent.request("no/such_method", {"x": 1})
    assert caught.value.code == -32601
    assert caught.value.message == "no/such_method"
    assert await agent.request("echo", {"still": "alive"}) == {"still": "alive"}


async def test_ten_thousand_notifications_arrive_in_order_before_the_response(
    spawn: Spawn,
) -> None:
    agent, rec = await spawn()
    assert await agent.request("spam", {"count": 10_000}) == 10_000
    assert rec.notifications == [("n/seq", {"i": i}) for i in range(10_000)]


async def test_a_failing_notification_handler_does_not_stop_the_reader(spawn: Spawn) -> None:
    got: list[int] = []

    def flaky(method: str, params: Any) -> None:
        got.append(params["i"])
        if params["i"] % 2 == 0:
            raise RuntimeError("handler bug")

    agent, _ = await spawn(on_notification=flaky)
    assert await agent.request("spam", {"count": 4}) == 4
    assert got == [0, 1, 2, 3]


async def test_ten_megabyte_line_with_multibyte_text(spawn: Spawn) -> None:
    agent, _ = await spawn()
    # 'é' is two bytes in UTF-8: chunk boundaries fall inside characters.
    result = await agent.request("big", {"text": "é", "repeat": 5_000_000})
    assert len(result) == 5_000_000
    assert result == "é" * 5_000_000
    assert await agent.request("echo", {"after": "big"}) == {"after": "big"}


async def test_bad_lines_are_skipped_and_the_session_continues(
    spawn: Spawn, caplog: pytest.LogCaptureFixture
) -> None:
    agent, rec = await spawn()
    lines = [
        b"\xff\xfe not utf-8\n",
        b"{not json\n",
        b'[{"jsonrpc":"2.0","method":"n/batched","params":{}}]\n',
        b"42\n",
        b"\n",
        b'{"jsonrpc":"2.0","id":999,"result":"for nobody"}\n',
        b'{"jsonrpc":"2.0","method":"n/after","params":{"ok":true}}\n',
    ]
    with caplog.at_level(logging.WARNING, logger="acp_lsp.backends.wire"):
        assert await agent.request("raw", {"hex": [line.hex() for line in lines]}) == "raw done"
    assert rec.notifications == [("n/after", {"ok": True})]
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "not UTF-8" in logged
    assert "not JSON" in logged
    assert "batch" in logged
    assert "not a JSON object" in logged
    assert "unknown or abandoned id 999" in logged
    assert await agent.request("echo", [1, 2]) == [1, 2]
    assert agent.alive


async def test_stderr_flood_does_not_block_requests(spawn: Spawn) -> None:
    agent, rec = await spawn()
    done = rec.wait_stderr_line("stderr flood done")
    flood = asyncio.create_task(agent.request("stderr", {"size": 5_000_000}))
    echoes = await asyncio.gather(*(agent.request("echo", {"i": i}) for i in range(20)))
    assert echoes == [{"i": i} for i in range(20)]
    lines_written = await flood
    await asyncio.wait_for(done.wait(), 10)
    assert len(rec.stderr) == lines_written + 1
    assert rec.stderr[0].startswith("stderr line 0 ")
    assert rec.stderr[-2].startswith(f"stderr line {lines_written - 1} ")
    assert agent.stderr_tail().endswith("stderr flood done")
    assert len(agent.stderr_tail(max_bytes=500).encode()) <= 500


async def test_client_notifications_reach_the_agent_in_order(spawn: Spawn) -> None:
    agent, _ = await spawn()
    for n in range(50):
        agent.notify(f"note/{n}", {"n": n})
    assert await agent.request("seen", None) == [f"note/{n}" for n in range(50)]


# ---------------------------------------------------------------- agent → client requests


async def test_agent_requests_get_results_and_errors(spawn: Spawn) -> None:
    async def handler(method: str, params: Any) -> Any:
        await asyncio.sleep(0)
        if method == "fs/read_text_file":
            return {"content": f"text of {params['path']}"}
        if method == "fs/missing":
            raise RpcError(-32002, "Resource not found", {"uri": "file:///nope"})
        if method == "buggy":
            raise ValueError("kaput")
        raise RpcError(-32601, f"Method not found: {method}")

    agent, _ = await spawn(on_request=handler)

    ok = await agent.request(
        "ask", {"id": 5, "method": "fs/read_text_file", "params": {"path": "/a"}}
    )
    assert ok == {"jsonrpc": "2.0", "id": 5, "result": {"content": "text of /a"}}

    missing = await agent.request("ask", {"id": "s-1", "method": "fs/missing"})
    assert missing["id"] == "s-1"
    assert missing["error"] == {
        "code": -32002,
        "message": "Resource not found",
        "data": {"uri": "file:///nope"},
    }

    buggy = await agent.request("ask", {"id": 6, "method": "buggy"})
    assert buggy["error"] == {"code": -32603, "message": "kaput"}

    unknown = await agent.request("ask", {"id": 7, "method": "_vendor/thing"})
    assert unknown["error"]["code"] == -32601
    assert await agent.request("responses", None) == [5, "s-1", 6, 7]


async def test_cancel_request_while_the_handler_runs_answers_32800_once(spawn: Spawn) -> None:
    started = asyncio.Event()
    outcome: list[str] = []

    async def handler(method: str, params: Any) -> Any:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        return "never"

    agent, _ = await spawn(on_request=handler)
    ask = asyncio.create_task(agent.request("ask", {"id": 41, "method": "slow"}))
    await asyncio.wait_for(started.wait(), 5)
    assert await agent.request("send_cancel", {"requestId": 41}) == "sent"
    answer = await ask
    assert answer["error"] == {"code": REQUEST_CANCELLED, "message": "Request cancelled"}
    assert outcome == ["cancelled"]
    assert await agent.request("responses", None) == [41]


async def test_cancel_request_before_the_handler_starts_answers_32800_once(spawn: Spawn) -> None:
    ran: list[str] = []

    async def handler(method: str, params: Any) -> Any:
        ran.append(method)
        return "ran"

    agent, rec = await spawn(on_request=handler)
    # The request and its $/cancel_request arrive in one write: the handler never runs.
    answer = await agent.request("ask", {"id": 9, "method": "slow", "cancel": True})
    assert answer["error"]["code"] == REQUEST_CANCELLED
    assert ran == []
    assert await agent.request("responses", None) == [9]
    assert [m for m in rec.sent if m.get("id") == 9 and "method" not in m] == [
        {"jsonrpc": "2.0", "id": 9, "error": {"code": -32800, "message": "Request cancelled"}}
    ]
    assert rec.notifications == []  # $/cancel_request is handled, not passed on


async def test_on_send_sees_every_frame_as_one_json_rpc_line(spawn: Spawn) -> None:
    async def handler(method: str, params: Any) -> Any:
        return {"content": "x"}

    agent, rec = await spawn(on_request=handler)
    await agent.request("echo", {"é": "ü"})
    agent.notify("session/cancel", {"sessionId": "s"})
    await agent.request("ask", {"id": 3, "method": "fs/read_text_file"})
    await agent.request("echo", None)

    assert [(m.get("id"), m.get("method")) for m in rec.sent] == [
        (0, "echo"),
        (None, "session/cancel"),
        (1, "ask"),
        (3, None),  # our answer to the agent's request
        (2, "echo"),
    ]
    for msg in rec.sent:
        assert msg["jsonrpc"] == "2.0"
        if "method" in msg:
            assert isinstance(msg["method"], str)
        else:
            assert ("result" in msg) != ("error" in msg)
    assert rec.sent[3]["result"] == {"content": "x"}
    assert "params" not in rec.sent[4]  # None params are omitted, not sent as null


# ---------------------------------------------------------------- failures


async def test_agent_dying_mid_request_fails_pending_requests_with_its_stderr(
    spawn: Spawn,
) -> None:
    agent, rec = await spawn()
    waiting = asyncio.create_task(agent.request("never", {}))
    with pytest.raises(AgentGone) as caught:
        await agent.request("die", {"code": 3, "stderr": "fatal: out of tea\n"})
    gone = caught.value
    assert gone.returncode == 3
    assert "fatal: out of tea" in gone.stderr_tail
    assert "exited (exit code 3)" in str(gone)
    assert "fatal: out of tea" in str(gone)
    with pytest.raises(AgentGone):
        await waiting
    assert rec.exits == [3]
    assert not agent.alive
    assert agent.returncode == 3
    with pytest.raises(AgentGone):
        await agent.request("echo", {})
    with pytest.raises(AgentGone):
        agent.notify("session/cancel", {"sessionId": "s"})
    await agent.close()
    assert rec.exits == [3]  # on_exit ran once


async def test_missing_command_raises_agent_gone() -> None:
    with pytest.raises(AgentGone, match="command not found: 'no-such-agent-xyz'"):
        await AgentProcess.start(
            "no-such-agent-xyz",
            [],
            env=ENV,
            cwd=None,
            on_notification=lambda m, p: None,
            on_request=method_not_found,
        )


@pytest.mark.skipif(sys.platform == "win32", reason="no execute bit on Windows")
async def test_non_executable_command_raises_agent_gone(tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o644)
    with pytest.raises(AgentGone, match="not executable"):
        await AgentProcess.start(
            str(script),
            [],
            env=ENV,
            cwd=None,
            on_notification=lambda m, p: None,
            on_request=method_not_found,
        )


async def test_missing_working_directory_raises_agent_gone(tmp_path: Path) -> None:
    with pytest.raises(AgentGone, match="working directory not found"):
        await AgentProcess.start(
            sys.executable,
            [str(SCRIPTED)],
            env=ENV,
            cwd=str(tmp_path / "nowhere"),
            on_notification=lambda m, p: None,
            on_request=method_not_found,
        )


async def test_agent_exiting_at_once_raises_agent_gone_with_code_and_stderr() -> None:
    exits: list[int | None] = []
    code = "import sys; sys.stderr.write('bad config: no model\\n'); sys.exit(4)"
    with pytest.raises(AgentGone, match="exited at once") as caught:
        await AgentProcess.start(
            sys.executable,
            ["-c", code],
            env=ENV,
            cwd=None,
            on_notification=lambda m, p: None,
            on_request=method_not_found,
            on_exit=exits.append,
            startup_grace=10,  # returns as soon as the process exits
        )
    assert caught.value.returncode == 4
    assert "bad config: no model" in caught.value.stderr_tail
    assert exits == [4]


async def test_timeout_names_the_method_and_the_agent_stays_usable(spawn: Spawn) -> None:
    agent, _ = await spawn()
    with pytest.raises(TimeoutError, match="never"):
        await agent.request("never", {}, timeout=0.2)
    assert await agent.request("echo", {"ok": 1}, timeout=5) == {"ok": 1}


async def test_env_is_exactly_the_given_one_and_cwd_is_used(
    spawn: Spawn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDITOR_SECRET", "must not leak")
    agent, _ = await spawn(cwd=str(tmp_path))
    assert await agent.request("env", None) == ENV
    assert await agent.request("cwd", None) == str(tmp_path)


# ---------------------------------------------------------------- shutdown


@posix_groups
async def test_close_kills_the_process_group_including_grandchildren(spawn: Spawn) -> None:
    agent, rec = await spawn()
    grandchild = await agent.request("grandchild", None)
    assert running(grandchild)
    pending = asyncio.create_task(agent.request("never", {}))
    await asyncio.sleep(0)
    pgid = os.getpgid(agent.pid)
    assert pgid == agent.pid != os.getpgid(0)

    await agent.close(grace=1.0)

    assert agent.returncode == 0  # the peer exits by itself on stdin EOF
    assert not running(grandchild)
    with pytest.raises(AgentGone, match="was closed"):
        await pending
    assert rec.exits == [0]
    await agent.close()  # idempotent
    await wait_group_gone(pgid)
    with pytest.raises(ProcessLookupError):
        os.killpg(pgid, 0)


@posix_groups
async def test_close_kills_an_agent_that_ignores_stdin_and_sigterm(spawn: Spawn) -> None:
    ready = asyncio.Event()
    agent, rec = await spawn(STUBBORN, on_notification=lambda method, params: ready.set())
    await asyncio.wait_for(ready.wait(), 10)  # its SIGTERM handler is installed

    for _ in range(4):  # far more than a pipe holds; the agent reads none of it
        agent.notify("big/note", {"blob": "x" * 500_000})
    with pytest.raises(TimeoutError, match="session/prompt"):
        await agent.request("session/prompt", {}, timeout=0.2)

    await agent.close(grace=0.2)
    assert agent.returncode == -signal.SIGKILL
    assert rec.exits == [-signal.SIGKILL]
    await wait_group_gone(agent.pid)


# ---------------------------------------------------------------- pieces


@given(
    lines=st.lists(st.binary().map(lambda b: b.replace(b"\n", b"")), max_size=20),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=30),
    terminated=st.booleans(),
)
def test_line_buffer_returns_the_same_lines_whatever_the_chunking(
    lines: list[bytes], cuts: list[int], terminated: bool
) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    if not terminated and lines:
        stream = stream[:-1]
    points = sorted({min(c, len(stream)) for c in cuts} | {0, len(stream)})
    buffer = LineBuffer()
    out: list[bytes] = []
    for start, stop in itertools.pairwise(points):
        out.extend(buffer.feed(stream[start:stop]))
    last = buffer.flush()
    if last:
        out.append(last)
    expected = [line for line in lines]
    if not terminated and lines and not lines[-1]:
        expected.pop()  # an empty unterminated last line is no line
    assert out == expected


def test_rpc_error_json_round_trip() -> None:
    assert RpcError(-32002, "gone").to_json() == {"code": -32002, "message": "gone"}
    err = RpcError.from_json({"code": 1, "message": "m", "data": [1]})
    assert (err.code, err.message, err.data) == (1, "m", [1])
    malformed = RpcError.from_json("oops")
    assert malformed.code == -32603
    assert "oops" in malformed.message


def _same_as_json_loads(line: bytes) -> None:
    """parse_frame gives what json.loads gives (repr: key order, -0.0, 1 vs 1.0) or declines."""
    parsed = parse_frame(line)
    if parsed is NOT_PARSED:
        return
    assert repr(parsed) == repr(json.loads(line.decode())), line


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=20,
)
_FRAME = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
    b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"h\\u00e9 '
    b'\\ud83d\\ude00"}}},"x":[1.5e300,-0,-0.0,1E-7,true,null,12345678901234567890]}'
)


@given(value=_JSON_VALUES, ascii_only=st.booleans(), spaced=st.booleans())
def test_parse_frame_is_json_loads_for_any_json(value: Any, ascii_only: bool, spaced: bool) -> None:
    separators = (", ", ": ") if spaced else (",", ":")
    text = json.dumps(value, ensure_ascii=ascii_only, separators=separators)
    _same_as_json_loads(text.encode("utf-8", "surrogatepass"))


@given(at=st.integers(0, len(_FRAME) - 1), insert=st.binary(max_size=3), cut=st.integers(0, 3))
def test_parse_frame_is_json_loads_or_declines_for_a_damaged_frame(
    at: int, insert: bytes, cut: int
) -> None:
    _same_as_json_loads(_FRAME[:at] + insert + _FRAME[at + cut :])


@pytest.mark.parametrize(
    "line",
    [
        b'{"s":"\\ud800"}',  # a lone surrogate: json takes it
        b"[" * 500 + b"]" * 500,  # deeper than pydantic-core's limit
        b'{"a":1} ',
        b"\xef\xbb\xbf{}",  # a BOM
        b'"\xff"',  # not UTF-8
        b'{"a":1}x',
        b"[" + b"1" * 4301 + b"]",  # more digits than int() takes
        b'{"a":1,"b":2,"a":3}',
        b"[NaN,-Infinity,1e400]",
    ],
)
def test_parse_frame_edge_cases_match_json_loads(line: bytes) -> None:
    _same_as_json_loads(line)
    try:
        expected = repr(json.loads(line.decode()))
    except ValueError:  # UnicodeDecodeError too
        assert parse_frame(line) is NOT_PARSED
        return
    parsed = parse_frame(line)
    if parsed is not NOT_PARSED:
        assert repr(parsed) == expected
