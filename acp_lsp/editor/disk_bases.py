"""For each open document, the disk text it was last in sync with (DESIGN §3).

That text is the base of a 3-way merge when the disk changes behind an open buffer: the
user's unsaved edits are the difference between it and the buffer, the agent's change the
difference between it and the new disk text. It also keeps agent reads fresh: a buffer the
user has not touched since the disk changed is stale, and the agent reads the disk instead
(Zed #49162: a read after a shell command changed the file returned the old buffer).
"""

from __future__ import annotations

import os

from acp_lsp.textedits import merge3


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


class DiskBases:
    def __init__(self) -> None:
        self._texts: dict[str, str] = {}  # real path -> disk text the buffer last matched

    def opened(self, path: str, text: str) -> None:
        """A document opened: in sync when it shows the disk's text (else base unknown)."""
        real = os.path.realpath(path)
        if _read(real) == text:
            self._texts[real] = text
        else:
            self._texts.pop(real, None)

    def saved(self, path: str, text: str) -> None:
        self._texts[os.path.realpath(path)] = text

    def synced(self, path: str, disk_text: str) -> None:
        """The bridge brought the buffer up to ``disk_text`` (with the user's edits on top)."""
        self._texts[os.path.realpath(path)] = disk_text

    def closed(self, path: str) -> None:
        self._texts.pop(os.path.realpath(path), None)

    def base(self, path: str) -> str | None:
        return self._texts.get(os.path.realpath(path))

    def fresh(self, path: str, buffer: str) -> str:
        """What an agent reading ``path`` should see: the buffer, unless the disk changed
        behind it; then the disk's text with the user's unsaved edits merged on top (the
        buffer as it is when they conflict: the user's text is what they see)."""
        base = self.base(path)
        if base is None:
            return buffer
        disk = _read(os.path.realpath(path))
        if disk is None or disk == base:
            return buffer
        if buffer == base:
            return disk
        merged = merge3(base, buffer, disk)
        return merged.text if merged.text is not None else buffer
