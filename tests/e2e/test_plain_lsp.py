"""Agents through standard LSP alone: an editor that never heard of acp/* (docs/protocol.md
"Plain LSP"). It runs commands, picks code actions, answers window/showMessageRequest and
reads the answer from the transcript document the server keeps through applyEdit."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.uris import to_fs_path
from pytest_lsp import ClientServerConfig

from tests.e2e.conftest import scripted_agent, server_env
from tests.support.lsp_editor import SERVER_COMMAND, JsonObject, TestEditor, capabilities
from tests.support.plain_lsp import code_actions, command
from tests.support.review_script import turns, update


async def start_plain(tmp_path: Path, workspace: Path, options: JsonObject) -> TestEditor:
    """The real server in an editor with no acp/* front end."""
    config = ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=TestEditor, server_env=server_env(tmp_path)
    )
    editor = await config.start()
    assert isinstance(editor, TestEditor)
    caps = capabilities("visual_studio_code")
    caps.experimental = None  # no acp/* front end
    result = await editor.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            initialization_options=options,
        )
    )
    provider = result.capabilities.execute_command_provider
    assert provider is not None and "acp.ask" in provider.commands
    return editor


@pytest.fixture
async def plain(tmp_path: Path, workspace: Path) -> AsyncIterator[TestEditor]:
    options = {"agents": {"demo": {"env": {"ACP_DEMO_DELAY": "0"}}}}
    editor = await start_plain(tmp_path, workspace, options)
    yield editor
    await editor.shutdown_session()


async def transcript_until(editor: TestEditor, uri: str, needle: str) -> str:
    """The editor's copy of the transcript (applyEdit only), once it shows `needle`."""
    for _ in range(400):
        doc = editor.docs.get(uri)
        if doc is not None and needle in doc.text:
            return doc.text
        await asyncio.sleep(0.025)
    doc = editor.docs.get(uri)
    raise AssertionError(f"transcript never showed {needle!r}:\n{doc.text if doc else '(none)'}")


async def test_code_action_asks_and_the_transcript_follows(
    plain: TestEditor, workspace: Path
) -> None:
    app = workspace / "src" / "app.py"
    doc = plain.open(app)
    lines = doc.text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("def greet"))
    actions = await code_actions(
        plain,
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=doc.uri),
            range=types.Range(types.Position(start, 0), types.Position(start + 2, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        ),
    )
    assert actions is not None
    titles = [a["title"] for a in actions]
    assert any(t.startswith("Ask") and t.endswith("explain this") for t in titles), titles
    explain = next(a for a in actions if a["title"].endswith("explain this"))
    answer = await command(plain, explain["command"]["command"], *explain["command"]["arguments"])
    uri = answer["transcript"]
    # the user's question may show a moment before the status line turns to running (the
    # transcript is written at most three times a second): the answer first, then idle
    await transcript_until(plain, uri, "## Agent")
    text = await transcript_until(plain, uri, "_status: idle_")
    assert "## User" in text and "Explain this code." in text
    assert "def greet" in text  # the selection went along as context
    assert "## Agent" in text
    # the transcript was offered to the editor, and only the editor's copy was changed after
    assert any(d.uri == uri for d in plain.shown_documents)
    # follow-along: the files the agent touched were shown, without taking focus
    await plain.wait_for(
        lambda: any(d.uri.endswith("/src/app.py") for d in plain.shown_documents), timeout=5
    )
    jumps = [d for d in plain.shown_documents if d.uri.endswith("/src/app.py")]
    assert jumps and not any(d.take_focus for d in jumps), plain.shown_documents
    assert Path(to_fs_path(uri) or "").read_text(encoding="utf-8") != text
    # the permission question came as window/showMessageRequest and the edit landed unsaved
    assert any("Edit src/app.py" in m.message for m in plain.message_requests)
    assert plain.doc(app).text != app.read_text(encoding="utf-8")


async def test_marker_comment_becomes_an_action(plain: TestEditor, workspace: Path) -> None:
    path = workspace / "src" / "notes.py"
    path.write_text("x = 1\n# acp: add a docstring\n", encoding="utf-8")
    doc = plain.open(path)
    actions = await code_actions(
        plain,
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=doc.uri),
            range=types.Range(types.Position(1, 3), types.Position(1, 3)),
            context=types.CodeActionContext(diagnostics=[]),
        ),
    )
    titles = [a["title"] for a in actions]
    assert any(t.endswith(": add a docstring") for t in titles), titles


async def test_commands_without_a_session_and_bad_arguments(plain: TestEditor) -> None:
    with pytest.raises(Exception, match="no session yet"):
        await command(plain, "acp.cancel")
    with pytest.raises(Exception, match="prompt text"):
        await command(plain, "acp.prompt", 42)
    started = await command(plain, "acp.newSession")
    answer = await command(plain, "acp.prompt", "hello")
    assert answer["sessionId"] == started["sessionId"]
    await transcript_until(plain, answer["transcript"], "_status: idle_")
    assert await command(plain, "acp.toggleFollow") == {"enabled": False}
    errors = [m.message for m in plain.messages if m.type == types.MessageType.Error]
    assert any("no session yet" in m for m in errors), errors


async def test_the_agents_notices_become_messages(tmp_path: Path, workspace: Path) -> None:
    """ACP's session notices (RFD "Session Notices") in an editor that only shows messages."""
    notices = [
        update(sessionUpdate="notice", severity="warning", title="Rate limited",
               description="retrying in 5 s"),
        update(sessionUpdate="notice", severity="info", title="Context compacted"),
        update(sessionUpdate="agent_message_chunk", content={"type": "text", "text": "Done."}),
    ]  # fmt: skip
    editor = await start_plain(tmp_path, workspace, scripted_agent(turns(notices), tmp_path))
    try:
        answer = await command(editor, "acp.prompt", "hello")
        await transcript_until(editor, answer["transcript"], "_status: idle_")
        shown = [(m.type, m.message) for m in editor.messages if m.message.startswith("scripted:")]
        assert shown == [
            (types.MessageType.Warning, "scripted: Rate limited — retrying in 5 s"),
            (types.MessageType.Info, "scripted: Context compacted"),
        ]
    finally:
        await editor.shutdown_session()
