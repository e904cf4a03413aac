"""The file-access sandbox: every path an agent names is confined to a set of roots.

Roots are the session cwd, the workspace folders and the session's additional directories.
Paths are judged after resolving symlinks and ``..``, so a symlink inside the tree that
points outside it is refused like the outside path itself.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from acp_lsp.platform.paths import within


class SandboxError(Exception):
    """A path the sandbox refuses; the message names the path and the reason."""


class MissingPathError(SandboxError):
    """A path inside the sandbox that does not exist (when the caller required it)."""


class Sandbox:
    """Confines agent paths to ``roots`` (unless ``allow_outside``)."""

    def __init__(self, roots: Sequence[str], allow_outside: bool = False) -> None:
        resolved: list[str] = []
        for root in roots:
            if not root or "\0" in root or not os.path.isabs(root):
                raise ValueError(f"sandbox root {root!r} must be an absolute path")
            real = os.path.realpath(root)
            if real not in resolved:
                resolved.append(real)
        self.roots: list[str] = resolved
        self.given: list[str] = list(roots)  # as named, before symlinks are resolved
        self.allow_outside = allow_outside

    def resolve(self, path: str, *, must_exist: bool = False) -> str:
        """The absolute, symlink-free form of ``path``, or SandboxError.

        A path that does not exist yet is fine (a file about to be written): the existing
        part is resolved and the rest appended, so it is judged by where it would land.
        """
        real = self._resolve(path)
        if not self.allow_outside and not self._inside(real):
            where = f" (resolves to {real})" if real != path else ""
            allowed = ", ".join(self.roots) or "none"
            raise SandboxError(f"path {path} is outside the workspace{where} (allowed: {allowed})")
        if must_exist and not os.path.exists(real):
            raise MissingPathError(f"path {path} does not exist")
        return real

    def contains(self, path: str) -> bool:
        """Whether ``path`` resolves inside one of the roots (``allow_outside`` aside)."""
        try:
            return self._inside(self._resolve(path))
        except SandboxError:
            return False

    def inside(self, paths: set[str]) -> set[str]:
        """The ``paths`` that resolve inside the roots (``allow_outside`` aside): many files
        of few folders, each folder resolved once (a workspace's diagnostics)."""
        folders: dict[str, str] = {}
        out: set[str] = set()
        for path in paths:
            if "\0" in path or not os.path.isabs(path):
                continue
            folder, name = os.path.split(path)
            try:
                real_folder = folders.get(folder)
                if real_folder is None:
                    real_folder = folders[folder] = os.path.realpath(folder)
                real = os.path.join(real_folder, name)
                if name in ("", ".", "..") or os.path.islink(real):
                    real = os.path.realpath(real)
            except (ValueError, UnicodeError):  # no path (a lone surrogate: valid JSON)
                continue
            if self._inside(real):
                out.add(path)
        return out

    @staticmethod
    def _resolve(path: str) -> str:
        if "\0" in path:
            raise SandboxError(f"path {path!r} contains a NUL byte")
        if path.startswith("~"):
            raise SandboxError(f"path {path} starts with '~'; paths must be absolute")
        if not os.path.isabs(path):
            raise SandboxError(f"path {path} is relative; paths must be absolute")
        # realpath (non-strict) resolves the existing prefix and appends the rest lexically,
        # including a symlink whose target does not exist yet.
        try:
            return os.path.realpath(path)
        except (ValueError, UnicodeError) as exc:  # e.g. a lone surrogate: valid JSON, no path
            raise SandboxError(f"path {path!r} cannot be used: {exc}") from None

    def _inside(self, real: str) -> bool:
        return any(within(real, root) for root in self.roots)
