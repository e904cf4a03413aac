"""A git checkout's first snapshot starts from the user's own repository (DESIGN §3 "Disk
tracking at any size").

Hashing every file of a big checkout into the shadow store takes minutes (Cline, Roo and Kilo
time out there). The user's repository already holds every committed text, and its index
knows which files are unchanged since git last looked (their stat data). So the shadow
repository reads the user's objects as an *alternate* (read-only) and starts from a copy of
the user's index: its first ``git add -A`` hashes only what differs from the index, the cost
of a ``git status``. A clean file's "before" is then its blob at HEAD, in the user's objects.
Nothing in the user's repository is written.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from pathlib import Path

log = logging.getLogger(__name__)


async def _rev_parse(root: str) -> list[str] | None:
    """Top folder, git dir, common dir and object format of the checkout at ``root``, asked
    of the user's own git (their config, their safe.directory rules), or None."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "git",
            "rev-parse",
            "--show-toplevel",
            "--absolute-git-dir",
            "--git-common-dir",
            "--show-object-format",
            cwd=root,
            env={**os.environ, "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except FileNotFoundError:
        return None
    out, _ = await proc.communicate()
    lines = out.decode(errors="replace").splitlines()
    return lines if proc.returncode == 0 and len(lines) == 4 else None


async def borrow_checkout(root: str, git_dir: Path) -> str | None:
    """Point the new shadow repository ``git_dir`` at the objects and index of the checkout
    whose top folder is ``root``. Returns the user's git dir, or None when there is nothing to
    borrow (not a checkout's top, another object format, a split index) — then the first
    snapshot hashes every file, as for any folder."""
    found = await _rev_parse(root)
    if found is None:
        return None
    top, user_git, common, object_format = found
    if os.path.realpath(top) != root or object_format != "sha1":
        return None
    common_dir = Path(root, common)  # relative to the folder git ran in, when relative
    index = Path(user_git) / "index"
    if any(Path(user_git).glob("sharedindex.*")) or not index.is_file():
        return None  # a split index's entries live in another file: not worth the risk
    objects = (common_dir / "objects").resolve()
    if not objects.is_dir():
        return None
    alternates = git_dir / "objects" / "info" / "alternates"
    alternates.parent.mkdir(parents=True, exist_ok=True)
    alternates.write_text(f"{objects}\n", encoding="utf-8")
    try:
        # copy2 keeps the index's mtime: git's "racily clean" check compares entries to it
        shutil.copy2(index, git_dir / "index")
    except OSError as exc:
        log.info("index of %s not borrowed: %s", root, exc)
        (git_dir / "index").unlink(missing_ok=True)
    return user_git
