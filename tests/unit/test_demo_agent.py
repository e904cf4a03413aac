"""The demo agent through the real protocol: the SDK's client side drives `python -m
acp_lsp.demo.agent`, and every frame both ways is validated against the ACP schema."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp
import pytest
from acp import RequestError
from acp._transport import memory_transport_pair
from acp.agent.connection import AgentSideConnection
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from acp_lsp.demo.agent import DEMO_WORKSPACE, copy_demo_workspace
from acp_lsp.demo.agent.agent import DemoAgent
from acp_lsp.demo.agent.prompt import edited_text, pieces
from acp_lsp.demo.agent.session import DemoSession, SessionStore
from tests.support.schema import ConversationValidator

REPO_ROOT = Path(__file__).resolve().parents[2]
FULL_CAPS = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
pytestmark = pytest.mark.timeout(30)


class EditorClient:
    """A small ACP client: an editor with unsaved buffers, a permission answer, terminals."""

    def __init__(self, permission: str = "allow") -> None:
        self.permission = permission  # an optionId, "cancelled", or "wait" (until released)
        self.release_permission = asyncio.Event()
        self.buffers: dict[str, str] = {}
        self.permission_requests: list[dict[str, Any]] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.writes: dict[str, str] = {}
        self._procs: dict[str, asyncio.subprocess.Process] = {}
        self._output: dict[str, str] = {}

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        pass  # updates are read from the raw frames, in wire order

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append(
            {
                "toolCall": tool_call.model_dump(by_alias=True, exclude_none=True),
                "options": [o.model_dump(by_alias=True, exclude_none=True) for o in options],
            }
        )
        answer = self.permission
        if answer == "wait":
            await self.release_permission.wait()
            answer = "cancelled"
        outcome = (
            {"outcome": "cancelled"}
            if answer == "cancelled"
            else {"outcome": "selected", "optionId": answer}
        )
        return RequestPermissionResponse.model_validate({"outcome": outcome})

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **_: Any,
    ) -> ReadTextFileResponse:
        self.calls.append(("fs/read_text_file", {"path": path}))
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            return ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(
        self, session_id: str, path: str, content: str, **_: Any
    ) -> WriteTextFileResponse:
        # Like the bridge: into the editor buffer, not behind its back onto the disk.
        self.calls.append(("fs/write_text_file", {"path": path}))
        self.writes[path] = self.buffers[path] = content
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: Any = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **_: Any,
    ) -> CreateTerminalResponse:
        self.calls.append(("terminal/create", {"command": command, "args": args, "cwd": cwd}))
        proc = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, stdout=asyncio.subprocess.PIPE
        )
        terminal_id = f"term-{len(self._procs) + 1}"
        self._procs[terminal_id] = proc
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> WaitForTerminalExitResponse:
        self.calls.append(("terminal/wait_for_exit", {"terminalId": terminal_id}))
        proc = self._procs[terminal_id]
        assert proc.stdout is not None
        self._output[terminal_id] = (await proc.stdout.read()).decode()
        return WaitForTerminalExitResponse(exit_code=await proc.wait())

    async def terminal_output(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> TerminalOutputResponse:
        self.calls.append(("terminal/output", {"terminalId": terminal_id}))
        return TerminalOutputResponse.model_validate(
            {
                "output": self._output.get(terminal_id, ""),
                "truncated": False,
                "exitStatus": {"exitCode": self._procs[terminal_id].returncode},
            }
        )

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> KillTerminalResponse:
        self.calls.append(("terminal/kill", {"terminalId": terminal_id}))
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> ReleaseTerminalResponse:
        self.calls.append(("terminal/release", {"terminalId": terminal_id}))
        return ReleaseTerminalResponse()

    def methods(self) -> list[str]:
        return [method for method, _ in self.calls]


class Wire:
    """Every raw frame, in order, validated against the schema as it passes."""

    def __init__(self) -> None:
        self.frames: list[tuple[str, dict[str, Any]]] = []
        self.validator = ConversationValidator()
        self.errors: list[str] = []

    def observe(self, event: StreamEvent) -> None:
        incoming = event.direction == StreamDirection.INCOMING
        self.frames.append(("agent" if incoming else "client", event.message))
        try:
            if incoming:
                self.validator.from_agent(event.message)
            else:
                self.validator.from_client(event.message)
        except AssertionError as exc:
            self.errors.append(str(exc))

    def updates(self, since: int = 0, until: int | None = None) -> list[dict[str, Any]]:
        """The session updates among frames[since:until]."""
        return [
            msg["params"]["update"]
            for sender, msg in self.frames[since:until]
            if sender == "agent" and msg.get("method") == "session/update"
        ]

    def response_index(self, since: int) -> int:
        """Index of the first response from the agent at or after frame `since`."""
        return next(
            i
            for i, (sender, msg) in enumerate(self.frames)
            if i >= since and sender == "agent" and "method" not in msg
        )

    def mark(self) -> int:
        return len(self.frames)


class JsonRoundTrip:
    """A message transport that serialises every frame, like the stdio wire would."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def send(self, message: dict[str, Any]) -> None:
        await self._inner.send(json.loads(json.dumps(message)))

    async def receive(self) -> dict[str, Any] | None:
        message: dict[str, Any] | None = await self._inner.receive()
        return message

    async def close(self) -> None:
        await self._inner.close()


@asynccontextmanager
async def demo(
    tmp_path: Path,
    client: EditorClient,
    caps: dict[str, Any] | None = None,
    *,
    spawn: bool = False,
    state_dir: Path | None = None,
) -> AsyncIterator[tuple[Any, Wire]]:
    """A connected, initialised client. `spawn` runs `python -m acp_lsp.demo.agent` as a
    child process; otherwise the agent runs in this event loop behind a JSON transport
    (the same SDK connections on both ends, minus a second interpreter start-up)."""
    wire = Wire()
    async with contextlib.AsyncExitStack() as stack:
        if spawn:
            stderr = stack.enter_context((tmp_path / "demo-stderr.log").open("wb"))
            env = {"PYTHONPATH": str(REPO_ROOT), "ACP_DEMO_DELAY": "0"}
            if state_dir is not None:
                env["ACP_DEMO_STATE_DIR"] = str(state_dir)
            conn, _proc = await stack.enter_async_context(
                acp.spawn_agent_process(
                    client,
                    sys.executable,
                    "-m",
                    "acp_lsp.demo.agent",
                    env=env,
                    cwd=str(REPO_ROOT),
                    transport_kwargs={"stderr": stderr},
                    observers=[wire.observe],
                )
            )
        else:
            agent = DemoAgent(SessionStore(state_dir), delay=0)
            stack.push_async_callback(agent.close)
            agent_end, client_end = memory_transport_pair()
            agent_conn = AgentSideConnection(
                agent, JsonRoundTrip(agent_end), use_unstable_protocol=True
            )
            stack.push_async_callback(agent_conn.close)
            conn = ClientSideConnection(client, JsonRoundTrip(client_end), observers=[wire.observe])
            stack.push_async_callback(conn.close)
        caps = FULL_CAPS if caps is None else caps
        await conn.initialize(
            protocol_version=1, client_capabilities=ClientCapabilities.model_validate(caps)
        )
        yield conn, wire
    assert wire.errors == [], wire.errors
    assert wire.validator.checked >= 2


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return copy_demo_workspace(tmp_path / "ws")


def text_of(updates: list[dict[str, Any]], kind: str) -> str:
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == kind)


def tool_calls(updates: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Tool calls with their updates merged, by id."""
    calls: dict[str, dict[str, Any]] = {}
    for u in updates:
        if u["sessionUpdate"] in ("tool_call", "tool_call_update"):
            calls.setdefault(u["toolCallId"], {}).update(u)
    return calls


def by_kind(updates: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    matches = [c for c in tool_calls(updates).values() if c.get("kind") == kind]
    assert len(matches) == 1, f"expected one {kind} tool call, got {matches}"
    return matches[0]


async def open_session(conn: Any, wire: Wire, cwd: Path) -> Any:
    """session/new, then wait for the slash commands that follow its response."""
    start = wire.mark()
    session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
    while not any(u["sessionUpdate"] == "available_commands_update" for u in wire.updates(start)):
        await asyncio.sleep(0.01)
    return session


async def prompt(conn: Any, session_id: str, text: str) -> str:
    response = await conn.prompt(session_id=session_id, prompt=[acp.text_block(text)])
    return str(response.stop_reason)


# -- lifecycle --------------------------------------------------------------------------------


async def test_initialize_and_new_session(tmp_path: Path, workspace: Path) -> None:
    client = EditorClient()
    async with demo(tmp_path, client) as (conn, wire):
        init = next(m for s, m in wire.frames if s == "agent" and "result" in m)["result"]
        assert init["protocolVersion"] == 1
        assert init["agentInfo"]["name"] == "acp-lsp-demo"
        assert init["agentInfo"]["title"] == "acp-lsp demo agent"
        caps = init["agentCapabilities"]
        assert caps["loadSession"] is True
        assert caps["promptCapabilities"]["embeddedContext"] is True
        assert caps["promptCapabilities"]["image"] is False
        assert caps["sessionCapabilities"] == {"list": {}, "close": {}, "resume": {}}

        session = await open_session(conn, wire, workspace)
        assert session.modes is not None
        assert session.modes.current_mode_id == "code"
        assert [m.id for m in session.modes.available_modes] == ["ask", "code", "architect"]
        options = {o.id: o for o in session.config_options or []}
        assert options["verbosity"].current_value == "normal"
        assert "run_checks" not in options  # the client did not offer boolean options

        response_at = next(
            i
            for i, (s, m) in enumerate(wire.frames)
            if s == "agent" and m.get("result", {}).get("sessionId") == session.session_id
        )
        commands_at, commands = next(
            (i, m["params"]["update"])
            for i, (s, m) in enumerate(wire.frames)
            if s == "agent" and m.get("method") == "session/update"
        )
        assert commands["sessionUpdate"] == "available_commands_update"
        assert response_at < commands_at
        names = [c["name"] for c in commands["availableCommands"]]
        assert names == ["explain", "edit", "run", "plan", "help"]


async def test_full_turn_reads_the_buffer_edits_through_the_client_and_runs(
    tmp_path: Path, workspace: Path
) -> None:
    app = str(workspace / "src/app.py")
    disk_text = Path(app).read_text()
    client = EditorClient(permission="allow")
    client.buffers[app] = "# UNSAVED first line from the editor\n" + disk_text
    async with demo(tmp_path, client, spawn=True) as (conn, wire):
        session = await open_session(conn, wire, workspace)
        start = wire.mark()
        assert await prompt(conn, session.session_id, "Tidy up the app") == "end_turn"
        updates = wire.updates(start)

    kinds = [u["sessionUpdate"] for u in updates]
    assert kinds.count("agent_thought_chunk") >= 2
    assert "The user asked: Tidy up the app" in text_of(updates, "agent_thought_chunk")
    plans = [u["entries"] for u in updates if u["sessionUpdate"] == "plan"]
    assert {e["status"] for e in plans[0]} == {"pending"}
    assert {e["status"] for e in plans[-1]} == {"completed"}
    assert any(e["status"] == "in_progress" for p in plans for e in p)
    chunks = [u for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
    assert len(chunks) > 10 and all(c.get("messageId") for c in chunks)
    message = text_of(updates, "agent_message_chunk")
    assert "# UNSAVED first line from the editor" in message  # read through the client

    read = by_kind(updates, "read")
    assert read["locations"] == [{"path": app, "line": 1}]
    assert read["status"] == "completed"
    assert client.methods()[0] == "fs/read_text_file"

    [request] = client.permission_requests
    assert [(o["kind"], o["name"]) for o in request["options"]] == [
        ("allow_once", "Allow"),
        ("allow_always", "Always allow"),
        ("reject_once", "Reject"),
    ]
    assert request["toolCall"]["kind"] == "edit"
    expected = edited_text(Path(app), "# UNSAVED first line from the editor\n" + disk_text, 1)
    assert client.writes == {app: expected}
    assert Path(app).read_text() == disk_text  # the agent left the disk to the client
    edit = by_kind(updates, "edit")
    assert edit["status"] == "completed"
    assert edit["content"] == [
        {
            "type": "diff",
            "path": app,
            "oldText": "# UNSAVED first line from the editor\n" + disk_text,
            "newText": expected,
        }
    ]

    run = by_kind(updates, "execute")
    assert run["status"] == "completed"
    assert run["content"] == [{"type": "terminal", "terminalId": "term-1"}]
    assert "src/app.py" in run["rawOutput"]["output"]
    create = next(p for m, p in client.calls if m == "terminal/create")
    assert create["cwd"] == str(workspace)
    assert client.methods()[-4:] == [
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
    ]
    usage = [u for u in updates if u["sessionUpdate"] == "usage_update"]
    assert usage and usage[-1]["used"] > 0 and usage[-1]["size"] >= usage[-1]["used"]
    assert kinds[-1] == "usage_update"


async def test_rejected_edit_fails_and_writes_nothing(tmp_path: Path, workspace: Path) -> None:
    app = workspace / "src/app.py"
    before = app.read_text()
    client = EditorClient(permission="reject")
    async with demo(tmp_path, client) as (conn, wire):
        session = await open_session(conn, wire, workspace)
        assert await prompt(conn, session.session_id, "edit it") == "end_turn"
        updates = wire.updates()
    edit = by_kind(updates, "edit")
    assert edit["status"] == "failed"
    assert "rejected" in edit["content"][0]["content"]["text"]
    assert client.writes == {}
    assert app.read_text() == before


async def test_client_without_fs_or_terminal_gets_write_then_report(
    tmp_path: Path, workspace: Path
) -> None:
    app = workspace / "src/app.py"
    before = app.read_text()
    client = EditorClient(permission="allow")
    async with demo(tmp_path, client, caps={}) as (conn, wire):
        session = await open_session(conn, wire, workspace)
        assert await prompt(conn, session.session_id, "go") == "end_turn"
        updates = wire.updates()
    assert client.calls == []  # no fs, no terminal requests to a client that offers none
    assert app.read_text() == edited_text(app, before, 1)  # written to disk by the agent
    edit = by_kind(updates, "edit")
    assert edit["content"][0]["oldText"] == before
    assert edit["content"][0]["newText"] == app.read_text()
    assert not [c for c in tool_calls(updates).values() if c.get("kind") == "execute"]


async def test_allow_always_is_remembered_by_the_agent(tmp_path: Path, workspace: Path) -> None:
    client = EditorClient(permission="allow_always")
    async with demo(tmp_path, client) as (conn, wire):
        session = await open_session(conn, wire, workspace)
        await prompt(conn, session.session_id, "one")
        await prompt(conn, session.session_id, "two")
    assert len(client.permission_requests) == 1
    assert client.methods().count("fs/write_text_file") == 2


class FailingEditor(EditorClient):
    """An editor whose writes and terminals fail."""

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any) -> Any:
        raise RequestError(-32001, "Refused", {"reason": "document changed since it was read"})

    async def create_terminal(self, session_id: str, command: str, **_: Any) -> Any:
        raise RequestError.internal_error({"details": "no shell"})


async def test_client_errors_fail_the_tool_calls_not_the_turn(
    tmp_path: Path, workspace: Path
) -> None:
    client = FailingEditor()
    async with demo(tmp_path, client) as (conn, wire):
        session = await open_session(conn, wire, workspace)
        assert await prompt(conn, session.session_id, "go") == "end_turn"
        updates = wire.updates()
    edit, run = by_kind(updates, "edit"), by_kind(updates, "execute")
    assert edit["status"] == "failed" and run["status"] == "failed"
    assert "document changed since it was read" in edit["content"][0]["content"]["text"]
    assert "no shell" in run["content"][0]["content"]["text"]


async def test_missing_target_is_created(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    client = EditorClient()
    async with demo(tmp_path, client, caps={"fs": {"readTextFile": True}}) as (conn, wire):
        session = await open_session(conn, wire, empty)
        assert await prompt(conn, session.session_id, "start") == "end_turn"
        updates = wire.updates()
    assert by_kind(updates, "read")["status"] == "failed"
    edit = by_kind(updates, "edit")
    assert edit["status"] == "completed"
    assert "oldText" not in edit["content"][0]  # a new file
    assert (empty / "DEMO.md").read_text() == edited_text(empty / "DEMO.md", None, 1)


# -- cancellation -----------------------------------------------------------------------------


async def test_cancel_stops_a_slow_turn_promptly(tmp_path: Path, workspace: Path) -> None:
    client = EditorClient()
    async with demo(tmp_path, client, spawn=True) as (conn, wire):
        session = await open_session(conn, wire, workspace)
        start = wire.mark()
        turn = asyncio.create_task(prompt(conn, session.session_id, "go slow please"))
        while not wire.updates(start):
            await asyncio.sleep(0.01)
        await conn.cancel(session_id=session.session_id)
        assert await asyncio.wait_for(turn, 5) == "cancelled"
        updates = wire.updates(start)
    assert not tool_calls(updates)  # stopped before any tool ran
    assert "usage_update" not in [u["sessionUpdate"] for u in updates]
    assert client.calls == []


async def test_cancel_while_the_permission_is_pending(tmp_path: Path, workspace: Path) -> None:
    client = EditorClient(permission="wait")
    async with demo(tmp_path, client) as (conn, wire):
        session = await open_session(conn, wire, workspace)
        turn = asyncio.create_task(prompt(conn, session.session_id, "edit"))
        while not client.permission_requests:
            await asyncio.sleep(0.01)
        await conn.cancel(session_id=session.session_id)
        client.release_permission.set()  # the client answers "cancelled", as it must
        assert await asyncio.wait_for(turn, 5) == "cancelled"
    assert "fs/write_text_file" not in client.methods()
    assert by_kind(wire.updates(), "edit")["status"] == "pending"  # nothing marked after


# -- modes, config, commands ------------------------------------------------------------------


async def test_set_mode_sends_current_mode_update_and_ask_mode_changes_nothing(
    tmp_path: Path, workspace: Path
) -> None:
    client = EditorClient()
    async with demo(tmp_path, client) as (conn, wire):
        session = await open_session(conn, wire, workspace)
        start = wire.mark()
        await conn.set_session_mode(session_id=session.session_id, mode_id="ask")
        assert wire.updates(start) == [
            {"sessionUpdate": "current_mode_update", "currentModeId": "ask"}
        ]
        with pytest.raises(RequestError) as bad:
            await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
        assert bad.value.code == -32602
        start = wire.mark()
        assert await prompt(conn, session.session_id, "what is this?") == "end_turn"
        calls = tool_calls(wire.updates(start))
    assert [c["kind"] for c in calls.values()] == ["read"]
    assert client.permission_requests == [] and client.writes == {}


async def test_set_config_option(tmp_path: Path, workspace: Path) -> None:
    caps = {**FULL_CAPS, "session": {"configOptions": {"boolean": {}}}}
    client = EditorClient()
    async with demo(tmp_path, client, caps=caps) as (conn, wire):
        session = await open_session(conn, wire, workspace)
        start = wire.mark()
        result = await conn.set_config_option(
            config_id="verbosity", session_id=session.session_id, value="detailed"
        )
        [update] = wire.updates(start)
        assert update["sessionUpdate"] == "config_option_update"
        values = {o["id"]: o["currentValue"] for o in update["configOptions"]}
        assert values == {"verbosity": "detailed", "model": "demo-large", "run_checks": True}
        assert len(result.config_options) == 3
        await conn.set_config_option(
            config_id="run_checks", session_id=session.session_id, value=False
        )
        with pytest.raises(RequestError) as bad:
            await conn.set_config_option(
                config_id="verbosity", session_id=session.session_id, value="loud"
            )
        assert bad.value.code == -32602
        start = wire.mark()
        await prompt(conn, session.session_id, "go")
        updates = wire.updates(start)
    assert "Agent Client Protocol" in text_of(updates, "agent_message_chunk")  # detailed
    assert "terminal/create" not in client.methods()  # run_checks off


async def test_help_and_plan_commands(tmp_path: Path, workspace: Path) -> None:
    client = EditorClient()
    async with demo(tmp_path, client) as (conn, wire):
        session = await open_session(conn, wire, workspace)
        start = wire.mark()
        assert await prompt(conn, session.session_id, "/help") == "end_turn"
        help_text = text_of(wire.updates(start), "agent_message_chunk")
        for name in ("/explain", "/edit", "/run", "/plan", "/help"):
            assert name in help_text
        start = wire.mark()
        assert await prompt(conn, session.session_id, "/plan") == "end_turn"
        updates = wire.updates(start)
    plans = [u for u in updates if u["sessionUpdate"] == "plan"]
    assert len(plans) == 1 and {e["status"] for e in plans[0]["entries"]} == {"pending"}
    assert not tool_calls(updates)
    assert client.calls == []


async def test_embedded_context_picks_the_target(tmp_path: Path, workspace: Path) -> None:
    util = workspace / "src/util.py"
    client = EditorClient()
    async with demo(tmp_path, client) as (conn, wire):
        session = await open_session(conn, wire, workspace)
        resource = acp.resource_block(
            acp.embedded_text_resource(util.as_uri(), util.read_text(), mime_type="text/x-python")
        )
        await conn.prompt(
            session_id=session.session_id,
            prompt=[acp.text_block("/explain"), resource, acp.image_block("AAAA", "image/png")],
        )
        updates = wire.updates()
    assert by_kind(updates, "read")["locations"] == [{"path": str(util), "line": 1}]
    message = text_of(updates, "agent_message_chunk")
    assert "You attached `util.py`" in message
    assert "image" in message


# -- sessions -----------------------------------------------------------------------------------


async def test_list_load_resume_close(tmp_path: Path, workspace: Path) -> None:
    client = EditorClient()
    async with demo(tmp_path, client) as (conn, wire):
        session = await open_session(conn, wire, workspace)
        sid = session.session_id
        await prompt(conn, sid, "Explain the app")
        listed = await conn.list_sessions()
        assert [(s.session_id, s.cwd, s.title) for s in listed.sessions] == [
            (sid, str(workspace), "Explain the app")
        ]
        assert (await conn.list_sessions(cwd="/elsewhere")).sessions == []

        start = wire.mark()
        loaded = await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        assert loaded.modes is not None and loaded.modes.current_mode_id == "code"
        response_at = wire.response_index(start)
        replay = wire.updates(start, response_at)
        assert text_of(replay, "user_message_chunk") == "Explain the app"
        live = text_of(wire.updates(0, start), "agent_message_chunk")
        assert text_of(replay, "agent_message_chunk") == live
        calls = tool_calls(replay)
        assert [c["kind"] for c in calls.values()] == ["read", "edit", "execute"]
        assert all(c["status"] == "completed" for c in calls.values())
        # the released terminal is replayed as its output
        assert "src/app.py" in calls["t1-run"]["content"][0]["content"]["text"]

        while not wire.updates(response_at):  # the commands follow the load response
            await asyncio.sleep(0.01)
        start = wire.mark()
        await conn.resume_session(cwd=str(workspace), session_id=sid)
        assert wire.updates(start, wire.response_index(start)) == []  # no replay
        while not wire.updates(start):
            await asyncio.sleep(0.01)
        assert [u["sessionUpdate"] for u in wire.updates(start)] == ["available_commands_update"]

        await conn.close_session(session_id=sid)
        with pytest.raises(RequestError):
            await prompt(conn, sid, "after close")
        with pytest.raises(RequestError) as unknown:
            await conn.load_session(cwd=str(workspace), session_id="nope", mcp_servers=[])
        assert unknown.value.code == -32002


async def test_sessions_survive_a_restart_with_a_state_dir(tmp_path: Path, workspace: Path) -> None:
    state = tmp_path / "state"
    async with demo(tmp_path, EditorClient(), spawn=True, state_dir=state) as (conn, wire):
        session = await open_session(conn, wire, workspace)
        await prompt(conn, session.session_id, "/explain")
    async with demo(tmp_path, EditorClient(), spawn=True, state_dir=state) as (conn, wire):
        listed = await conn.list_sessions()
        assert [s.session_id for s in listed.sessions] == [session.session_id]
        await conn.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[])
        assert text_of(wire.updates(), "user_message_chunk") == "/explain"


async def test_bad_input_gets_errors_not_a_crash(tmp_path: Path, workspace: Path) -> None:
    async with demo(tmp_path, EditorClient()) as (conn, wire):
        with pytest.raises(RequestError) as relative:
            await conn.new_session(cwd="relative/dir", mcp_servers=[])
        assert relative.value.code == -32602
        with pytest.raises(RequestError) as unknown:
            await prompt(conn, "no-such-session", "hi")
        assert unknown.value.code == -32002
        with pytest.raises(RequestError) as ext:
            await conn.ext_method("vendor/thing", {})
        assert ext.value.code == -32601
        session = await open_session(conn, wire, workspace)
        assert await prompt(conn, session.session_id, "/nonsense") == "end_turn"


# -- pure helpers -------------------------------------------------------------------------------


def test_pieces_rejoin_exactly() -> None:
    for text in ["", "one", "  lead and trail  ", "a\n\nb c\td", "x " * 50]:
        assert "".join(pieces(text, words=3)) == text
    assert len(pieces("a b c d e f g", words=2)) == 4


def test_edited_text_inserts_a_note_after_the_first_line() -> None:
    py, md = Path("a.py"), Path("README.md")
    assert (
        edited_text(py, "x = 1\ny = 2\n", 3) == "x = 1\n# acp-lsp demo: reviewed in turn 3\ny = 2\n"
    )
    assert (
        edited_text(md, "# T\r\nbody", 1)
        == "# T\r\n<!-- acp-lsp demo: reviewed in turn 1 -->\r\nbody"
    )
    assert edited_text(py, None, 2) == "# acp-lsp demo: reviewed in turn 2\n"


def test_history_is_compacted_for_replay() -> None:
    session = DemoSession.create(Path("/w"))
    for piece in ("Hel", "lo"):
        session.record(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",
                "content": {"type": "text", "text": piece},
            }
        )
    session.record(
        {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "T", "status": "pending"}
    )
    session.record({"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed"})
    session.record({"sessionUpdate": "plan", "entries": []})
    session.record(
        {
            "sessionUpdate": "plan",
            "entries": [{"content": "x", "priority": "low", "status": "completed"}],
        }
    )
    assert session.history == [
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m",
            "content": {"type": "text", "text": "Hello"},
        },
        {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "T", "status": "completed"},
        {
            "sessionUpdate": "plan",
            "entries": [{"content": "x", "priority": "low", "status": "completed"}],
        },
    ]


def test_demo_workspace_ships_the_sample_project() -> None:
    assert (DEMO_WORKSPACE / "src/app.py").is_file()
    assert (DEMO_WORKSPACE / "src/util.py").is_file()
    assert (DEMO_WORKSPACE / "README.md").is_file()
