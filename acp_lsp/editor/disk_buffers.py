"""Open buffers follow the disk (DESIGN §3): a file changed on disk reaches its buffer with the
user's unsaved edits merged on top (3-way; base: the disk text the buffer was last in sync
with), through a *versioned* ``workspace/applyEdit``; a real conflict keeps the buffer as the
user left it and says so."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from acp_lsp.backends.base import BackendError
from acp_lsp.editor.files import DocumentFiles
from acp_lsp.session import Session
from acp_lsp.textedits import merge3

JsonObject = dict[str, Any]
RELOAD_WAIT_S = 1.0


class DiskBuffers:
    def __init__(
        self, files: DocumentFiles, warn: Callable[[str], None], plain: Callable[[], bool]
    ) -> None:
        self._files = files
        self._warn = warn
        self._plain = plain

    async def sync(
        self, session: Session, path: str, before: str | None, after: str | None
    ) -> JsonObject | None:
        """Bring the open buffer of ``path`` (if any) to the new disk text, the user's unsaved
        edits merged on top. Returns the ``acp/documentsSynced`` entry, or None."""
        name = os.path.basename(path)
        for attempt in range(3):  # the user may type while the edit is on its way
            doc = self._files.document(path)
            if doc is None:
                return None
            buffer = doc.source
            if after is None:
                self._warn(
                    f"acp-lsp: {session.agent} deleted {name}; its buffer still holds the text "
                    "(acp/reviewEdit reject brings the file back)"
                )
                return None
            base = self._files.bases.base(path)
            if base is None:
                base = before if before is not None else ""
            if buffer in (after, base):
                target = after
            else:
                merged = merge3(base, buffer, after)
                if merged.text is None:
                    lines = ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in merged.conflicts)
                    self._warn(
                        f"acp-lsp: {session.agent} changed {name} on disk where you have unsaved "
                        f"edits (lines {lines}); your buffer was kept. Saving it overwrites the "
                        "agent's change; acp/reviewEdit shows it"
                    )
                    return {"uri": doc.uri, "version": doc.version, "conflict": True}
                target = merged.text
            try:
                if target != buffer:
                    done = await self._files.set_buffer(
                        path,
                        buffer,
                        target,
                        f"{session.agent}: {name} changed on disk",
                        # a clean buffer in an editor with no front end: one that reloads the
                        # file by itself may restart its versions (eglot 1.9 does), and a
                        # minimal edit would then apply twice; a whole replacement cannot
                        whole=buffer == base and self._plain(),
                    )
                    if not done:
                        continue
            except BackendError as exc:
                if attempt < 2:
                    # refused as stale: the editor may have reloaded the file by itself
                    await self._files.next_change(RELOAD_WAIT_S)
                    continue
                self._warn(f"acp-lsp: could not bring {name} up to date with the disk: {exc}")
                return None
            self._files.bases.synced(path, after)
            doc = self._files.document(path)
            if doc is None:
                return None
            return {"uri": doc.uri, "version": doc.version, "matchesDisk": doc.source == after}
        return None
