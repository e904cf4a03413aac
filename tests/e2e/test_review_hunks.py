"""Review by hunk end to end (DESIGN §2 "Review by hunk"): ``review.files[].hunks`` and
``acp/reviewEdit {…, hunk}`` through the real server, for each route a change takes: the
agent's own write reported with a diff (Claude Code's Write), the client's
``fs/write_text_file`` (Qwen Code, the demo agent), and a shell command that reports nothing
(Codex, Claude's Bash), seen on disk by the bridge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig

from acp_lsp import protocol as p
from tests.e2e.conftest import ScriptedLaunch as Launch
from tests.e2e.conftest import scripted_agent, server_env, start_editor
from tests.support.lsp_editor import SERVER_COMMAND, TestEditor, capabilities
from tests.support.plain_lsp import code_actions, command
from tests.support.review_script import (
    claude_write,
    read,
    review,
    run_turn,
    shown_review,
    turns,
    update,
    write_then_report,
)

pytestmark = pytest.mark.timeout(60)

JsonObject = dict[str, Any]
APP = "src/app.py"


def two_places(text: str) -> str:
    """The demo app with its greeting (line 9) and its exit (line 20) changed: two hunks."""
    changed = text.replace("Hello, ", "Howdy, ").replace("raise SystemExit", "sys.exit")
    assert changed.count("\n") == text.count("\n") and changed != text
    return changed


def fs_write(call_id: str, rel: str, content: str) -> list[JsonObject]:
    """An edit through the client: a tool call, fs/write_text_file, the diff reported."""
    return [
        update(
            sessionUpdate="tool_call",
            toolCallId=call_id,
            title="WriteFile " + rel,
            kind="edit",
            status="in_progress",
            locations=[{"path": "{cwd}/" + rel}],
        ),
        {
            "request": "fs/write_text_file",
            "params": {"sessionId": "{sessionId}", "path": "{cwd}/" + rel, "content": content},
        },
        update(sessionUpdate="tool_call_update", toolCallId=call_id, status="completed"),
    ]


def shell(call_id: str, rel: str, content: str) -> list[JsonObject]:
    """A command that rewrites the file on disk and reports only its title."""
    return [
        update(
            sessionUpdate="tool_call",
            toolCallId=call_id,
            title=f"sed -i ... {rel}",
            kind="execute",
            status="in_progress",
        ),
        {"write_file": {"path": rel, "content": content}},
        update(sessionUpdate="tool_call_update", toolCallId=call_id, status="completed"),
    ]


ROUTES = {
    "agent-write": lambda rel, old, new: write_then_report("c1", rel, old, new),
    "claude-write": lambda rel, old, new: claude_write("c1", rel, new),
    "client-fs": lambda rel, old, new: fs_write("c1", rel, new),
    "shell": lambda rel, old, new: shell("c1", rel, new),
}


async def hunks_shown(editor: TestEditor, sid: str, count: int) -> list[JsonObject]:
    await editor.wait_for(
        lambda: (
            len(
                (editor.sessions[sid].tool_calls["c1"].get("review") or {"files": [{}]})["files"][
                    0
                ].get("hunks", [])
            )
            == count
        )
    )
    [file] = (await shown_review(editor, sid, "c1"))["files"]
    hunks: list[JsonObject] = file["hunks"]
    return hunks


@pytest.mark.parametrize("route", sorted(ROUTES))
async def test_two_hunks_one_kept_one_undone(launch: Launch, workspace: Path, route: str) -> None:
    original = read(workspace, APP)
    changed = two_places(original)
    editor = await launch(turns(ROUTES[route](APP, original, changed)))
    sid = await run_turn(editor)
    assert read(workspace, APP) == changed

    hunks = await hunks_shown(editor, sid, 2)
    assert [
        (h["index"], h["oldStart"], h["oldLines"], h["newStart"], h["newLines"]) for h in hunks
    ] == [
        (0, 9, 1, 9, 1),
        (1, 20, 1, 20, 1),
    ]
    assert {h["status"] for h in hunks} == {"pending"}

    path = str(workspace / APP)
    result = await review(editor, sid, "reject", toolCallId="c1", path=path, hunk=1)
    assert result == {
        "applied": True,
        "files": [{"path": path, "hunk": 1, "status": "pending", "hunkStatus": "rejected"}],
    }
    # the greeting stays the agent's, the exit is the original's again
    assert read(workspace, APP) == original.replace("Hello, ", "Howdy, ")
    hunks = await hunks_shown(editor, sid, 2)
    await editor.wait_for(
        lambda: (
            [
                h["status"]
                for h in editor.sessions[sid].tool_calls["c1"]["review"]["files"][0]["hunks"]
            ]
            == ["pending", "rejected"]
        )
    )

    result = await review(editor, sid, "accept", toolCallId="c1", path=path, hunk=0)
    assert result["applied"] is True and result["files"][0]["status"] == "mixed"
    await editor.wait_for(
        lambda: editor.sessions[sid].tool_calls["c1"]["review"]["status"] == "mixed"
    )
    assert read(workspace, APP) == original.replace("Hello, ", "Howdy, ")

    # decided hunks stay decided
    again = await review(editor, sid, "reject", toolCallId="c1", path=path, hunk=0)
    assert again["applied"] is False and again["files"][0]["message"] == "already accepted"


async def test_the_users_edit_of_the_same_lines_refuses_and_elsewhere_is_kept(
    launch: Launch, workspace: Path
) -> None:
    original = read(workspace, APP)
    changed = two_places(original)
    editor = await launch(turns(shell("c1", APP, changed)))
    sid = await run_turn(editor)
    await hunks_shown(editor, sid, 2)
    path = str(workspace / APP)
    # the user changes the greeting line again and adds a line at the end, then saves
    mine = changed.replace("Howdy, ", "Good day, ") + "# mine\n"
    (workspace / APP).write_text(mine, encoding="utf-8")

    refused = await review(editor, sid, "reject", toolCallId="c1", path=path, hunk=0)
    assert refused["applied"] is False
    [file] = refused["files"]
    assert file["hunkStatus"] == "failed"
    assert "src/app.py changed at line 9 since the agent's edit" in file["message"]
    assert read(workspace, APP) == mine  # left as it was

    kept = await review(editor, sid, "reject", toolCallId="c1", path=path, hunk=1)
    assert kept["applied"] is True
    assert read(workspace, APP) == mine.replace("sys.exit", "raise SystemExit")


async def test_the_whole_file_after_a_hunk_undoes_only_the_rest(
    launch: Launch, workspace: Path
) -> None:
    original = read(workspace, APP)
    changed = two_places(original)
    editor = await launch(turns(write_then_report("c1", APP, original, changed)))
    sid = await run_turn(editor)
    await hunks_shown(editor, sid, 2)
    path = str(workspace / APP)
    await review(editor, sid, "accept", toolCallId="c1", path=path, hunk=0)

    result = await review(editor, sid, "reject", toolCallId="c1", path=path)
    assert result == {"applied": True, "files": [{"path": path, "status": "mixed"}]}
    assert read(workspace, APP) == original.replace("Hello, ", "Howdy, ")
    hunks = await hunks_shown(editor, sid, 2)
    assert [h["status"] for h in hunks] == ["accepted", "rejected"]


async def test_an_open_buffer_follows_a_hunk_undo_and_keeps_unsaved_text(
    launch: Launch, workspace: Path
) -> None:
    original = read(workspace, APP)
    changed = two_places(original)
    editor = await launch(turns(shell("c1", APP, changed)))
    app = workspace / APP
    editor.open(app)
    editor.type_text(app, original + "# unsaved\n")
    sid = await run_turn(editor)
    await editor.wait_for(lambda: editor.doc(app).text == changed + "# unsaved\n")
    await hunks_shown(editor, sid, 2)

    result = await review(editor, sid, "reject", toolCallId="c1", path=str(app), hunk=0)
    assert result["applied"] is True
    assert read(workspace, APP) == changed.replace("Howdy, ", "Hello, ")
    await editor.wait_for(
        lambda: editor.doc(app).text == changed.replace("Howdy, ", "Hello, ") + "# unsaved\n"
    )


async def test_bad_hunk_targets_are_invalid_params(launch: Launch, workspace: Path) -> None:
    original = read(workspace, APP)
    changed = two_places(original)
    editor = await launch(
        turns(
            [
                *write_then_report("c1", APP, original, changed),
                *claude_write("c2", "src/new.py", "print('new')\n"),
            ]
        )
    )
    sid = await run_turn(editor)
    await hunks_shown(editor, sid, 2)
    path = str(workspace / APP)

    async def refused(**target: Any) -> str:
        with pytest.raises(JsonRpcException) as info:
            await review(editor, sid, "reject", **target)
        assert info.value.code == p.INVALID_PARAMS
        return info.value.message

    assert "name the tool call (toolCallId) and the file (path)" in await refused(hunk=0)
    assert "has 2 hunks, numbered from 0; there is no hunk 2" in await refused(
        toolCallId="c1", path=path, hunk=2
    )
    assert "there is no hunk -1" in await refused(toolCallId="c1", path=path, hunk=-1)
    created = str(workspace / "src/new.py")
    assert "has no hunks (a created or deleted file" in await refused(
        toolCallId="c2", path=created, hunk=0
    )
    # nothing was touched, and the server goes on serving
    assert read(workspace, APP) == changed
    assert (await review(editor, sid, "reject", toolCallId="c1", path=path, hunk=0))["applied"]


# -- plain LSP editors: code actions at a changed line ---------------------------------------------
async def test_plain_editor_keeps_and_rejects_by_code_action(
    tmp_path: Path, workspace: Path
) -> None:
    original = read(workspace, APP)
    changed = two_places(original)
    options = scripted_agent(turns(shell("c1", APP, changed)), tmp_path)
    editor = await start_plain(tmp_path, workspace, options)
    try:
        sid = await run_turn(editor)
        await hunks_shown(editor, sid, 2)
        app = workspace / APP
        doc = editor.open(app)
        # nothing to review on an unchanged line
        assert not [a for a in await actions_at(editor, doc.uri, 0) if "change" in a["title"]]
        titles = [a["title"] for a in await actions_at(editor, doc.uri, 19)]
        assert titles[:4] == [
            "Keep this change (line 20)",
            "Reject this change (line 20)",
            "Keep every change in this file",
            "Reject every change in this file",
        ]
        reject = next(
            a for a in await actions_at(editor, doc.uri, 19) if "Reject this" in a["title"]
        )
        result = await command(
            editor, reject["command"]["command"], *reject["command"]["arguments"]
        )
        assert result["applied"] is True
        assert read(workspace, APP) == original.replace("Hello, ", "Howdy, ")
        # the other hunk is still offered at its line, the rejected one no more
        await editor.wait_for(lambda: editor.doc(app).text == read(workspace, APP))
        assert [a["title"] for a in await actions_at(editor, doc.uri, 19)][:1] != titles[:1]
        keep_all = next(
            a
            for a in await actions_at(editor, doc.uri, 8)
            if a["title"] == "Keep every change in this file"
        )
        await command(editor, keep_all["command"]["command"], *keep_all["command"]["arguments"])
        review = await shown_review(editor, sid, "c1")
        assert review["status"] == "mixed"
        assert [h["status"] for h in review["files"][0]["hunks"]] == ["accepted", "rejected"]
    finally:
        await editor.shutdown_session()


async def start_plain(tmp_path: Path, workspace: Path, options: JsonObject) -> TestEditor:
    config = ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=TestEditor, server_env=server_env(tmp_path)
    )
    editor = await config.start()
    assert isinstance(editor, TestEditor)
    caps = capabilities("visual_studio_code")
    caps.experimental = None  # no acp/* front end: review comes as code actions
    await editor.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            initialization_options=options,
        )
    )
    return editor


async def actions_at(editor: TestEditor, uri: str, line: int) -> list[JsonObject]:
    return await code_actions(
        editor,
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(line, 0), types.Position(line, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        ),
    )


# -- the agent hears the user's no ----------------------------------------------------------------
def echo() -> list[JsonObject]:
    """A turn that answers with the prompt's text as the agent received it."""
    return [
        update(sessionUpdate="agent_message_chunk", content={"type": "text", "text": "{prompt}"})
    ]


@pytest.mark.parametrize("tell", [True, False])
async def test_the_next_prompt_names_what_the_user_rejected(
    tmp_path: Path, workspace: Path, tell: bool
) -> None:
    original = read(workspace, APP)
    changed = two_places(original)
    options = scripted_agent(turns(shell("c1", APP, changed), echo(), echo()), tmp_path)
    if not tell:
        options["review"] = {"tellAgent": False}
    editor = await start_editor(tmp_path, workspace, "visual_studio_code", options)
    try:
        sid = await run_turn(editor)
        await hunks_shown(editor, sid, 2)
        path = str(workspace / APP)
        await review(editor, sid, "reject", toolCallId="c1", path=path, hunk=1)
        await review(editor, sid, "accept", toolCallId="c1", path=path, hunk=0)

        await run_turn(editor, "Go on.", sid)
        heard = editor.sessions[sid].messages[-1]["content"][0]["text"]
        if tell:
            assert heard.startswith("[The user reviewed your earlier changes and rejected")
            assert f"{path} (line 20)" in heard and "Howdy" not in heard
            assert heard.endswith("Go on.")
        else:
            assert heard == "Go on."
        # said once: the prompt after that carries only itself
        await run_turn(editor, "And now?", sid)
        assert editor.sessions[sid].messages[-1]["content"][0]["text"] == "And now?"
    finally:
        await editor.shutdown_session()
