"""AapBackend against the spec-following AAP test server (tests/aap_server), over real HTTP.

A small fake EditorPort records what the editor would see (published updates, permission
prompts, noted paths) and serves files from a temporary workspace.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from acp_lsp.backends.aap import AapBackend
from acp_lsp.backends.aap_events import guess_kind, unresolved_tool_uses
from acp_lsp.backends.base import BackendError, PermissionAnswer
from acp_lsp.config import AgentConfig
from acp_lsp.session import Session
from tests.aap_server import AapServer

pytest_plugins = ["tests.aap_server.fixtures"]  # the aap_server fixture
pytestmark = pytest.mark.timeout(15)

JsonObject = dict[str, Any]
ALLOW = PermissionAnswer({"outcome": "selected", "optionId": "allow_once"})


def reject(reason: str | None = None) -> PermissionAnswer:
    return PermissionAnswer({"outcome": "selected", "optionId": "reject_once"}, reason)


class FakeEditor:
    """Records what reaches the editor; files live under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.published: list[JsonObject] = []
        self.prompts: list[tuple[JsonObject, list[JsonObject]]] = []
        self.answer: Callable[[JsonObject], PermissionAnswer] = lambda call: ALLOW
        self.logs: list[tuple[str, str]] = []
        self.held: list[str] = []
        self.noted: list[str] = []
        self.block_reads: asyncio.Event | None = None  # reads wait for this when set
        self.blocked = asyncio.Event()  # set while something waits on block_reads
        self.first_update = asyncio.Event()

    # -- recording -------------------------------------------------------------------------
    def publish(self, session: Session, updates: list[JsonObject]) -> None:
        self.published.extend(updates)
        self.first_update.set()

    def set_status(
        self, session: Session, status: str, stop_reason: Any = None, error: Any = None
    ) -> None:
        pass

    def log(self, level: str, message: str) -> None:
        self.logs.append((level, message))

    def flush(self, session: Session) -> None:
        pass

    def hold(self, session: Session) -> None:
        self.held.append(session.session_id)

    def turn_started(self, session: Session, work_done_token: Any) -> None:
        pass

    def turn_ended(self, session: Session) -> None:
        pass

    async def prepare_disk(self, session: Session) -> None:
        pass

    async def settle_disk(self, session: Session) -> None:
        pass

    def cancel_permissions(self, session: Session) -> None:
        pass

    async def session_closed(self, session: Session) -> None:
        pass

    def note_paths(self, session: Session, paths: Sequence[str]) -> None:
        self.noted.extend(paths)

    async def request_permission(
        self, session: Session, tool_call: JsonObject, options: list[JsonObject]
    ) -> PermissionAnswer:
        self.prompts.append((tool_call, options))
        if self.block_reads is not None:
            self.blocked.set()
            await self.block_reads.wait()
        return self.answer(tool_call)

    # -- files (the real editor side adds the sandbox, buffers and applyEdit) ---------------
    def _inside(self, path: str) -> Path:
        resolved = Path(path).resolve()
        if not resolved.is_relative_to(self.root.resolve()):
            raise BackendError(-32602, f"{path} is outside the workspace")
        return resolved

    async def read_text_file(
        self, session: Session, path: str, line: int | None, limit: int | None
    ) -> str:
        if self.block_reads is not None:
            self.blocked.set()
            await self.block_reads.wait()
        file = self._inside(path)
        if not file.is_file():
            raise BackendError(-32002, f"file not found: {path}")
        lines = file.read_text().splitlines(keepends=True)
        start = (line or 1) - 1
        return "".join(lines[start : start + limit if limit else None])

    async def write_text_file(self, session: Session, path: str, content: str) -> None:
        self._inside(path).write_text(content)

    async def create_terminal(self, *args: Any) -> str:
        raise NotImplementedError

    def terminal_output(self, session: Session, terminal_id: str) -> JsonObject:
        raise NotImplementedError

    async def wait_for_terminal_exit(self, session: Session, terminal_id: str) -> JsonObject:
        raise NotImplementedError

    async def kill_terminal(self, session: Session, terminal_id: str) -> None:
        raise NotImplementedError

    async def release_terminal(self, session: Session, terminal_id: str) -> None:
        raise NotImplementedError

    # -- views -----------------------------------------------------------------------------
    def chunks(self, kind: str = "agent_message_chunk") -> list[JsonObject]:
        return [u for u in self.published if u.get("sessionUpdate") == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u["content"]["text"] for u in self.chunks(kind))

    def tool_states(self) -> dict[str, JsonObject]:
        """The last published state of each tool call."""
        states: dict[str, JsonObject] = {}
        for update in self.published:
            if update.get("sessionUpdate") == "tool_call":
                states[update["toolCall"]["toolCallId"]] = update["toolCall"]
        return states


def content_texts(state: JsonObject) -> list[str]:
    return [c["content"]["text"] for c in state.get("content", []) if c.get("type") == "content"]


@pytest.fixture
def editor(tmp_path: Path) -> FakeEditor:
    return FakeEditor(tmp_path)


Factory = Callable[..., AapBackend]


@pytest.fixture
async def make_backend(aap_server: AapServer, editor: FakeEditor) -> AsyncIterator[Factory]:
    made: list[AapBackend] = []

    def make(name: str = "remote", **settings: Any) -> AapBackend:
        settings.setdefault("url", aap_server.url)
        settings.setdefault("agent", "coder")
        backend = AapBackend(name, AgentConfig(**settings), editor)
        made.append(backend)
        return backend

    yield make
    for backend in made:
        await backend.shutdown()


async def start(backend: AapBackend, editor: FakeEditor) -> Session:
    return await backend.new_session(str(editor.root), [])


async def prompt(backend: AapBackend, session: Session, text: str) -> str:
    session.begin_turn()  # what the hub does around backend.prompt
    session.add_user_prompt([{"type": "text", "text": text}])
    return await backend.prompt(session, [{"type": "text", "text": text}])


# -- discovery and sessions ---------------------------------------------------------------


async def test_info_shows_meta_title_once_discovered(
    make_backend: Factory, editor: FakeEditor
) -> None:
    backend = make_backend()
    before = backend.info()
    assert (before.title, before.protocol, before.running) == ("remote", "aap", False)
    await start(backend, editor)
    after = backend.info()
    assert (after.title, after.running) == ("Coder", True)
    assert make_backend(title="Mine").info().title == "Mine"


async def test_new_session_enables_server_tools_and_declares_client_tools(
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    backend = make_backend(trusted_tools=["get_weather"], options={"model": "large"})
    session = await start(backend, editor)
    [body] = aap_server.state.bodies("POST", "/sessions")
    assert body["agent"] == {
        "name": "coder",
        "tools": [
            {"name": "get_weather", "trust": True},
            {"name": "delete_records", "trust": False},
        ],
        "options": {"model": "large"},
    }
    tools = {t["name"]: t for t in body["tools"]}
    assert set(tools) == {"read_file", "write_file"}
    assert set(tools["read_file"]["parameters"]["properties"]) == {"path", "line", "limit"}
    assert tools["write_file"]["parameters"]["required"] == ["path", "content"]
    assert session.session_id in aap_server.state.sessions
    assert session.agent == "remote"


async def test_bad_option_shows_the_servers_error_text(
    make_backend: Factory, editor: FakeEditor
) -> None:
    backend = make_backend(options={"model": "huge"})
    with pytest.raises(BackendError) as err:
        await start(backend, editor)
    assert err.value.code == -32007
    assert "option 'model' must be one of" in err.value.message
    assert "HTTP 400" in err.value.message


async def test_wrong_meta_version_is_refused(
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    aap_server.state.meta_version = 2
    backend = make_backend()
    with pytest.raises(BackendError) as err:
        await start(backend, editor)
    assert err.value.code == -32005
    assert "version 2" in err.value.message and "version 3" in err.value.message
    assert backend.info().running is False
    assert aap_server.state.bodies("POST", "/sessions") == []


async def test_unknown_agent_name_lists_the_servers_agents(
    make_backend: Factory, editor: FakeEditor
) -> None:
    with pytest.raises(BackendError) as err:
        await start(make_backend(agent="nope"), editor)
    assert err.value.code == -32005
    assert "'nope'" in err.value.message and "coder, basic" in err.value.message
    assert err.value.data == {"agents": ["coder", "basic"]}


async def test_first_agent_is_used_when_none_is_named(
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    await start(make_backend(agent=None), editor)
    assert aap_server.state.bodies("POST", "/sessions")[0]["agent"]["name"] == "coder"


async def test_auth_failure_names_the_agent_not_the_key(
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    aap_server.state.api_key = "right-key-123"
    for key in (None, "wrong-key-456"):
        with pytest.raises(BackendError) as err:
            await start(make_backend("my-aap", api_key=key), editor)
        assert err.value.code == -32000
        assert "'my-aap'" in err.value.message and "401" in err.value.message
        assert "apiKey" in err.value.message
        assert "wrong-key-456" not in err.value.message + repr(err.value.data)
    session = await start(make_backend(api_key="right-key-123"), editor)
    assert aap_server.state.requests[-1].authorization == "Bearer right-key-123"
    assert session.session_id in aap_server.state.sessions


async def test_a_server_echoing_the_key_does_not_leak_it(editor: FakeEditor) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        auth = request.headers["authorization"]
        return httpx.Response(403, json={"error": f"key rejected: {auth}"})

    config = AgentConfig(url="http://aap.invalid/v1", api_key="top-secret-999")
    backend = AapBackend("echo", config, editor, transport=httpx.MockTransport(handler))
    with pytest.raises(BackendError) as err:
        await start(backend, editor)
    assert err.value.code == -32000 and "HTTP 403" in err.value.message
    assert "top-secret-999" not in err.value.message + repr(err.value.data)
    assert "key rejected: Bearer ***" in err.value.message
    await backend.shutdown()


async def test_unreachable_server_is_a_clear_error(
    make_backend: Factory, editor: FakeEditor
) -> None:
    with socket_free_port() as port:
        backend = make_backend(url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(BackendError) as err:
        await start(backend, editor)
    assert err.value.code == -32005
    assert "cannot reach" in err.value.message and "'remote'" in err.value.message


async def test_control_request_timeout_is_a_clear_error(editor: FakeEditor) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    config = AgentConfig(url="http://aap.invalid/v1", request_timeout=2.5)
    backend = AapBackend("slow", config, editor, transport=httpx.MockTransport(handler))
    with pytest.raises(BackendError) as err:
        await start(backend, editor)
    assert err.value.code == -32005
    assert "GET /meta" in err.value.message and "2.5s" in err.value.message
    await backend.shutdown()


async def test_list_sessions_follows_next_and_keeps_to_its_agent(
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    coder = make_backend()
    ids = [(await start(coder, editor)).session_id for _ in range(3)]
    await start(make_backend("other", agent="basic"), editor)
    ids += [(await start(coder, editor)).session_id for _ in range(2)]
    listed = await coder.list_sessions(None)
    assert [s["sessionId"] for s in listed] == ids
    pages = [
        r.query.get("after")
        for r in aap_server.state.requests
        if r.path == "/sessions" and r.method == "GET"
    ]
    assert pages == [None, "c2", "c4"]


async def test_delete_removes_the_session_and_a_second_delete_is_unknown(
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    backend = make_backend()
    session = await start(backend, editor)
    await backend.delete_session(session.session_id)
    assert session.session_id not in aap_server.state.sessions
    with pytest.raises(BackendError) as err:
        await backend.delete_session(session.session_id)
    assert err.value.code == -32001
    assert "Session not found" in err.value.message


async def test_close_keeps_the_server_history(
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    backend = make_backend()
    session = await start(backend, editor)
    await prompt(backend, session, "hello")
    await backend.close_session(session)
    assert aap_server.state.sessions[session.session_id].history[0]["content"] == [
        {"type": "text", "text": "hello"}
    ]
    assert [r.method for r in aap_server.state.requests].count("DELETE") == 0


# -- turns --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["delta", "message", "none"])
async def test_every_stream_mode_streams_the_answer(
    mode: str,
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    backend = make_backend(stream=mode)
    session = await start(backend, editor)
    assert await prompt(backend, session, "hello there") == "end_turn"
    assert editor.text() == "You said: hello there"
    chunks = editor.chunks()
    assert len(chunks) == (4 if mode == "delta" else 1)
    assert len({c["messageId"] for c in chunks}) == 1
    [body] = aap_server.state.turn_bodies(session.session_id)
    assert body == {
        "stream": mode,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hello there"}]}],
    }
    agent_messages = [m for m in session.snapshot()["messages"] if m["role"] == "agent"]
    assert agent_messages[0]["content"][0]["text"] == "You said: hello there"


@pytest.mark.parametrize(("agent", "mode"), [("coder", "delta"), ("basic", "none")])
async def test_the_best_offered_stream_mode_is_used(
    agent: str,
    mode: str,
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    backend = make_backend(agent=agent)
    session = await start(backend, editor)
    assert await prompt(backend, session, "hi") == "end_turn"
    assert aap_server.state.turn_bodies(session.session_id)[0]["stream"] == mode
    assert editor.text() == "You said: hi"


async def test_a_configured_mode_the_agent_lacks_falls_back_with_a_warning(
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    backend = make_backend(agent="basic", stream="delta")
    session = await start(backend, editor)
    assert await prompt(backend, session, "hi") == "end_turn"
    assert aap_server.state.turn_bodies(session.session_id)[0]["stream"] == "none"
    assert any("'delta'" in message for level, message in editor.logs if level == "warning")


@pytest.mark.parametrize("mode", ["delta", "none"])
async def test_thinking_becomes_thought_chunks(
    mode: str, make_backend: Factory, editor: FakeEditor
) -> None:
    backend = make_backend(stream=mode)
    session = await start(backend, editor)
    await prompt(backend, session, "think hard")
    assert editor.text("agent_thought_chunk") == "Let me think this through."
    assert editor.text() == "Here is my answer."
    thought_ids = {c["messageId"] for c in editor.chunks("agent_thought_chunk")}
    answer_ids = {c["messageId"] for c in editor.chunks()}
    assert len(thought_ids) == len(answer_ids) == 1 and thought_ids != answer_ids
    roles = [m["role"] for m in session.snapshot()["messages"]]
    assert roles == ["user", "thought", "agent"]


@pytest.mark.parametrize(("text", "stop"), [("refuse", "refusal"), ("overflow now", "max_tokens")])
async def test_stop_reasons_pass_through(
    text: str, stop: str, make_backend: Factory, editor: FakeEditor
) -> None:
    backend = make_backend()
    session = await start(backend, editor)
    assert await prompt(backend, session, text) == stop


@pytest.mark.parametrize("mode", ["delta", "message", "none"])
async def test_trusted_server_tool_runs_inline(
    mode: str,
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    backend = make_backend(trusted_tools=["get_weather"], stream=mode)
    session = await start(backend, editor)
    assert await prompt(backend, session, "weather please") == "end_turn"
    [state] = editor.tool_states().values()
    assert state["title"] == "Get weather"
    assert state["kind"] == "read"
    assert state["status"] == "completed"
    assert state["rawInput"] == {"city": "Paris"}
    assert state["locations"] == []  # a server tool's paths are not local
    assert content_texts(state) == ["Sunny, 21°C in Paris"]
    assert editor.prompts == []
    assert len(aap_server.state.turn_bodies(session.session_id)) == 1
    # text before and after the tool call are two messages
    timeline = session.snapshot()["timeline"]
    assert [next(iter(entry)) for entry in timeline] == [
        "message",
        "message",
        "toolCall",
        "message",
    ]
    assert editor.text() == "Let me check.Weather report: Sunny, 21°C in Paris"
    assert len({c["messageId"] for c in editor.chunks()}) == 2


@pytest.mark.parametrize("mode", ["delta", "none"])
async def test_untrusted_server_tool_granted(
    mode: str,
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    backend = make_backend(stream=mode)
    session = await start(backend, editor)
    assert await prompt(backend, session, "delete the users") == "end_turn"
    [(tool_call, options)] = editor.prompts
    assert tool_call["title"] == "Delete records" and tool_call["kind"] == "delete"
    assert tool_call["rawInput"] == {"table": "users"}
    assert [(o["optionId"], o["name"], o["kind"]) for o in options] == [
        ("allow_once", "Allow", "allow_once"),
        ("reject_once", "Reject", "reject_once"),
    ]
    _, second = aap_server.state.turn_bodies(session.session_id)
    assert second == {
        "stream": mode,
        "messages": [
            {"role": "tool_permission", "toolCallId": tool_call["toolCallId"], "granted": True}
        ],
    }
    state = editor.tool_states()[tool_call["toolCallId"]]
    assert state["status"] == "completed"
    assert content_texts(state) == ["Deleted 3 rows from users"]
    assert editor.text() == "Outcome: Deleted 3 rows from users"


async def test_untrusted_server_tool_denied_with_the_editors_reason(
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    editor.answer = lambda call: reject("too risky")
    backend = make_backend()
    session = await start(backend, editor)
    assert await prompt(backend, session, "delete the users") == "end_turn"
    second = aap_server.state.turn_bodies(session.session_id)[1]
    [(tool_call, _)] = editor.prompts
    assert second["messages"] == [
        {
            "role": "tool_permission",
            "toolCallId": tool_call["toolCallId"],
            "granted": False,
            "reason": "too risky",
        }
    ]
    state = editor.tool_states()[tool_call["toolCallId"]]
    assert state["status"] == "failed"
    assert content_texts(state) == ["Tool call denied: too risky"]
    assert editor.text() == "Outcome: Tool call denied: too risky"


async def test_a_dismissed_permission_prompt_denies(
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    editor.answer = lambda call: PermissionAnswer({"outcome": "cancelled"})
    backend = make_backend()
    session = await start(backend, editor)
    await prompt(backend, session, "delete")
    [message] = aap_server.state.turn_bodies(session.session_id)[1]["messages"]
    assert message["granted"] is False and "reason" not in message
    assert editor.text() == "Outcome: Tool call denied"


async def test_granted_tool_without_tool_result_completes_when_the_turn_ends(
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    aap_server.state.silent_grants = True  # the reference SDK's behaviour (aap.md §10.2)
    backend = make_backend()
    session = await start(backend, editor)
    assert await prompt(backend, session, "delete") == "end_turn"
    [state] = editor.tool_states().values()
    assert state["status"] == "completed"
    assert session.tool_call(state["toolCallId"])["status"] == "completed"  # type: ignore[index]


async def test_client_read_file_goes_through_the_editor(
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    (editor.root / "notes.txt").write_text("remember the milk\n")
    backend = make_backend()
    session = await start(backend, editor)
    assert await prompt(backend, session, "read my notes") == "end_turn"
    [state] = editor.tool_states().values()
    path = str(editor.root / "notes.txt")
    assert (state["title"], state["kind"], state["status"]) == ("Read file", "read", "completed")
    assert state["locations"] == [{"path": path}]
    assert editor.noted == [path]
    assert content_texts(state) == ["remember the milk\n"]
    second = aap_server.state.turn_bodies(session.session_id)[1]
    assert second["messages"] == [
        {"role": "tool", "toolCallId": state["toolCallId"], "content": "remember the milk\n"}
    ]
    statuses = [
        u["toolCall"]["status"] for u in editor.published if u.get("sessionUpdate") == "tool_call"
    ]
    assert statuses == ["pending", "in_progress", "completed"]
    assert editor.text() == "The file says: remember the milk\n"


async def test_client_write_file_writes_through_the_editor(
    make_backend: Factory, editor: FakeEditor
) -> None:
    backend = make_backend()
    session = await start(backend, editor)
    assert await prompt(backend, session, "write it down") == "end_turn"
    assert (editor.root / "out.txt").read_text() == "hello from the agent\n"
    [state] = editor.tool_states().values()
    assert (state["kind"], state["status"]) == ("edit", "completed")
    assert editor.text() == f"Wrote: Wrote {editor.root / 'out.txt'}"


async def test_a_failing_client_tool_is_reported_to_the_agent(
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    backend = make_backend()
    session = await start(backend, editor)
    assert await prompt(backend, session, "read my notes") == "end_turn"  # no notes.txt
    [state] = editor.tool_states().values()
    assert state["status"] == "failed"
    [message] = aap_server.state.turn_bodies(session.session_id)[1]["messages"]
    assert message["content"].startswith("Error: file not found")
    assert editor.text().startswith("The file says: Error: file not found")


async def test_parallel_calls_are_answered_in_one_request(
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    (editor.root / "a.txt").write_text("A")
    (editor.root / "b.txt").write_text("B")
    backend = make_backend(trusted_tools=["get_weather"])
    session = await start(backend, editor)
    assert await prompt(backend, session, "parallel work") == "end_turn"
    bodies = aap_server.state.turn_bodies(session.session_id)
    assert len(bodies) == 2
    assert bodies[1]["messages"] == [
        {"role": "tool", "toolCallId": "call_001", "content": "A"},
        {"role": "tool", "toolCallId": "call_002", "content": "B"},
        {"role": "tool_permission", "toolCallId": "call_004", "granted": True},
    ]
    assert [call["toolCallId"] for call, _ in editor.prompts] == ["call_004"]
    states = editor.tool_states()
    assert [s["status"] for s in states.values()] == ["completed"] * 4
    assert editor.text() == ("All done: Sunny, 21°C in Oslo | A | B | Deleted 3 rows from logs")


async def test_unexposed_tools_are_shown_generically(
    make_backend: Factory, editor: FakeEditor
) -> None:
    backend = make_backend()
    session = await start(backend, editor)
    assert await prompt(backend, session, "mystery") == "end_turn"
    [state] = editor.tool_states().values()
    assert (state["title"], state["kind"], state["status"]) == (
        "internal_lookup",
        "search",
        "completed",
    )
    assert content_texts(state) == ["42"]


async def test_prompt_content_is_converted_for_the_agent(
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    blocks: list[JsonObject] = [
        {"type": "text", "text": "look"},
        {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
        {"type": "resource", "resource": {"uri": "file:///w/a.py", "text": "x = 1"}},
        {"type": "resource_link", "uri": "file:///w/b.py", "name": "b.py"},
    ]
    for agent in ("coder", "basic"):
        backend = make_backend(agent=agent)
        session = await start(backend, editor)
        await backend.prompt(session, blocks)
        content = aap_server.state.turn_bodies(session.session_id)[0]["messages"][0]["content"]
        image = (
            {"type": "image", "url": "data:image/png;base64,iVBORw0KGgo="}
            if agent == "coder"  # only coder declares image.data
            else {"type": "text", "text": "[image omitted: the agent does not accept this image]"}
        )
        assert content == [
            {"type": "text", "text": "look"},
            image,
            {"type": "text", "text": "Contents of file:///w/a.py:\n```\nx = 1\n```"},
            {"type": "text", "text": "[b.py](file:///w/b.py)"},
        ]


# -- failures, cancel ---------------------------------------------------------------------


async def test_error_stop_fails_the_turn_and_the_session_stays_usable(
    make_backend: Factory, editor: FakeEditor
) -> None:
    backend = make_backend()
    session = await start(backend, editor)
    with pytest.raises(BackendError) as err:
        await prompt(backend, session, "fail")
    assert err.value.code == -32007 and "'remote'" in err.value.message
    assert err.value.data == {"stopReason": "error"}
    assert await prompt(backend, session, "hello") == "end_turn"
    assert editor.text() == "You said: hello"


@pytest.mark.parametrize("mode", ["delta", "message", "none"])
async def test_a_cut_stream_is_a_clear_error_and_the_next_prompt_works(
    mode: str, make_backend: Factory, editor: FakeEditor
) -> None:
    backend = make_backend(stream=mode)
    session = await start(backend, editor)
    with pytest.raises(BackendError) as err:
        await prompt(backend, session, "cut it")
    assert err.value.code == -32007
    assert "'remote'" in err.value.message
    expected = "invalid JSON" if mode == "none" else "ended before turn_stop"
    assert expected in err.value.message
    if mode != "none":
        assert editor.text() == "Partial answer that never"
    editor.published.clear()
    assert await prompt(backend, session, "hello") == "end_turn"
    assert editor.text() == "You said: hello"


async def test_cancel_mid_stream_returns_cancelled_and_the_session_stays_usable(
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    backend = make_backend()
    session = await start(backend, editor)
    turn = asyncio.create_task(prompt(backend, session, "hang on"))
    await editor.first_update.wait()  # "Working on it" arrived; the server now hangs
    await backend.cancel(session)
    assert await turn == "cancelled"
    editor.published.clear()
    assert await prompt(backend, session, "hello") == "end_turn"
    assert editor.text() == "You said: hello"
    # nothing was left open, so the next turn carries only the prompt
    assert aap_server.state.turn_bodies(session.session_id)[1]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hello"}]}
    ]
    assert aap_server.state.bodies("GET", f"/sessions/{session.session_id}/history")


@pytest.mark.parametrize(
    ("text", "leftover"),
    [
        (
            "read my notes",
            {
                "role": "tool",
                "toolCallId": "call_001",
                "content": "Tool call cancelled by the user",
            },
        ),
        (
            "delete",
            {
                "role": "tool_permission",
                "toolCallId": "call_001",
                "granted": False,
                "reason": "cancelled by the user",
            },
        ),
    ],
)
async def test_calls_left_open_by_a_cancel_are_answered_before_the_next_prompt(
    text: str,
    leftover: JsonObject,
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    editor.block_reads = asyncio.Event()  # the tool (or the prompt) waits: cancel then
    (editor.root / "notes.txt").write_text("x")
    backend = make_backend()
    session = await start(backend, editor)
    turn = asyncio.create_task(prompt(backend, session, text))
    await editor.blocked.wait()
    await backend.cancel(session)
    assert await turn == "cancelled"
    editor.block_reads = None
    assert await prompt(backend, session, "hello") == "end_turn"
    messages = aap_server.state.turn_bodies(session.session_id)[1]["messages"]
    assert messages == [leftover, {"role": "user", "content": [{"type": "text", "text": "hello"}]}]


# -- load / resume ------------------------------------------------------------------------


async def test_load_rebuilds_the_session_from_full_history(
    make_backend: Factory, editor: FakeEditor
) -> None:
    first = make_backend(trusted_tools=["get_weather"])
    session = await start(first, editor)
    await prompt(first, session, "think")
    await prompt(first, session, "weather")
    editor.published.clear()

    loaded = await make_backend("again").load_session(session.session_id, str(editor.root))
    assert editor.held == [session.session_id]
    snap = loaded.snapshot()
    assert (snap["sessionId"], snap["agent"]) == (session.session_id, "again")
    assert [(m["role"], m["content"][0]["text"]) for m in snap["messages"]] == [
        ("user", "think"),
        ("thought", "Let me think this through."),  # thinking is kept in full history
        ("agent", "Here is my answer."),
        ("user", "weather"),
        ("agent", "Let me check."),
        ("agent", "Weather report: Sunny, 21°C in Paris"),
    ]
    [call] = snap["toolCalls"]
    assert (call["title"], call["status"]) == ("Get weather", "completed")
    assert content_texts(call) == ["Sunny, 21°C in Paris"]


async def _open_read_turn(server: AapServer, agent: str, mode: str) -> str:
    """Another client starts a session that stops with an unanswered read_file call."""
    from acp_lsp.backends.aap_tools import CLIENT_TOOLS

    async with httpx.AsyncClient(base_url=server.url + "/") as client:
        created = await client.post(
            "sessions", json={"agent": {"name": agent}, "tools": list(CLIENT_TOOLS)}
        )
        sid: str = created.json()["sessionId"]
        turn = await client.post(
            f"sessions/{sid}/turns",
            json={"stream": mode, "messages": [{"role": "user", "content": "read the notes"}]},
        )
        assert '"tool_use"' in turn.text
    return sid


@pytest.mark.parametrize(
    ("agent", "mode", "history"), [("coder", "delta", "full"), ("basic", "none", "compacted")]
)
async def test_load_resolves_the_unanswered_tool_call(
    agent: str,
    mode: str,
    history: str,
    aap_server: AapServer,
    make_backend: Factory,
    editor: FakeEditor,
) -> None:
    (editor.root / "notes.txt").write_text("from disk")
    sid = await _open_read_turn(aap_server, agent, mode)
    sent_before = len(aap_server.state.turn_bodies(sid))

    session = await make_backend(agent=agent).load_session(sid, str(editor.root))
    history_queries = [
        r.query["type"] for r in aap_server.state.requests if r.path.endswith("/history")
    ]
    assert history_queries == [history]
    bodies = aap_server.state.turn_bodies(sid)[sent_before:]
    assert bodies == [
        {
            "stream": mode,
            "messages": [{"role": "tool", "toolCallId": "call_001", "content": "from disk"}],
        }
    ]
    snap = session.snapshot()
    [call] = snap["toolCalls"]
    assert (call["status"], call["title"]) == ("completed", "Read file")
    assert snap["messages"][-1] == {
        "messageId": snap["messages"][-1]["messageId"],
        "role": "agent",
        "content": [{"type": "text", "text": "The file says: from disk"}],
    }


async def test_load_of_an_unknown_session_is_unknown_session(
    make_backend: Factory, editor: FakeEditor
) -> None:
    with pytest.raises(BackendError) as err:
        await make_backend().load_session("sess_nope", str(editor.root))
    assert err.value.code == -32001 and "sess_nope" in err.value.message


# -- pure helpers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("read_file", "read"),
        ("write_file", "edit"),
        ("web_search", "search"),
        ("fetch_url", "fetch"),
        ("run_shell", "execute"),
        ("delete_records", "delete"),
        ("get_weather", "read"),
        ("summarise", "other"),
    ],
)
def test_tool_kind_is_guessed_from_the_name(name: str, kind: str) -> None:
    assert guess_kind(name) == kind


class socket_free_port:
    """A port nothing listens on (bound, then released)."""

    def __enter__(self) -> int:
        import socket

        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        port: int = self._sock.getsockname()[1]
        return port

    def __exit__(self, *exc: object) -> None:
        self._sock.close()


def _use(call_id: str) -> JsonObject:
    return {"type": "tool_use", "toolCallId": call_id, "name": "t", "input": {}}


@pytest.mark.parametrize(
    ("history", "open_ids"),
    [
        ([], []),
        ([{"role": "user", "content": "x"}, {"role": "assistant", "content": "plain"}], []),
        ([{"role": "assistant", "content": [_use("a"), _use("b")]}], ["a", "b"]),
        (
            [
                {"role": "assistant", "content": [_use("a"), _use("b")]},
                {"role": "tool", "toolCallId": "a", "content": "done"},
            ],
            ["b"],
        ),
        (  # only the last assistant message counts
            [
                {"role": "assistant", "content": [_use("old")]},
                {"role": "assistant", "content": [_use("new")]},
            ],
            ["new"],
        ),
        (  # a prompt after them: abandoned
            [{"role": "assistant", "content": [_use("a")]}, {"role": "user", "content": "hi"}],
            [],
        ),
    ],
)
def test_unresolved_tool_uses_of_the_last_assistant_message(
    history: list[JsonObject], open_ids: list[str]
) -> None:
    assert [b["toolCallId"] for b in unresolved_tool_uses(history)] == open_ids
