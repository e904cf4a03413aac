"""Shadow snapshots of a folder (acp_lsp/disk/shadow.py) and buffers' disk bases
(acp_lsp/editor/disk_bases.py), against real git and real files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from acp_lsp.disk import shadow
from acp_lsp.disk.shadow import FileDelta, ShadowError, ShadowRepo, shadow_dir
from acp_lsp.disk.trees import blob_id
from acp_lsp.editor.disk_bases import DiskBases


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_bytes(b"a = 1\r\n")  # CRLF stays CRLF
    (root / "b.txt").write_bytes(b"bee\n")  # (write_text would make it CRLF on Windows)
    return root


def repo_for(folder: Path, tmp_path: Path) -> ShadowRepo:
    return ShadowRepo(str(folder), shadow_dir(tmp_path / "data", str(folder)))


async def test_deltas_name_created_modified_and_deleted_files(folder: Path, tmp_path: Path) -> None:
    repo = repo_for(folder, tmp_path)
    first = await repo.snapshot()
    assert await repo.snapshot() == first  # nothing changed: the same tree
    (folder / "src" / "a.py").write_bytes(b"a = 2\r\n")
    (folder / "b.txt").unlink()
    (folder / "new dir").mkdir()
    (folder / "new dir" / "c.md").write_text("sea\n")
    second = await repo.snapshot()
    deltas = {d.path: d for d in await repo.deltas(first, second)}
    a, b, c = (
        str(folder / "src" / "a.py"),
        str(folder / "b.txt"),
        str(folder / "new dir" / "c.md"),
    )
    assert set(deltas) == {a, b, c}
    assert deltas[a].before == blob_id(b"a = 1\r\n") and deltas[a].after == blob_id(b"a = 2\r\n")
    assert deltas[b] == FileDelta(b, blob_id(b"bee\n"), None)
    assert deltas[c].before is None
    assert await repo.blob(deltas[a].before or "") == b"a = 1\r\n"  # byte for byte


async def test_the_bridges_own_data_inside_the_folder_is_never_snapshotted(folder: Path) -> None:
    # a data dir inside the workspace (ACP_LSP_DATA_DIR set so): its history and this very
    # repository change with every snapshot, and a restore would rewrite them
    repo = ShadowRepo(str(folder), shadow_dir(folder / ".acp-data", str(folder)))
    (folder / ".acp-data").mkdir()
    (folder / ".acp-data" / "history.sqlite3").write_bytes(b"db")
    first = await repo.snapshot()
    (folder / ".acp-data" / "history.sqlite3").write_bytes(b"db, grown")
    (folder / "b.txt").write_text("bee, changed\n")
    deltas = await repo.deltas(first, await repo.snapshot())
    assert [d.path for d in deltas] == [str(folder / "b.txt")]


async def test_the_users_repository_and_ignored_files_are_left_alone(
    folder: Path, tmp_path: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / ".gitignore").write_text("build/\n")
    (folder / "build").mkdir()
    (folder / "build" / "out.o").write_bytes(b"\0\1")
    repo = repo_for(folder, tmp_path)
    first = await repo.snapshot()
    (folder / "build" / "out.o").write_bytes(b"\0\2")
    (folder / "b.txt").write_text("changed\n")
    deltas = await repo.deltas(first, await repo.snapshot())
    assert [d.path for d in deltas] == [str(folder / "b.txt")]
    # the user's own repository has no index and no objects from us
    status = subprocess.run(
        ["git", "-C", str(folder), "status", "--porcelain"], capture_output=True, text=True
    ).stdout
    assert "?? b.txt" in status and not (folder / ".git" / "index").exists()


def test_disk_bases_keep_reads_fresh(tmp_path: Path) -> None:
    f = tmp_path / "f.py"
    f.write_text("one\ntwo\nthree\n", newline="")  # as written, on Windows too
    bases = DiskBases()
    bases.opened(str(f), "one\ntwo\nthree\n")
    f.write_text("one\nTWO\nthree\n", newline="")  # a shell command changed the disk
    # a clean buffer is stale: the disk's text is what the agent must read
    assert bases.fresh(str(f), "one\ntwo\nthree\n") == "one\nTWO\nthree\n"
    # a dirty buffer: the disk's change with the user's edit on top
    assert bases.fresh(str(f), "one\ntwo\nthree\nfour\n") == "one\nTWO\nthree\nfour\n"
    # the same line changed by both: the user's view
    assert bases.fresh(str(f), "one\nzwei\nthree\n") == "one\nzwei\nthree\n"
    bases.closed(str(f))
    assert bases.fresh(str(f), "stale\n") == "stale\n"  # no base known: the buffer


async def test_large_files_the_home_folder_and_the_disk_are_left_out(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shadow, "MAX_FILE_BYTES", 1000)
    (folder / "big data.bin").write_bytes(b"x" * 2000)
    repo = repo_for(folder, tmp_path)
    first = await repo.snapshot()
    (folder / "big data.bin").write_bytes(b"y" * 3000)
    (folder / "b.txt").write_text("changed\n")
    assert [d.path for d in await repo.deltas(first, await repo.snapshot())] == [
        str(folder / "b.txt")
    ]

    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("USERPROFILE", str(folder))  # Windows' ~
    with pytest.raises(ShadowError, match="whole home folder"):
        await ShadowRepo(str(folder), tmp_path / "third").snapshot()
