"""Carrying out a reject: the undo of one file's change, on disk or through the editor.

``review`` decides what is rejected; this module works out the text the file goes back to
(``review_rules`` for a whole change, ``review_hunks`` for some of its hunks) and writes it
where the change was made: a change seen on disk is undone on disk, byte for byte, and open
buffers follow as for any disk change (the user's unsaved edits stay unsaved); a change only
reported is undone in what the user sees, through the editor.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Sequence

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError
from acp_lsp.editor.file_text import read_disk
from acp_lsp.editor.files import DocumentFiles
from acp_lsp.editor.review_hunks import Hunk, plan_hunks_reject
from acp_lsp.editor.review_rules import Plan, Snapshot, plan_reject
from acp_lsp.editor.review_state import FileChange
from acp_lsp.sandbox import Sandbox, SandboxError
from acp_lsp.session import Session

log = logging.getLogger(__name__)

DiskWritten = Callable[[Session, str, str | None, str], Awaitable[None]]


class Unreadable:
    """The file's text could not be read (a directory, not UTF-8)."""


UNREADABLE = Unreadable()


class Undoer:
    """Writes rejects back, through the editor's files or on disk."""

    def __init__(self, files: DocumentFiles) -> None:
        self._files = files
        self.disk_written: DiskWritten | None = None
        """Told when a reject rewrote a file on disk (disk sync brings open buffers along)."""

    def text(self, real: str) -> Snapshot | Unreadable:
        """What the user sees of ``real``: the open buffer, else the disk."""
        try:
            return self._files.current_text(real)
        except BackendError:
            return UNREADABLE

    async def reject(
        self, session: Session, sandbox: Sandbox, changes: Sequence[FileChange], made: bool | None
    ) -> None:
        """Undo ``changes`` (one file's, in the order they were made) whole."""
        first = changes[0]
        real, on_disk, current = self._where(session, sandbox, changes)
        if changes[-1].deleted:
            # the last change deleted the file: bring back the text it had before the first
            if os.path.lexists(real):
                raise BackendError(
                    p.INVALID_PARAMS, f"{first.path} was created again since; left as it is"
                )
            before = first.snapshots[0] if first.snapshots else None
            if before is not None:
                self._files.write_disk(real, before)  # nothing on disk to clobber
            return
        plan = plan_reject(
            first.path,
            [diff for change in changes for diff in change.diffs],
            first.snapshots,
            current,
            existed_before=first.existed_before,
            made=made,
        )
        await self._carry_out(session, first.path, real, on_disk, current, plan)

    async def reject_hunks(
        self, session: Session, sandbox: Sandbox, change: FileChange, hunks: Sequence[Hunk]
    ) -> None:
        """Undo ``hunks`` of ``change`` (which knows its exact texts), the rest kept."""
        assert change.texts is not None
        real, on_disk, current = self._where(session, sandbox, [change])
        plan = plan_hunks_reject(change.path, *change.texts, hunks, current)
        await self._carry_out(session, change.path, real, on_disk, current, plan)

    def _where(
        self, session: Session, sandbox: Sandbox, changes: Sequence[FileChange]
    ) -> tuple[str, bool, Snapshot]:
        """The file's real path, whether its changes were made on disk, and its text now."""
        first = changes[0]
        path = first.path if os.path.isabs(first.path) else os.path.join(session.cwd, first.path)
        try:
            real = sandbox.resolve(path)
        except SandboxError as exc:
            raise BackendError(p.INVALID_PARAMS, str(exc)) from None
        on_disk = all(change.change for change in changes)
        current = _disk_text(real) if on_disk else self.text(real)
        if isinstance(current, Unreadable):
            raise BackendError(p.INVALID_PARAMS, f"{first.path} is not a readable text file now")
        return real, on_disk, current

    async def _carry_out(
        self,
        session: Session,
        path: str,
        real: str,
        on_disk: bool,
        current: Snapshot,
        plan: Plan,
    ) -> None:
        if plan.action == "refuse":
            raise BackendError(p.INVALID_PARAMS, plan.reason or f"{path} changed since")
        label = f"acp-lsp: undo {session.agent}'s edit of {os.path.basename(path)}"
        if plan.action == "write" and plan.text is not None:
            if on_disk:
                self._files.write_disk(real, plan.text)
                if self.disk_written is not None:
                    await self.disk_written(session, real, current, plan.text)
            else:
                await self._files.restore(real, plan.text, label)
        elif plan.action == "delete":
            await self._files.delete(real, label)
        log.info("review: rejected %s (%s)", path, plan.action)


def _disk_text(real: str) -> Snapshot | Unreadable:
    try:
        return read_disk(real)
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return UNREADABLE
