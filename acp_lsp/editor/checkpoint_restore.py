"""``acp/restoreCheckpoint``: the files a session's turns changed go back to a checkpoint.

Every turn from the checkpoint's on left two shadow trees (``Session.checkpoints``): the
folder before its prompt and when it ended. The files that differ between the two are what
that turn changed, by any route (the client's fs, the agent's own writes, shell commands).
Each such file is taken back turn by turn, the last turn first: a file that still reads as
the turn left it gets the text from before the turn; one the user edited since gets the
turn's change taken out of it by a 3-way merge (so a change the user made between turns is
kept), and a merge that overlaps leaves the file alone and says so. Texts are compared as
bytes, so a restored file is the checkpoint's byte for byte.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError
from acp_lsp.disk.shadow import FileDelta, ShadowError
from acp_lsp.editor.disk_sync import DiskSync
from acp_lsp.editor.files import DocumentFiles
from acp_lsp.session import Session
from acp_lsp.session.checkpoints import user_ordinal
from acp_lsp.textedits import merge3

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]
Data = bytes | None  # a file's bytes; None: no file


class Overlap(Exception):
    """The user's later changes to a file overlap the agent's: it is left as it is."""


@dataclass(frozen=True, slots=True)
class Step:
    """One turn's change of one file."""

    before: Data
    after: Data


def plan_restore(current: Data, steps: list[Step]) -> Data:
    """What the file goes back to: ``steps`` (oldest first) taken out of ``current``."""
    data = current
    for step in reversed(steps):
        if data == step.after:
            data = step.before
        elif data == step.before:
            continue  # taken back already (a review reject)
        elif data is None:
            raise Overlap("it was deleted since")
        elif step.after is None:
            raise Overlap("it was created again since")
        elif step.before is None:
            raise Overlap("it was edited since the agent created it")
        else:
            data = _merged(step, data)
    return data


def _merged(step: Step, data: bytes) -> bytes:
    assert step.before is not None and step.after is not None
    try:
        base, ours, theirs = (b.decode("utf-8") for b in (step.after, data, step.before))
    except UnicodeDecodeError:
        raise Overlap("it changed since, and is not text that could be merged") from None
    merged = merge3(base, ours, theirs)
    if merged.text is None:
        lines = ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in merged.conflicts)
        raise Overlap(f"your changes to it since (lines {lines}) overlap the agent's")
    return merged.text.encode("utf-8")


class CheckpointRestore:
    def __init__(self, files: DocumentFiles, disk: DiskSync) -> None:
        self._files = files
        self._disk = disk

    async def restore(
        self, session: Session, message_index: int, dry_run: bool = False
    ) -> list[JsonObject]:
        """Restore the checkpoint of user message ``message_index``; one entry per file
        (``dry_run``: what a restore would do, nothing written)."""
        if session.status not in ("idle", "failed"):
            raise BackendError(
                p.TURN_RUNNING,
                f"a turn is running in {session.session_id!r}: cancel it or wait for its end "
                "before restoring a checkpoint",
            )
        ordinal = user_ordinal(session, message_index)
        if ordinal is None:
            raise BackendError(
                p.INVALID_PARAMS, f"messageIndex: message {message_index} is not a user message"
            )
        checkpoint = session.checkpoints.get(ordinal)
        if checkpoint is None or checkpoint.after is None:
            raise BackendError(
                p.INVALID_PARAMS,
                f"messageIndex: message {message_index} has no checkpoint (its turn did not "
                "end, or the folder is not tracked: disk.track off, no git, or too large)",
            )
        repo = self._disk.repo(checkpoint.root)
        steps: dict[str, list[FileDelta]] = {}
        try:
            for _, later in session.checkpoints.since(ordinal):
                if later.after is not None and later.root == checkpoint.root:
                    for delta in await repo.deltas(later.before, later.after):
                        steps.setdefault(delta.path, []).append(delta)
            # every text of the restore from one git process (not one per file)
            ids = {b for deltas in steps.values() for d in deltas for b in (d.before, d.after)}
            blobs = await repo.blobs({b for b in ids if b is not None})
        except ShadowError as exc:
            raise BackendError(p.INTERNAL_ERROR, f"cannot read the checkpoint: {exc}") from None
        return [
            await self._file(session, blobs, path, deltas, dry_run)
            for path, deltas in steps.items()
        ]

    async def _file(
        self,
        session: Session,
        blobs: dict[str, bytes],
        path: str,
        deltas: list[FileDelta],
        dry_run: bool,
    ) -> JsonObject:
        out: JsonObject = {"path": path, "change": _change(deltas)}
        try:
            steps = [Step(_blob(blobs, d.before), _blob(blobs, d.after)) for d in deltas]
            current = _read(path)
            target = plan_restore(current, steps)
            if target == current:
                return {**out, "status": "unchanged"}
            if dry_run:
                return {**out, "status": "restored"}
            await self._write(session, path, current, target)
        except Overlap as exc:
            return {**out, "status": "failed", "message": f"{path} was left as it is: {exc}"}
        except (OSError, ShadowError, BackendError) as exc:
            message = exc.message if isinstance(exc, BackendError) else str(exc)
            return {**out, "status": "failed", "message": f"cannot restore {path}: {message}"}
        log.info("checkpoint of %s: restored %s", session.session_id, path)
        return {**out, "status": "restored"}

    async def _write(self, session: Session, path: str, current: Data, target: Data) -> None:
        label = f"acp-lsp: restore {os.path.basename(path)} to a checkpoint"
        if target is None:
            await self._files.delete(path, label)
            return
        text = _text(target)
        if text is None:  # not UTF-8: bytes as they were, no buffer to follow
            self._files.write_disk(path, target)
            return
        self._files.write_disk(path, text)
        await self._disk.disk_written(session, path, _text(current), text)


def _change(deltas: list[FileDelta]) -> str:
    if deltas[0].before is None:
        return "created"
    return "deleted" if deltas[-1].after is None else "modified"


def _blob(blobs: dict[str, bytes], blob: str | None) -> Data:
    if blob is None:
        return None
    if blob not in blobs:
        raise ShadowError(f"the text {blob} is gone from the checkpoint store")
    return blobs[blob]


def _read(path: str) -> Data:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def _text(data: Data) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
