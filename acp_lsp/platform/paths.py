"""Whether a path lies under a root, compared as the platform's file system compares names:
on Windows, in any case and with either slash (``C:\\Work`` holds ``c:/work/a.py``)."""

from __future__ import annotations

import os
from types import ModuleType


def within(path: str, root: str, flavour: ModuleType = os.path) -> bool:
    """``path`` is ``root`` or lies under it (both absolute and resolved); ``flavour`` is
    ``ntpath`` or ``posixpath`` (the tests give Windows' on Linux)."""
    path, root = flavour.normcase(path), flavour.normcase(root)
    if path == root:
        return True
    sep: str = flavour.sep
    return path.startswith(root if root.endswith(sep) else root + sep)
