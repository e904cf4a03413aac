"""DocumentFiles (acp_lsp.editor.files) against a fake editor: the pure helpers, and the
write paths that are hard to reach end to end (a user typing while a huge write is merged
off the event loop, a landing that never comes)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path
from pygls.workspace import Workspace

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError
from acp_lsp.editor import files as files_mod
from acp_lsp.editor.files import (
    DocumentFiles,
    WriteRefused,
    match_line_endings,
    plan_write,
    slice_lines,
)
from acp_lsp.textedits import apply_edits


# -- pure helpers ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "limit", "expected"),
    [
        (None, None, "a\r\nb\fstill b\nc\u2028still c\nd"),
        (1, 1, "a\r\n"),
        (0, 1, "a\r\n"),  # 0 is taken as the first line
        (2, 1, "b\fstill b\n"),  # a form feed does not end a line
        (3, None, "c\u2028still c\nd"),  # nor does a Unicode line separator
        (4, 5, "d"),
        (5, None, ""),
        (2, 0, ""),
    ],
)
def test_slice_lines_counts_newlines_only(
    line: int | None, limit: int | None, expected: str
) -> None:
    assert slice_lines("a\r\nb\fstill b\nc\u2028still c\nd", line, limit) == expected


@pytest.mark.parametrize(
    ("content", "document", "expected"),
    [
        ("x\ny\n", "a\r\nb\r\n", "x\r\ny\r\n"),  # LF content into a CRLF document
        ("x\r\ny\n", "a\r\nb\r\n", "x\r\ny\n"),  # content with its own CRs: as it is
        ("x\ny\n", "a\r\nb\n", "x\ny\n"),  # mixed document: as it is
        ("x\ny\n", "a\nb\n", "x\ny\n"),  # LF document
        ("x\ny\n", None, "x\ny\n"),  # new file
        ("x\ny\n", "", "x\ny\n"),
        ("x", "a\r\n", "x"),
    ],
)
def test_match_line_endings(content: str, document: str | None, expected: str) -> None:
    assert match_line_endings(content, document) == expected


def test_plan_write_merges_or_reports_the_conflict() -> None:
    base = "1\n2\n3\n4\n5\n"
    user = "1\nuser\n3\n4\n5\n"
    plan = plan_write(base, user, "1\n2\n3\n4\nagent\n", "utf-16")
    assert plan.target == "1\nuser\n3\n4\nagent\n"
    assert apply_edits(user, plan.edits, "utf-16") == plan.target
    assert [e.range.start.line for e in plan.edits] == [4]
    conflict = plan_write(base, user, "1\nagent\n3\n4\n5\n", "utf-16")
    assert conflict.target is None and conflict.conflicts == [(2, 2)] and conflict.edits == []
    # no base (a new file) or an unchanged document: the content as it is
    assert plan_write(None, None, "new\n", "utf-8").target == "new\n"
    assert plan_write(base, base, "x\n", "utf-8").target == "x\n"


# -- a fake editor -----------------------------------------------------------------------
class FakeEditor:
    """Just enough of pygls's LanguageServer for DocumentFiles, with an editor behind it
    that applies ``workspace/applyEdit`` to its documents (or skips / refuses it)."""

    def __init__(self, tmp_path: Path, *, document_changes: bool = True) -> None:
        self.workspace = Workspace(tmp_path.as_uri())
        self.client_capabilities = types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(
                workspace_edit=types.WorkspaceEditClientCapabilities(
                    document_changes=document_changes,
                    resource_operations=[types.ResourceOperationKind.Create],
                )
            )
        )
        self.mode = "apply"
        self.edits: list[types.ApplyWorkspaceEditParams] = []
        self.files: DocumentFiles | None = None

    def open(self, path: Path, text: str) -> None:
        self.workspace.put_text_document(
            types.TextDocumentItem(
                uri=from_fs_path(str(path)) or "", language_id="text", version=1, text=text
            )
        )

    def type(self, path: Path, text: str) -> None:
        doc = self.workspace.get_text_document(from_fs_path(str(path)) or "")
        self.workspace.update_text_document(
            types.VersionedTextDocumentIdentifier(uri=doc.uri, version=(doc.version or 0) + 1),
            types.TextDocumentContentChangeWholeDocument(text=text),
        )
        assert self.files is not None
        self.files.did_change()

    def text(self, path: Path) -> str:
        return self.workspace.get_text_document(from_fs_path(str(path)) or "").source

    async def workspace_apply_edit_async(
        self, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        self.edits.append(params)
        if self.mode == "refuse":
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="no")
        if self.mode == "skip":
            return types.ApplyWorkspaceEditResult(applied=True)
        edit = params.edit
        pairs: list[tuple[str, list[Any]]] = list((edit.changes or {}).items())
        for change in edit.document_changes or []:
            if isinstance(change, types.TextDocumentEdit):
                pairs.append((change.text_document.uri, list(change.edits)))
        for uri, edits in pairs:
            doc = self.workspace.get_text_document(uri)
            new = apply_edits(doc.source, edits, "utf-16")
            self.workspace.update_text_document(
                types.VersionedTextDocumentIdentifier(uri=uri, version=(doc.version or 0) + 1),
                types.TextDocumentContentChangeWholeDocument(text=new),
            )
        assert self.files is not None
        self.files.did_change()
        return types.ApplyWorkspaceEditResult(applied=True)


def make(
    editor: FakeEditor, *, save: bool = True
) -> tuple[DocumentFiles, list[str], list[list[str]]]:
    notices: list[str] = []
    saves: list[list[str]] = []

    async def save_document(uris: list[str]) -> list[str]:
        saves.append(uris)
        return uris

    files = DocumentFiles(
        cast(LanguageServer, editor),
        save_declared=lambda: save,
        save_document=save_document,
        notify_user=notices.append,
    )
    editor.files = files
    return files, notices, saves


LINES = "".join(f"line {i}\n" for i in range(1, 9))


def changed(text: str, index: int, new: str) -> str:
    lines = text.splitlines(keepends=True)
    lines[index] = new + "\n"
    return "".join(lines)


# -- writes ------------------------------------------------------------------------------
async def test_a_user_typing_during_an_offloaded_merge_is_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past OFFLOAD_CHARS the plan is computed in a thread; if the user types meanwhile,
    the plan is stale and is made again from the new text."""
    path = tmp_path / "big.txt"
    path.write_text(LINES, encoding="utf-8", newline="")
    editor = FakeEditor(tmp_path)
    editor.open(path, LINES)
    files, _, _ = make(editor)
    files.read("s", str(path), None, None)
    monkeypatch.setattr(files_mod, "OFFLOAD_CHARS", 10)
    threads: list[str] = []
    real_to_thread = asyncio.to_thread

    async def to_thread(fn: Callable[..., Any], *args: Any) -> Any:
        result = await real_to_thread(fn, *args)
        threads.append(args[1])  # the document text the plan was made from
        if len(threads) == 1:  # the user types while the first plan is computed
            editor.type(path, changed(LINES, 0, "typed by the user"))
        return result

    monkeypatch.setattr(files_mod.asyncio, "to_thread", to_thread)
    await files.write("s", str(path), changed(LINES, 7, "written by the agent"), "edit")
    both = changed(changed(LINES, 0, "typed by the user"), 7, "written by the agent")
    assert editor.text(path) == both
    assert threads == [LINES, changed(LINES, 0, "typed by the user")]
    assert len(editor.edits) == 1


async def test_a_conflict_refuses_without_touching_the_document(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text(LINES, encoding="utf-8", newline="")
    editor = FakeEditor(tmp_path)
    editor.open(path, LINES)
    files, notices, saves = make(editor)
    files.read("s", str(path), None, None)
    editor.type(path, changed(LINES, 2, "user"))
    with pytest.raises(WriteRefused) as info:
        await files.write("s", str(path), changed(LINES, 2, "agent"), "edit")
    assert info.value.code == p.INTERNAL_ERROR
    assert info.value.data == {"path": str(path), "conflicts": [(3, 3)]}
    assert editor.text(path) == changed(LINES, 2, "user")
    assert editor.edits == [] and saves == []
    assert len(notices) == 1 and "lines 3" in notices[0]


async def test_an_open_buffer_the_agent_never_read_keeps_its_unsaved_changes(
    tmp_path: Path,
) -> None:
    """No read by this session: the base is the disk, so the buffer's unsaved edit is the
    user's and is merged with the agent's write."""
    path = tmp_path / "a.txt"
    path.write_text(LINES, encoding="utf-8", newline="")
    editor = FakeEditor(tmp_path)
    editor.open(path, changed(LINES, 0, "unsaved"))
    files, _, saves = make(editor)
    await files.write("s", str(path), changed(LINES, 5, "agent"), "edit")
    assert editor.text(path) == changed(changed(LINES, 0, "unsaved"), 5, "agent")
    assert saves == [[from_fs_path(str(path))]]


async def test_skipped_edit_is_refused_after_the_landing_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files_mod, "LANDING_TIMEOUT_S", 0.05)
    path = tmp_path / "a.txt"
    path.write_text(LINES, encoding="utf-8", newline="")
    editor = FakeEditor(tmp_path, document_changes=False)
    editor.open(path, LINES)
    editor.mode = "skip"
    files, _, saves = make(editor)
    with pytest.raises(WriteRefused, match="does not show it"):
        await files.write("s", str(path), changed(LINES, 1, "agent"), "edit")
    assert saves == []
    assert len(editor.edits) == 1 and editor.edits[0].edit.changes is not None


async def test_without_save_support_a_closed_file_is_written_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "new.txt"
    editor = FakeEditor(tmp_path)
    files, _, saves = make(editor, save=False)
    await files.write("s", str(path), "a\r\nb\r\n", "edit")
    assert path.read_bytes() == b"a\r\nb\r\n"  # no newline translation either way
    assert files.read("s", str(path), None, None) == "a\r\nb\r\n"
    assert editor.edits == [] and saves == []


async def test_a_crlf_file_on_disk_is_read_exactly(tmp_path: Path) -> None:
    path = tmp_path / "w.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    files, _, _ = make(FakeEditor(tmp_path))
    assert files.read("s", str(path), None, None) == "one\r\ntwo\r\n"
    assert files.read("s", str(path), 2, 1) == "two\r\n"
    with pytest.raises(BackendError) as info:
        files.read("s", str(tmp_path / "missing.txt"), None, None)
    assert info.value.code == p.RESOURCE_NOT_FOUND
