"""Agent file access through the editor's buffers.

Reads see what the user sees (the open document, unsaved text included) and remember it as
the base of the agent's next write. Writes become ``workspace/applyEdit`` with minimal edits;
if the user changed the document since the agent read it, the agent's change is merged onto
the user's text (3-way), and a real conflict is refused without touching the user's text.
The bridge then checks the edit landed (some editors answer ``applied: true`` for an edit they
skipped) and asks editors that declared ``saveDocument`` to save, so the disk matches.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path
from pygls.workspace import TextDocument

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError
from acp_lsp.disk.trees import blob_id
from acp_lsp.editor.disk_bases import DiskBases
from acp_lsp.editor.file_text import (
    WritePlan,
    match_line_endings,
    plan_write,
    read_disk,
    slice_lines,
)
from acp_lsp.editor.workspace_edits import build_workspace_edit
from acp_lsp.text.lines import offset_to_position
from acp_lsp.textedits import minimal_edits

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]
LANDING_TIMEOUT_S = 3.0
OWN_WRITES_KEPT = 16
# Diffing and merging texts past this size (characters) runs in a worker thread, so a huge
# file does not stall the event loop (and every other session) while it is compared.
OFFLOAD_CHARS = 200_000


def uri_for(path: str) -> str:
    uri: str | None = from_fs_path(path)
    if uri is None:
        raise BackendError(p.INVALID_PARAMS, f"path {path} has no file URI")
    return uri


class WriteRefused(BackendError):
    """The editor refused, skipped or could not save an edit."""


class DocumentFiles:
    """Reads and writes of agent files, routed through the editor's open documents."""

    def __init__(
        self,
        server: LanguageServer,
        *,
        save_declared: Callable[[], bool],
        save_document: Callable[[list[str]], Awaitable[list[str]]],
        notify_user: Callable[[str], None],
        review_writes: Callable[[], bool] = lambda: False,
    ) -> None:
        self._server = server
        self._review_writes = review_writes
        self._save_declared = save_declared
        self._save_document = save_document
        self._notify_user = notify_user
        # (session id, real path) -> the full text the agent last read or wrote
        self._bases: dict[tuple[str, str], str] = {}
        self._changed = asyncio.Event()
        self.writes = 0
        self.bases = DiskBases()
        # real path -> blob ids of what the bridge itself last wrote there (None: deleted), so
        # the disk scans do not take the bridge's own writes for the agent's. Several: another
        # session's scan may come after more writes to the same file (a soak of 20 sessions
        # in one folder took a session's older write for an agent's change)
        self._own: dict[str, deque[str | None]] = {}

    # -- documents -------------------------------------------------------------------------
    def document(self, path: str) -> TextDocument | None:
        """The open document for ``path`` (by its real path or as named), if any."""
        docs = self._server.workspace.text_documents
        real = os.path.realpath(path)
        for candidate in (path, real):
            uri = from_fs_path(candidate)
            if uri is not None and uri in docs:
                doc: TextDocument = docs[uri]
                return doc
        # Opened through a symlink (a linked project folder, macOS's /tmp): same file.
        for doc in docs.values():
            if doc.uri.startswith("file:") and os.path.realpath(doc.path) == real:
                return doc
        return None

    def _uri(self, path: str) -> str:
        """The URI the editor knows the file by: its open document's, else the path's."""
        doc = self.document(path)
        return doc.uri if doc is not None else uri_for(path)

    def current_text(self, path: str) -> str | None:
        """What the user sees: the open buffer, else the disk; None when missing."""
        doc = self.document(path)
        if doc is not None:
            return doc.source
        try:
            return read_disk(path)
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise BackendError(p.INVALID_PARAMS, f"path {path} is a directory") from None
        except UnicodeDecodeError:
            raise BackendError(p.INVALID_PARAMS, f"file {path} is not UTF-8 text") from None

    def did_change(self) -> None:
        """Called on every didOpen/didChange/didSave: wakes writers waiting for a landing."""
        self._changed.set()
        self._changed = asyncio.Event()

    async def next_change(self, timeout: float) -> None:
        """Until the next didOpen/didChange/didClose/didSave (at most ``timeout`` s)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)

    def _mark_own(self, path: str, text: str | bytes | None) -> None:
        kept = self._own.setdefault(os.path.realpath(path), deque(maxlen=OWN_WRITES_KEPT))
        data = text.encode() if isinstance(text, str) else text
        kept.append(None if data is None else blob_id(data))

    def is_own(self, path: str, blob: str | None) -> bool:
        """Whether the disk's ``blob`` (None: no file) at ``path`` is one of the bridge's own
        recent writes there."""
        return blob in self._own.get(os.path.realpath(path), ())

    def forget_session(self, session_id: str) -> None:
        for key in [k for k in self._bases if k[0] == session_id]:
            del self._bases[key]

    # -- reads -----------------------------------------------------------------------------
    def read(self, session_id: str, path: str, line: int | None, limit: int | None) -> str:
        text = self.current_text(path)
        if text is not None and self.document(path) is not None:
            text = self.bases.fresh(path, text)  # never older than the disk
        if text is None:
            # ACP's own wording for -32002: Gemini CLI tells a missing file by the message
            raise BackendError(p.RESOURCE_NOT_FOUND, f"Resource not found: {path}", {"path": path})
        self._bases[(session_id, path)] = text
        return slice_lines(text, line, limit)

    # -- writes ----------------------------------------------------------------------------
    async def write(self, session_id: str, path: str, content: str, label: str) -> None:
        doc, current, content, plan = await self._plan(session_id, path, content)
        if plan.target is None:
            ranges = ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in plan.conflicts)
            self._notify_user(
                f"acp-lsp: the agent's change to {path} conflicts with your edits "
                f"(lines {ranges}); your text was kept and the agent was told to retry."
            )
            raise WriteRefused(
                p.INTERNAL_ERROR,
                f"write conflict in {path}: the user changed lines {ranges} since you "
                "read the file; read it again and redo your change",
                {"path": path, "conflicts": plan.conflicts},
            )
        target = plan.target
        if doc is None and not self._save_declared():
            # No buffer to keep, and no way to have the editor save one: write the disk.
            self.write_disk(path, target)
        else:
            await self._apply(path, doc, current, target, label, plan.edits, confirm=True)
            if self._save_declared():
                await self._save(path, target)
        self._bases[(session_id, path)] = content
        self.writes += 1

    async def _plan(
        self, session_id: str, path: str, content: str
    ) -> tuple[TextDocument | None, str | None, str, WritePlan]:
        """(document, its text, the content in its line endings, the plan) — consistent: a
        plan computed in a thread is redone if the user typed meanwhile."""
        for attempt in range(3):
            doc = self.document(path)
            version = doc.version if doc is not None else None
            current = self.current_text(path)
            content = match_line_endings(content, current)
            base: str | None = None
            if doc is not None and current is not None:
                base = self._bases.get((session_id, path))
                if base is None:  # never read: the user's unsaved changes are theirs
                    try:
                        base = read_disk(path)
                    except (OSError, UnicodeDecodeError):
                        base = current
            args = (base, current, content, self._encoding())
            size = len(content) + len(current or "")
            if size < OFFLOAD_CHARS or attempt == 2:
                return doc, current, content, plan_write(*args)
            plan = await asyncio.to_thread(plan_write, *args)
            if self.document(path) is doc and (doc is None or doc.version == version):
                return doc, current, content, plan
        raise AssertionError("unreachable")

    # -- review restores (acp/reviewEdit reject) ------------------------------------------
    async def restore(self, path: str, text: str, label: str) -> None:
        """Make ``path`` read exactly ``text`` (no merge: the caller computed it from the
        current text), through the editor and saved, like a write."""
        doc = self.document(path)
        current = self.current_text(path)
        if doc is None and current == text:
            return
        if doc is None and not self._save_declared():
            self.write_disk(path, text)
            return
        await self._apply(path, doc, current, text, label)
        if self._save_declared():
            await self._save(path, text)

    async def set_buffer(
        self, path: str, expected: str, target: str, label: str, *, whole: bool = False
    ) -> bool:
        """Bring the open document of ``path`` from ``expected`` to ``target`` with a versioned
        edit, unsaved. False when there is no such document any more or it no longer reads
        ``expected`` (the user typed meanwhile: the caller merges again). ``whole`` replaces the
        whole text: an edit that gives the same text when an editor applies it twice."""
        doc = self.document(path)
        if doc is None or doc.source != expected:
            return False
        edits = None
        if whole:
            end = offset_to_position(expected, len(expected), self._encoding())
            edits = [types.TextEdit(range=types.Range(types.Position(0, 0), end), new_text=target)]
        await self._apply(path, doc, expected, target, label, edits)
        return True

    async def delete(self, path: str, label: str) -> None:
        """Remove a file the agent created: a ``DeleteFile`` edit where the editor takes one,
        else from disk when no buffer holds it (never behind an open buffer's back)."""
        self._mark_own(path, None)
        doc = self.document(path)
        resource_ops = self._supports("workspace.workspace_edit.resource_operations") or []
        if (
            self._supports("workspace.workspace_edit.document_changes")
            and types.ResourceOperationKind.Delete in resource_ops
        ):
            edit = types.WorkspaceEdit(
                document_changes=[
                    types.DeleteFile(
                        uri=uri_for(path),
                        options=types.DeleteFileOptions(ignore_if_not_exists=True),
                    )
                ]
            )
            try:
                result = await asyncio.wait_for(
                    self._server.workspace_apply_edit_async(
                        types.ApplyWorkspaceEditParams(edit=edit, label=label)
                    ),
                    timeout=30,
                )
            except Exception as exc:
                raise WriteRefused(
                    p.INTERNAL_ERROR, f"the editor failed to delete {path}: {exc}"
                ) from None
            if not result.applied:
                reason = result.failure_reason or "no reason given"
                raise WriteRefused(
                    p.INTERNAL_ERROR, f"the editor refused to delete {path}: {reason}"
                )
            if os.path.exists(path):
                raise WriteRefused(
                    p.INTERNAL_ERROR, f"the editor reported {path} deleted, but it still exists"
                )
            return
        if doc is not None:
            raise WriteRefused(
                p.INTERNAL_ERROR,
                f"cannot delete {path}: it is open in the editor, which cannot delete files "
                "through workspace edits; close it and try again",
            )
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise WriteRefused(p.INTERNAL_ERROR, f"cannot delete {path}: {exc}") from None

    def write_disk(self, path: str, text: str | bytes) -> None:
        """``text`` as UTF-8, or bytes as they are (a checkpoint's file that is not text)."""
        data = text.encode("utf-8") if isinstance(text, str) else text
        self._mark_own(path, data)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            Path(path).write_bytes(data)
        except OSError as exc:
            raise WriteRefused(p.INTERNAL_ERROR, f"cannot write {path}: {exc}") from None

    def _supports(self, dotted: str) -> Any:
        return get_capability(self._server.client_capabilities, dotted, None)

    def _encoding(self) -> str:
        kind = self._server.workspace.position_encoding or "utf-16"
        return str(getattr(kind, "value", kind))

    async def _apply(
        self,
        path: str,
        doc: TextDocument | None,
        current: str | None,
        target: str,
        label: str,
        edits: list[types.TextEdit] | None = None,
        *,
        confirm: bool = False,
    ) -> None:
        if current == target and doc is not None:
            return
        if current is None:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self._mark_own(path, "")  # an editor's CreateFile makes it empty on disk first
        uri = self._uri(path)
        if edits is None:
            edits = minimal_edits(current or "", target, self._encoding())
        review = confirm and self._review_writes()
        edit = build_workspace_edit(
            self._server.client_capabilities,
            uri,
            doc.version if doc is not None else None,
            current is None,
            edits,
            confirm_label=label if review else None,
        )
        try:
            result = await asyncio.wait_for(
                self._server.workspace_apply_edit_async(
                    types.ApplyWorkspaceEditParams(edit=edit, label=label)
                ),
                timeout=30,
            )
        except TimeoutError:
            raise WriteRefused(
                p.INTERNAL_ERROR, f"the editor did not answer the edit of {path} in 30s"
            ) from None
        except Exception as exc:
            raise WriteRefused(
                p.INTERNAL_ERROR, f"the editor failed the edit of {path}: {exc}"
            ) from None
        if not result.applied:
            reason = result.failure_reason or "no reason given"
            raise WriteRefused(p.INTERNAL_ERROR, f"the editor refused the edit of {path}: {reason}")
        await self._await_landing(path, target)

    async def _await_landing(self, path: str, target: str) -> None:
        """The document must show the agent's text: some editors report skipped edits applied."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + LANDING_TIMEOUT_S
        while True:
            doc = self.document(path)
            if doc is not None and doc.source == target:
                return
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                break
        doc = self.document(path)
        if doc is None:
            # The editor does not sync this file to us; trust its answer (the save checks disk).
            return
        raise WriteRefused(
            p.INTERNAL_ERROR,
            f"the editor reported the edit of {path} applied, but the document does not show it "
            "(it changed meanwhile); read the file again and retry",
        )

    async def _save(self, path: str, target: str) -> None:
        uri = self._uri(path)
        self._mark_own(path, target)
        self.bases.saved(path, target)
        try:
            saved = await asyncio.wait_for(self._save_document([uri]), timeout=30)
        except Exception as exc:
            raise WriteRefused(
                p.INTERNAL_ERROR, f"the editor failed to save {path}: {exc}"
            ) from None
        if uri not in saved:
            raise WriteRefused(p.INTERNAL_ERROR, f"the editor did not save {path}")
