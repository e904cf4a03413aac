"""A checkout whose git converts files on their way into the index (acp_lsp/disk/borrow.py):
``core.autocrlf``, or attributes (``text``, ``eol``, a ``filter`` as git-lfs's). Its index
blob of a clean file is then not the file's bytes, and the shadow repository's first snapshot
must hold the bytes (an undo writes them back), without writing to the user's repository."""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

import pytest

from acp_lsp.disk.borrow import _converted, borrow_checkout
from acp_lsp.disk.shadow import ShadowRepo, shadow_dir
from tests.support.big_repo import git

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="inotify is Linux's")

CRLF = b"one\r\ntwo\r\n"
PYTHON = b"a = 1\n"


def digest(path: Path) -> dict[str, str]:
    return {
        str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


def shadow_for(folder: Path, data: Path) -> ShadowRepo:
    return ShadowRepo(str(folder), shadow_dir(data, str(folder)))


def checkout(folder: Path, files: dict[str, bytes], config: dict[str, str]) -> None:
    """A checkout of ``files`` committed under ``config``; each file left on disk as given."""
    folder.mkdir(exist_ok=True)
    git(folder, "init", "-q")
    for key, value in config.items():
        git(folder, "config", key, value)
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
        os.utime(folder / name, (time.time() - 60, time.time() - 60))  # not "racily clean"
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "first")


async def first_blobs(repo: ShadowRepo) -> dict[str, bytes]:
    tree = await repo.snapshot()
    listed = await repo._git("ls-tree", "-r", "-z", tree)
    blobs: dict[str, bytes] = {}
    for entry in filter(None, listed.split(b"\0")):
        header, name = entry.split(b"\t", 1)
        blobs[name.decode()] = await repo.blob(header.split()[2].decode())
    return blobs


@pytest.mark.parametrize("autocrlf", ["true", "input"])
async def test_core_autocrlf_the_first_snapshot_holds_the_crlf_bytes(
    tmp_path: Path, autocrlf: str
) -> None:
    # true is Git for Windows' default: LF in the index, CRLF on disk
    folder = tmp_path / "project"
    checkout(folder, {"a.txt": CRLF, "src/a.py": PYTHON}, {"core.autocrlf": autocrlf})
    assert git(folder, "cat-file", "blob", ":a.txt") == b"one\ntwo\n"
    user_git = digest(folder / ".git")
    repo = shadow_for(folder, tmp_path / "data")
    blobs = await first_blobs(repo)
    assert repo.borrowed == str(folder / ".git")
    assert blobs["a.txt"] == CRLF
    assert blobs["src/a.py"] == PYTHON
    assert digest(folder / ".git") == user_git


@pytest.mark.parametrize(
    ("attributes", "config"),
    [
        (".gitattributes:*.txt text eol=crlf", {}),
        (".gitattributes:* text=auto", {}),
        ("sub/.gitattributes:*.txt text eol=crlf", {}),
        (".git/info/attributes:*.txt text", {}),
        # a filter stands for git-lfs (its index holds a pointer)
        (".gitattributes:*.txt filter=upper", {"filter.upper.clean": "tr a-z A-Z"}),
    ],
)
async def test_converting_attributes_the_first_snapshot_holds_the_files_bytes(
    tmp_path: Path, attributes: str, config: dict[str, str]
) -> None:
    folder = tmp_path / "project"
    where, line = attributes.split(":", 1)
    folder.mkdir()
    if where.startswith(".git/"):
        git(folder, "init", "-q")
    (folder / where).parent.mkdir(parents=True, exist_ok=True)
    (folder / where).write_text(line + "\n")
    checkout(folder, {"a.txt": CRLF, "sub/b.txt": CRLF, "src/a.py": PYTHON}, config)
    assert git(folder, "cat-file", "blob", ":sub/b.txt") != CRLF
    user_git = digest(folder / ".git")
    repo = shadow_for(folder, tmp_path / "data")
    blobs = await first_blobs(repo)
    assert repo.borrowed == str(folder / ".git")
    if not where.startswith("sub/"):
        assert blobs["a.txt"] == CRLF
    assert blobs["sub/b.txt"] == CRLF
    assert blobs["src/a.py"] == PYTHON
    assert digest(folder / ".git") == user_git


async def test_only_the_converted_entries_lose_their_stat_data(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / ".gitattributes").write_text("*.txt text eol=crlf\n*.png binary\n")
    checkout(folder, {"a.txt": CRLF, "b.png": b"\x89PNG\r\n", "src/a.py": PYTHON}, {})
    repo = shadow_for(folder, tmp_path / "data")
    git(tmp_path, "init", "-q", "--bare", str(repo.git_dir))
    await borrow_checkout(str(folder), repo.git_dir)
    assert "ctime: 0:0" not in git(folder, "ls-files", "--debug").decode()  # the user's
    shadow = (
        git(tmp_path, f"--git-dir={repo.git_dir}", f"--work-tree={folder}", "ls-files", "--debug")
        .decode()
        .split("\n")
    )
    fresh = {shadow[at] for at in range(len(shadow) - 1) if "ctime: 0:0" in shadow[at + 1]}
    assert fresh == {"a.txt"}  # the others are still borrowed: not hashed again


def test_which_attributes_convert(tmp_path: Path) -> None:
    # as git decides (convert.c): text wins over the old crlf, and an unset text over eol
    lines = {
        "text.txt": "text",
        "auto.txt": "text=auto",
        "eol.txt": "eol=lf",
        "old.txt": "crlf",
        "lfs.bin": "filter=lfs -text",
        "ident.txt": "ident",
        "utf16.txt": "working-tree-encoding=UTF-16LE",
        "unset.txt": "-text eol=crlf",
        "old-unset.txt": "-crlf eol=lf",
        "binary.png": "binary",
        "diff.py": "diff=python",
        "none.txt": "",
    }
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitattributes").write_text("".join(f"{n} {a}\n" for n, a in lines.items()))
    names = "\0".join(lines).encode()
    checked = git(tmp_path, "check-attr", "-z", "--all", "--stdin", stdin=names)
    converting = ["text.txt", "auto.txt", "eol.txt", "old.txt", "lfs.bin", "ident.txt", "utf16.txt"]
    assert _converted(checked) == {name.encode() for name in converting}


async def test_a_converted_file_changed_during_the_first_scan_keeps_its_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a change made while the first scan runs goes back to the user's index blob, except
    # where that blob is a conversion of the file (then the scan's bytes stay)
    folder = tmp_path / "project"
    files = {".gitattributes": b"*.txt text eol=crlf\n", "a.txt": CRLF, "b.py": PYTHON}
    checkout(folder, files, {})
    repo = shadow_for(folder, tmp_path / "data")
    real = repo._add_all

    async def scan_meanwhile() -> None:
        (folder / "a.txt").write_bytes(b"one\r\ntwo, changed\r\n")
        (folder / "b.py").write_bytes(b"a = 2\n")
        await real()

    monkeypatch.setattr(repo, "_add_all", scan_meanwhile)
    blobs = await first_blobs(repo)
    assert blobs["a.txt"] == b"one\r\ntwo, changed\r\n"  # never the index's LF text
    assert blobs["b.py"] == PYTHON  # HEAD's: its change is still reviewable


async def test_a_sparse_checkout_borrows_objects_but_not_its_index(tmp_path: Path) -> None:
    # its index names files that are not on disk (skip-worktree): a snapshot of the folder
    # must hold what is on disk, no more
    folder = tmp_path / "project"
    checkout(folder, {"in/a.py": PYTHON, "out/b.py": b"b = 1\n", "top.txt": b"top\n"}, {})
    git(folder, "sparse-checkout", "set", "in")
    assert not (folder / "out").exists()
    repo = shadow_for(folder, tmp_path / "data")
    blobs = await first_blobs(repo)
    assert repo.borrowed == str(folder / ".git")
    assert set(blobs) == {"in/a.py", "top.txt"}
