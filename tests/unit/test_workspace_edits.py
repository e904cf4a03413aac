"""The WorkspaceEdit shape per client capabilities, including reviewWrites confirmation."""

from __future__ import annotations

import pytest_lsp
from lsprotocol import types

from acp_lsp.editor.workspace_edits import ANNOTATION_ID, build_workspace_edit

URI = "file:///w/a.py"
EDIT = types.TextEdit(
    range=types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
    ),
    new_text="x",
)


def test_neovim_gets_a_changes_map() -> None:
    caps = pytest_lsp.client_capabilities("neovim")
    edit = build_workspace_edit(caps, URI, 3, False, [EDIT], confirm_label="agent: edit")
    assert edit.document_changes is None
    assert edit.changes == {URI: [EDIT]}


def test_vscode_gets_a_versioned_document_edit_and_create_for_new_files() -> None:
    caps = pytest_lsp.client_capabilities("visual_studio_code")
    edit = build_workspace_edit(caps, URI, 7, True, [EDIT])
    create, change = edit.document_changes or []
    assert isinstance(create, types.CreateFile) and create.uri == URI
    assert isinstance(change, types.TextDocumentEdit)
    assert change.text_document.version == 7
    assert change.edits == [EDIT]
    assert edit.change_annotations is None


def test_review_writes_asks_for_confirmation_where_annotations_are_supported() -> None:
    caps = pytest_lsp.client_capabilities("visual_studio_code")
    edit = build_workspace_edit(caps, URI, 1, False, [EDIT], confirm_label="demo: edit a.py")
    (change,) = edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit)
    (annotated,) = change.edits
    assert isinstance(annotated, types.AnnotatedTextEdit)
    assert annotated.annotation_id == ANNOTATION_ID and annotated.new_text == "x"
    annotation = (edit.change_annotations or {})[ANNOTATION_ID]
    assert annotation.needs_confirmation is True and annotation.label == "demo: edit a.py"
