"""The WorkspaceEdit an agent write becomes, shaped by what the client advertised.

Versioned ``TextDocumentEdit`` (and ``CreateFile`` for a new file) where the client takes
``documentChanges``; a plain ``changes`` map otherwise. With the ``reviewWrites`` setting and
a client that supports change annotations, every edit carries an annotation with
``needsConfirmation``, so the editor asks the user before the agent's change applies.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability

ANNOTATION_ID = "acp-lsp.agent-write"


def build_workspace_edit(
    caps: types.ClientCapabilities,
    uri: str,
    version: int | None,
    is_new: bool,
    edits: list[types.TextEdit],
    confirm_label: str | None = None,
) -> types.WorkspaceEdit:
    doc_changes = get_capability(caps, "workspace.workspace_edit.document_changes", False)
    if not doc_changes:
        return types.WorkspaceEdit(changes={uri: list(edits)})
    resource_ops = get_capability(caps, "workspace.workspace_edit.resource_operations", None) or []
    changes: list[Any] = []
    if is_new and types.ResourceOperationKind.Create in resource_ops:
        changes.append(
            types.CreateFile(uri=uri, options=types.CreateFileOptions(ignore_if_exists=True))
        )
    annotations: dict[str, types.ChangeAnnotation] | None = None
    text_edits: list[Any] = list(edits)
    annotated = get_capability(caps, "workspace.workspace_edit.change_annotation_support", None)
    if confirm_label is not None and annotated is not None:
        annotations = {
            ANNOTATION_ID: types.ChangeAnnotation(
                label=confirm_label,
                needs_confirmation=True,
                description="a change proposed by an agent (acp-lsp reviewWrites)",
            )
        }
        text_edits = [
            types.AnnotatedTextEdit(range=e.range, new_text=e.new_text, annotation_id=ANNOTATION_ID)
            for e in edits
        ]
    changes.append(
        types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
            edits=text_edits,
        )
    )
    return types.WorkspaceEdit(document_changes=changes, change_annotations=annotations)
