"""Agent file access end to end (DESIGN §3): document sync, sandbox, reads and writes.

A scripted ACP agent (tests/agents/scripted_acp.py) does exactly the fs requests a test
needs; what it received back is read from its log. Where the user must act at a precise
moment of the agent's turn (type into the buffer between the agent's read and its write),
the agent asks a permission first and the test acts inside the editor's permission answer:
the editor's didChange reaches the server before the answer, so the order is exact.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace import PositionCodec, TextDocument

from acp_lsp import protocol as p
from tests.agents import read_log, scripted_command
from tests.e2e.conftest import start_editor, with_fast_demo
from tests.support.lsp_editor import TestEditor

pytestmark = pytest.mark.timeout(90)

PROFILES = ["visual_studio_code", "neovim"]
JsonObject = dict[str, Any]
Step = dict[str, Any]

NOTES = "".join(f"line {i}\n" for i in range(1, 11))


# -- helpers (also used by test_follow.py and test_terminals.py) --------------------------
def agent_config(script: JsonObject, tmp_path: Path, log: Path) -> JsonObject:
    argv = scripted_command(script, tmp_dir=tmp_path)
    return {"command": argv[0], "args": argv[1:], "env": {"SCRIPTED_ACP_LOG": str(log)}}


async def scripted_editor(
    tmp_path: Path,
    workspace: Path,
    profile: str,
    prompt_steps: list[Step],
    *,
    rich: bool = True,
    options: JsonObject | None = None,
    script: JsonObject | None = None,
) -> tuple[TestEditor, Path]:
    """An editor on a server whose default agent runs ``prompt_steps`` for every prompt."""
    log = tmp_path / "agent.log"
    full = {
        **(script or {}),
        "on": {"session/prompt": prompt_steps, **(script or {}).get("on", {})},
    }
    opts = {**(options or {}), "agents": {"scripted": agent_config(full, tmp_path, log)}}
    opts["defaultAgent"] = "scripted"
    editor = await start_editor(tmp_path, workspace, profile, with_fast_demo(opts), rich=rich)
    return editor, log


def answers(log: Path) -> dict[str, JsonObject]:
    """The responses the agent received to its own requests, by request id."""
    return {
        str(m["id"]): m
        for m in read_log(log)
        if "method" not in m and "id" in m and ("result" in m or "error" in m)
    }


def req(method: str, rid: str, **params: Any) -> Step:
    return {"request": method, "id": rid, "params": {"sessionId": "{sessionId}", **params}}


def read(rid: str, path: str, **extra: Any) -> Step:
    return req("fs/read_text_file", rid, path=path, **extra)


def write(rid: str, path: str, content: str) -> Step:
    return req("fs/write_text_file", rid, path=path, content=content)


def gate(rid: str) -> Step:
    """A permission request: the test acts inside the editor's answer to it."""
    return req(
        "session/request_permission",
        rid,
        toolCall={"toolCallId": rid, "title": f"gate {rid}"},
        options=[{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
    )


def allow_after(action: Callable[[], None]) -> Callable[[JsonObject], JsonObject]:
    def policy(params: JsonObject) -> JsonObject:
        action()
        return {"outcome": {"outcome": "selected", "optionId": "ok"}}

    return policy


async def finish(editor: TestEditor) -> None:
    await editor.shutdown_session()
    assert not editor.schema_errors, editor.schema_errors


def units(text: str, encoding: str) -> int:
    """Length of ``text`` in the code units of an LSP position encoding (independent of
    acp_lsp.text, so the test does not check the server against itself)."""
    if "8" in encoding:
        return len(text.encode("utf-8"))
    if "32" in encoding:
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def type_at(editor: TestEditor, path: Path, line: int, column: int, insert: str) -> None:
    """The user inserts ``insert`` at (line, code point column): an incremental didChange."""
    doc = editor.doc(path)
    lines = doc.text.split("\n")
    prefix = lines[line][:column]
    pos = types.Position(line=line, character=units(prefix, editor.encoding))
    lines[line] = prefix + insert + lines[line][column:]
    doc.text = "\n".join(lines)
    doc.version += 1
    editor.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=pos, end=pos), text=insert
                )
            ],
        )
    )


def replace_line(text: str, index: int, new: str) -> str:
    lines = text.splitlines(keepends=True)
    ending = lines[index][len(lines[index].rstrip("\r\n")) :]
    lines[index] = new + ending
    return "".join(lines)


def edit_uris(params: types.ApplyWorkspaceEditParams) -> list[str]:
    edit = params.edit
    uris = list(edit.changes or {})
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            uris.append(change.text_document.uri)
    return uris


def text_edits(params: types.ApplyWorkspaceEditParams) -> list[types.TextEdit]:
    edit = params.edit
    out: list[Any] = []
    for edits in (edit.changes or {}).values():
        out.extend(edits)
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            out.extend(change.edits)
    return out


def apply_independently(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    """Apply LSP TextEdits with pygls's own incremental-sync code (not acp_lsp's)."""
    starts = [(e.range.start.line, e.range.start.character) for e in edits]
    ends = [(e.range.end.line, e.range.end.character) for e in edits]
    order = sorted(range(len(edits)), key=lambda i: starts[i])
    for a, b in itertools.pairwise(order):
        assert ends[a] <= starts[b], "edits overlap"
    doc = TextDocument("file:///x", text, position_codec=PositionCodec(encoding))
    for i in reversed(order):
        doc.apply_change(
            types.TextDocumentContentChangePartial(range=edits[i].range, text=edits[i].new_text)
        )
    return doc.source


# -- document sync and reads ---------------------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
async def test_reads_see_the_unsaved_buffer_then_the_disk(
    tmp_path: Path, workspace: Path, profile: str
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("on disk\n", encoding="utf-8")
    path = str(notes)
    steps = [
        read("whole", path),
        read("slice", path, line=2, limit=2),
        read("from3", path, line=3),
        read("past", path, line=40),
        gate("close"),
        read("disk", path),
        read("missing", str(workspace / "nope.txt")),
        read("dir", str(workspace / "src")),
    ]
    editor, log = await scripted_editor(tmp_path, workspace, profile, steps)
    editor.open(notes, "α😀β\nsecond\nthird\nfourth\n")
    # incremental sync in the negotiated encoding: after the astral character, then line 3
    type_at(editor, notes, 0, 2, "[x]")
    type_at(editor, notes, 2, 5, "!")
    unsaved = "α😀[x]β\nsecond\nthird!\nfourth\n"
    assert editor.doc(notes).text == unsaved

    def close() -> None:
        editor.text_document_did_close(
            types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=editor.doc(notes).uri)
            )
        )

    editor.permission_policy = allow_after(close)
    sid = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(sid, "read"))["stopReason"] == "end_turn"
    got = answers(log)
    assert got["whole"]["result"] == {"content": unsaved}
    assert got["slice"]["result"] == {"content": "second\nthird!\n"}
    assert got["from3"]["result"] == {"content": "third!\nfourth\n"}
    assert got["past"]["result"] == {"content": ""}
    assert got["disk"]["result"] == {"content": "on disk\n"}  # closed: the disk again
    assert got["missing"]["error"]["code"] == p.RESOURCE_NOT_FOUND
    assert "nope.txt" in got["missing"]["error"]["message"]
    assert got["dir"]["error"]["code"] == p.INVALID_PARAMS
    assert notes.read_text(encoding="utf-8") == "on disk\n"  # a read never writes
    await finish(editor)


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_workspace_opened_through_a_symlink(
    tmp_path: Path, workspace: Path, profile: str
) -> None:
    """The editor knows the file by a linked path, the agent by either: one document."""
    link = tmp_path / "link"
    link.symlink_to(workspace, target_is_directory=True)
    (workspace / "notes.txt").write_text(NOTES, encoding="utf-8")
    unsaved = replace_line(NOTES, 0, "unsaved")
    written = replace_line(unsaved, 5, "by the agent")
    steps = [
        read("linked", "{cwd}/notes.txt"),
        read("real", str(workspace / "notes.txt")),
        write("w", "{cwd}/notes.txt", written),
    ]
    editor, log = await scripted_editor(tmp_path, link, profile, steps)
    editor.open(link / "notes.txt", unsaved)
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "edit")
    got = answers(log)
    assert got["linked"]["result"] == {"content": unsaved}
    assert got["real"]["result"] == {"content": unsaved}
    assert got["w"]["result"] == {}
    linked_uri = from_fs_path(str(link / "notes.txt"))
    assert [edit_uris(a) for a in editor.applied_edits] == [[linked_uri]]
    assert editor.doc(link / "notes.txt").text == written
    assert editor.saved == [linked_uri]
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == written
    await finish(editor)


# -- the sandbox -----------------------------------------------------------------------------
async def test_sandbox_refuses_every_access_outside_the_workspace(
    tmp_path: Path, workspace: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n", encoding="utf-8")
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "shared.txt").write_text("shared\n", encoding="utf-8")
    (workspace / "escape").symlink_to(outside, target_is_directory=True)
    (workspace / "inner").symlink_to(workspace / "src", target_is_directory=True)
    steps = [
        read("abs", str(outside / "secret.txt")),
        read("dotdot", str(workspace / ".." / "outside" / "secret.txt")),
        read("symlink", str(workspace / "escape" / "secret.txt")),
        read("relative", "src/app.py"),
        read("inner_link", str(workspace / "inner" / "util.py")),
        read("additional", str(extra / "shared.txt")),
        write("write_out", str(outside / "planted.txt"), "x\n"),
        write("write_link", str(workspace / "escape" / "planted.txt"), "x\n"),
        req("terminal/create", "term_out", command="pwd", cwd=str(outside)),
        req("terminal/create", "term_link", command="pwd", cwd=str(workspace / "escape")),
    ]
    editor, log = await scripted_editor(tmp_path, workspace, "neovim", steps)
    sid = (await editor.new_session(additionalDirectories=[str(extra)]))["sessionId"]
    await editor.prompt(sid, "escape")
    got = answers(log)
    for rid in ("abs", "dotdot", "symlink", "write_out", "write_link", "term_out", "term_link"):
        error = got[rid].get("error")
        assert error is not None, (rid, got[rid])
        assert error["code"] == p.INVALID_PARAMS
        assert "outside the workspace" in error["message"], (rid, error)
    assert "relative" in got["relative"]["error"]["message"]
    assert got["inner_link"]["result"]["content"].startswith('"""Small text helpers')
    assert got["additional"]["result"] == {"content": "shared\n"}
    assert sorted(os.listdir(outside)) == ["secret.txt"]  # nothing planted
    assert editor.applied_edits == []
    await finish(editor)


async def test_allow_outside_workspace_opens_the_sandbox(tmp_path: Path, workspace: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("elsewhere\n", encoding="utf-8")
    steps = [read("out", str(outside)), read("relative", "outside.txt")]
    options = {"fs": {"allowOutsideWorkspace": True}}
    editor, log = await scripted_editor(tmp_path, workspace, "neovim", steps, options=options)
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "go")
    got = answers(log)
    assert got["out"]["result"] == {"content": "elsewhere\n"}
    assert got["relative"]["error"]["code"] == p.INVALID_PARAMS  # still absolute paths only
    await finish(editor)


# -- writes ------------------------------------------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
async def test_write_merges_onto_what_the_user_typed_elsewhere(
    tmp_path: Path, workspace: Path, profile: str
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text(NOTES, encoding="utf-8")
    agent_text = replace_line(NOTES, 7, "line 8 — the agent's")
    user_text = replace_line(NOTES, 1, "line 2 — the user's")
    both = replace_line(user_text, 7, "line 8 — the agent's")
    steps = [
        read("r", str(notes)),
        gate("type"),
        write("w", str(notes), agent_text),
        req("terminal/create", "t", command="cat", args=[str(notes)]),
        req("terminal/wait_for_exit", "exit", terminalId="{t.terminalId}"),
        req("terminal/output", "out", terminalId="{t.terminalId}"),
    ]
    steps[3]["save_as"] = "t"
    editor, log = await scripted_editor(tmp_path, workspace, profile, steps)
    editor.open(notes)
    editor.permission_policy = allow_after(lambda: editor.type_text(notes, user_text))
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "edit")
    got = answers(log)
    assert got["r"]["result"] == {"content": NOTES}
    assert got["w"]["result"] == {}
    assert editor.doc(notes).text == both  # both changes kept
    # saved before the agent got its answer: the command it ran next saw the merged text
    assert got["out"]["result"]["output"] == both
    assert notes.read_text(encoding="utf-8") == both
    assert editor.saved == [from_fs_path(str(notes))]
    # one minimal edit, shaped by the client's capabilities
    (applied,) = editor.applied_edits
    (edit,) = text_edits(applied)
    assert edit.range.start.line == 7 and edit.range.end.line <= 8
    if profile == "visual_studio_code":
        (change,) = applied.edit.document_changes or []
        assert isinstance(change, types.TextDocumentEdit)
        assert change.text_document.version == 2  # the version the user's typing made
        assert applied.edit.changes is None
    else:  # Neovim 0.11 does not advertise documentChanges
        assert applied.edit.document_changes is None
        assert list(applied.edit.changes or {}) == [from_fs_path(str(notes))]
    await finish(editor)


@pytest.mark.parametrize("profile", PROFILES)
async def test_conflicting_write_keeps_the_user_text_and_errors(
    tmp_path: Path, workspace: Path, profile: str
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text(NOTES, encoding="utf-8")
    user_text = replace_line(NOTES, 4, "line 5 by the user")
    redo = replace_line(user_text, 5, "line 6 by the agent, after reading again")
    steps = [
        read("r1", str(notes)),
        gate("type"),
        write("w1", str(notes), replace_line(NOTES, 4, "line 5 by the agent")),
        read("r2", str(notes)),
        write("w2", str(notes), redo),
    ]
    editor, log = await scripted_editor(tmp_path, workspace, profile, steps)
    editor.open(notes)
    editor.permission_policy = allow_after(lambda: editor.type_text(notes, user_text))
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "edit")
    got = answers(log)
    error = got["w1"]["error"]
    assert "conflict" in error["message"] and "read" in error["message"]
    assert str(notes) in error["message"]
    assert error["data"]["conflicts"] == [[5, 5]]
    warnings = [m.message for m in editor.messages if "conflicts" in m.message]
    assert warnings and "notes.txt" in warnings[0]
    # the agent read the user's text and redid its change: that one lands
    assert got["r2"]["result"] == {"content": user_text}
    assert got["w2"]["result"] == {}
    assert editor.doc(notes).text == redo
    assert notes.read_text(encoding="utf-8") == redo
    assert len(editor.applied_edits) == 1  # the refused write never reached the editor
    await finish(editor)


@pytest.mark.parametrize("profile", PROFILES)
async def test_lf_write_into_a_crlf_buffer_merges_line_by_line(
    tmp_path: Path, workspace: Path, profile: str
) -> None:
    crlf = NOTES.replace("\n", "\r\n")
    notes = workspace / "notes.txt"
    notes.write_bytes(crlf.encode())
    user_text = replace_line(crlf, 0, "line 1 (user)")
    # the agent writes LF, as agents tend to, with one line changed
    agent_lf = replace_line(NOTES, 9, "line 10 (agent)")
    steps = [read("r", str(notes)), gate("type"), write("w", str(notes), agent_lf)]
    editor, log = await scripted_editor(tmp_path, workspace, profile, steps)
    editor.open(notes, crlf)
    editor.permission_policy = allow_after(lambda: editor.type_text(notes, user_text))
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "edit")
    got = answers(log)
    assert got["r"]["result"] == {"content": crlf}
    assert got["w"]["result"] == {}, got["w"]
    assert editor.doc(notes).text == replace_line(user_text, 9, "line 10 (agent)")
    (applied,) = editor.applied_edits
    (edit,) = text_edits(applied)  # one line touched, not all ten
    assert edit.range.start.line == 9
    await finish(editor)


@pytest.mark.parametrize("profile", PROFILES)
async def test_new_file_in_new_folders(tmp_path: Path, workspace: Path, profile: str) -> None:
    target = workspace / "pkg" / "sub" / "new_module.py"
    content = "VALUE = 'é😀'\n"
    steps = [write("w", str(target), content), read("r", str(target))]
    editor, log = await scripted_editor(tmp_path, workspace, profile, steps)
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "create")
    got = answers(log)
    assert got["w"]["result"] == {}
    assert got["r"]["result"] == {"content": content}
    assert target.read_text(encoding="utf-8") == content
    assert editor.doc(target).text == content
    (applied,) = editor.applied_edits
    uri = from_fs_path(str(target))
    if profile == "visual_studio_code":
        create, change = applied.edit.document_changes or []
        assert isinstance(create, types.CreateFile) and create.uri == uri
        assert isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri
    else:
        assert applied.edit.document_changes is None
        assert list(applied.edit.changes or {}) == [uri]
    await finish(editor)


@pytest.mark.parametrize("profile", PROFILES)
async def test_without_save_support_an_open_buffer_is_never_written_behind_its_back(
    tmp_path: Path, workspace: Path, profile: str
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text(NOTES, encoding="utf-8")
    closed = workspace / "closed.txt"
    closed.write_text("old\n", encoding="utf-8")
    new_notes = replace_line(NOTES, 0, "first")
    steps = [
        read("r", str(notes)),
        write("open", str(notes), new_notes),
        write("closed", str(closed), "new\n"),
    ]
    editor, log = await scripted_editor(tmp_path, workspace, profile, steps, rich=False)
    editor.open(notes)
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "edit")
    got = answers(log)
    assert got["open"]["result"] == {} and got["closed"]["result"] == {}
    assert editor.doc(notes).text == new_notes  # in the buffer…
    assert notes.read_text(encoding="utf-8") == NOTES  # …and not behind it on disk
    assert editor.saved == []
    # no buffer holds closed.txt: the disk is the only copy, so it is written there
    assert closed.read_text(encoding="utf-8") == "new\n"
    assert [edit_uris(a) for a in editor.applied_edits] == [[from_fs_path(str(notes))]]
    await finish(editor)


@pytest.mark.parametrize("mode", ["refuse", "skip"])
async def test_refused_or_skipped_edit_is_an_error_to_the_agent(
    tmp_path: Path, workspace: Path, mode: str
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text(NOTES, encoding="utf-8")
    steps = [read("r", str(notes)), write("w", str(notes), replace_line(NOTES, 2, "changed"))]
    profile = "visual_studio_code" if mode == "refuse" else "neovim"
    editor, log = await scripted_editor(tmp_path, workspace, profile, steps)
    editor.open(notes)
    editor.edit_mode = mode
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "edit")
    error = answers(log)["w"]["error"]
    expected = "refused" if mode == "refuse" else "does not show it"
    assert expected in error["message"] and str(notes) in error["message"]
    assert len(editor.applied_edits) == 1
    assert editor.doc(notes).text == NOTES
    assert notes.read_text(encoding="utf-8") == NOTES
    assert editor.saved == []  # nothing saved after a failed edit
    await finish(editor)


# -- property: the edits turn the buffer into exactly the agent's content ---------------------
_ALPHABET = st.sampled_from(["a", "b", " ", "é", "中", "😀", "\t", "{", "}"])
_LINE = st.text(_ALPHABET, max_size=6)
_TEXT = (
    st.lists(_LINE, max_size=8)
    .flatmap(
        lambda lines: st.tuples(st.just(lines), st.sampled_from(["\n", "\r\n"]), st.booleans())
    )
    .map(lambda t: t[1].join(t[0]) + (t[1] if t[2] and t[0] else ""))
)


def _cases(count: int) -> list[tuple[str, str]]:
    cases: list[tuple[str, str]] = [("", "x"), ("x\n", ""), ("a\nb\n", "a\nb"), ("😀\n", "😀😀\n")]

    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None)
    @given(_TEXT, _TEXT, st.booleans())
    def collect(before: str, after: str, related: bool) -> None:
        if related:  # a nearby text: most of the lines kept
            after = before.replace("a", "b", 1) + after[:3]
        cases.append((before, after))

    collect()
    return cases


@pytest.mark.parametrize("profile", PROFILES)
async def test_edits_turn_the_buffer_into_the_agent_content(
    tmp_path: Path, workspace: Path, profile: str
) -> None:
    target = workspace / "prop.txt"
    target.write_text("", encoding="utf-8")
    steps = [
        read("r", str(target)),
        {**write("w", str(target), "{prompt}"), "expect": {"result": {}}},
    ]
    editor, _log = await scripted_editor(tmp_path, workspace, profile, steps)
    editor.open(target, "")
    sid = (await editor.new_session())["sessionId"]
    for before, after in _cases(40):
        editor.type_text(target, before)
        sent = len(editor.applied_edits)
        # acp/prompt fails if the agent's write was answered with an error (expect)
        await editor.prompt(sid, after)
        if "\r" not in after and "\r\n" in before and before.count("\n") == before.count("\r\n"):
            after = after.replace("\n", "\r\n")  # LF content takes a CRLF buffer's endings
        assert editor.doc(target).text == after, (before, after)
        assert target.read_bytes().decode("utf-8") == after, (before, after)
        new = editor.applied_edits[sent:]
        if before == after:
            assert new == []
            continue
        (applied,) = new
        rebuilt = apply_independently(before, text_edits(applied), editor.encoding)
        assert rebuilt == after, (before, after, text_edits(applied))
    await finish(editor)


async def test_review_writes_asks_the_editor_to_confirm(tmp_path: Path, workspace: Path) -> None:
    """reviewWrites: the agent's write carries a change annotation with needsConfirmation."""
    from tests.e2e.conftest import start_editor, with_fast_demo

    editor = await start_editor(
        tmp_path, workspace, "visual_studio_code", with_fast_demo({"reviewWrites": True})
    )
    sid = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(sid, "add a note to src/app.py"))["stopReason"] == "end_turn"
    writes = [e for e in editor.applied_edits if e.edit.change_annotations]
    assert writes, "no annotated edit reached the editor"
    (annotation,) = writes[0].edit.change_annotations.values()
    assert annotation.needs_confirmation is True
    await editor.shutdown_session()
