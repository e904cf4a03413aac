"""Where a folder's shadow repository lives and what it holds besides objects: its config,
excludes and attributes (DESIGN §3 "Disk and buffers never diverge")."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

CONFIG = """[core]
\tbare = false
\tautocrlf = false
\tsafecrlf = false
\tuntrackedCache = true
\tquotePath = false
[gc]
\tauto = 0
[advice]
\taddEmbeddedRepo = false
"""
"""Bytes as they are (an undo restores them exactly); objects are pruned only when a process
first opens the repository (`git prune`), never mid-turn; nested repositories are skipped
quietly."""

ATTRIBUTES = "* -text -eol -crlf -filter -ident -working-tree-encoding\n"
"""Over any .gitattributes of the folder: a blob is the file's bytes, never a converted text
(an undo writes it back), whether git or the bridge itself (``trees``) stores it."""


def shadow_dir(data_dir: Path, root: str) -> Path:
    """Where the shadow repository of ``root`` lives: one per real folder path."""
    key = hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:20]
    return data_dir / "shadow" / key


def glob_escape(name: str) -> str:
    """A path as a literal gitignore pattern."""
    return "".join("\\" + c if c in "*?[\\!# " else c for c in name)


def write_new(git_dir: Path) -> None:
    """After ``git init``: the config (one write instead of a `git config` per key), and
    nested repositories' metadata excluded (theirs, never snapshotted)."""
    with (git_dir / "config").open("a", encoding="utf-8") as fh:
        fh.write(CONFIG)
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "exclude").write_text(".git\n", encoding="utf-8")


def write_attributes(git_dir: Path) -> None:
    attributes = git_dir / "info" / "attributes"
    if not attributes.exists():  # (repositories made before it was written)
        attributes.parent.mkdir(exist_ok=True)
        attributes.write_text(ATTRIBUTES, encoding="utf-8")


def exclude(git_dir: Path, patterns: list[str]) -> None:
    """Add gitignore ``patterns`` to the repository's own excludes."""
    if patterns:
        with (git_dir / "info" / "exclude").open("a", encoding="utf-8") as fh:
            fh.write("\n".join(patterns) + "\n")


def exclude_own_data(git_dir: Path, root: str) -> None:
    """The bridge's data dir (this repository, the history) inside the folder is never
    snapshotted: a restore would otherwise rewrite the repository it reads from."""
    data = os.path.realpath(git_dir.parent.parent)
    if not data.startswith(root + os.sep):
        return
    line = "/" + glob_escape(os.path.relpath(data, root)) + "/"
    known = git_dir / "info" / "exclude"
    if not known.exists() or line + "\n" not in known.read_text(encoding="utf-8"):
        known.parent.mkdir(exist_ok=True)
        exclude(git_dir, [line])


def larger_than(root: str, listed: bytes, limit: int) -> list[str]:
    """Patterns naming the files of ``listed`` (``ls-files -z`` output) over ``limit`` bytes."""
    large: list[str] = []
    for name in filter(None, listed.split(b"\0")):
        try:
            if os.stat(os.path.join(root, os.fsdecode(name))).st_size > limit:
                large.append("/" + glob_escape(os.fsdecode(name)))
        except OSError:
            continue
    return large
