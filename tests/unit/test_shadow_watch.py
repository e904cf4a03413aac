"""Snapshots that follow the changes (acp_lsp/disk/watch.py, acp_lsp/disk/borrow.py; DESIGN §3
"Disk tracking at any size"), against real git, real files and the kernel's inotify: the tree
a dirty-set snapshot writes is the tree a whole scan writes, an unchanged folder costs no
git, a watcher that may have missed something makes the snapshot scan, and a git checkout's
first snapshot starts from the user's objects and index without writing to them."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_lsp.disk import watch
from acp_lsp.disk.shadow import ShadowRepo, shadow_dir
from acp_lsp.disk.trees import blob_id
from tests.support.big_repo import git

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="inotify is Linux's")


def repo_for(folder: Path, data: Path) -> ShadowRepo:
    return ShadowRepo(str(folder), shadow_dir(data, str(folder)))


async def scanned_tree(repo: ShadowRepo) -> str:
    """The tree a whole scan of the folder writes (what every snapshot did before)."""
    await repo._add_all()
    return (await repo._git("write-tree")).decode().strip()


def git_calls(repo: ShadowRepo, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = repo._git

    async def counted(*args: str, **kwargs: Any) -> bytes:
        calls.append(args[0])
        return await real(*args, **kwargs)

    monkeypatch.setattr(repo, "_git", counted)
    return calls


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src" / "deep").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a = 1\n")
    (root / "src" / "deep" / "d.py").write_text("d = 1\n")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    (root / "b.txt").write_text("bee\n")
    return root


async def test_an_unchanged_folder_costs_no_git(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = repo_for(folder, tmp_path / "data")
    first = await repo.snapshot()
    assert repo.watch_note is None
    calls = git_calls(repo, monkeypatch)
    assert await repo.snapshot() == first
    assert calls == []
    (folder / "src" / "a.py").write_text("a = 2\n")
    (folder / "run.log").write_text("ignored\n")  # ignored: checked, never added
    second = await repo.snapshot()
    # the change read and stored by the bridge: no pass over the index, no whole scan
    assert calls == ["check-ignore", "cat-file"]
    assert [d.path for d in await repo.deltas(first, second)] == [str(folder / "src" / "a.py")]


async def test_folders_made_moved_and_removed_between_snapshots(
    folder: Path, tmp_path: Path
) -> None:
    repo = repo_for(folder, tmp_path / "data")
    first = await repo.snapshot()
    # a folder made with files in it before the watcher can watch it, one moved in from
    # outside, one moved away, one removed, a file renamed
    (folder / "new" / "inner").mkdir(parents=True)
    (folder / "new" / "inner" / "n.py").write_text("n\n")
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "o.py").write_text("o\n")
    shutil.move(str(outside), str(folder / "moved in"))
    shutil.move(str(folder / "src" / "deep"), str(tmp_path / "away"))
    (folder / "b.txt").rename(folder / "c.txt")
    second = await repo.snapshot()
    assert second == await scanned_tree(repo)
    names = sorted(os.path.relpath(d.path, folder) for d in await repo.deltas(first, second))
    assert names == ["b.txt", "c.txt", "moved in/sub/o.py", "new/inner/n.py", "src/deep/d.py"]
    # the moved-away folder's watches are gone: changing it there changes nothing here
    (tmp_path / "away" / "d.py").write_text("changed away\n")
    (folder / "moved in" / "sub" / "o.py").write_text("o, changed\n")
    third = await repo.snapshot()
    assert [d.path for d in await repo.deltas(second, third)] == [
        str(folder / "moved in" / "sub" / "o.py")
    ]
    shutil.rmtree(folder / "moved in")
    assert await repo.snapshot() == await scanned_tree(repo)
    # a new folder holding a link to a folder: the link is stored, never followed
    (folder / "linked").mkdir()
    (folder / "linked" / "to src").symlink_to(folder / "src")
    assert await repo.snapshot() == await scanned_tree(repo)


OPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["write", "remove", "mkdir", "rmtree", "rename", "ignored", "chmod", "symlink"]
        ),
        st.sampled_from(["a", "b", "x/c", "x/y/d", "z"]),
        st.binary(max_size=8),
    ),
    max_size=12,
)


def apply(root: Path, op: str, name: str, data: bytes) -> None:
    path = root / name
    try:
        if op == "write":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        elif op == "remove":
            path.unlink()
        elif op == "mkdir":
            (path.parent / (path.name + "_dir") / "f").parent.mkdir(parents=True, exist_ok=True)
            (path.parent / (path.name + "_dir") / "f").write_bytes(data)
        elif op == "rmtree":
            shutil.rmtree(path.parent if path.parent != root else root / "x")
        elif op == "rename":
            path.rename(root / (name.replace("/", "_") + "_renamed"))
        elif op == "chmod":  # the executable bit is part of a file's entry
            path.chmod(path.stat().st_mode ^ 0o100)
        elif op == "symlink":  # a link is stored as its target, never followed
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(data.hex() or "target")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            (path.parent / (path.name + ".log")).write_bytes(data)
    except OSError:
        pass  # the op made no sense on this tree (a file is gone, a folder is a file)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rounds=st.lists(OPS, min_size=1, max_size=3))
async def test_a_dirty_set_snapshot_is_the_whole_scan(
    tmp_path_factory: pytest.TempPathFactory, rounds: list[list[tuple[str, str, bytes]]]
) -> None:
    base = tmp_path_factory.mktemp("prop")
    root = base / "root"
    root.mkdir()
    (root / ".gitignore").write_text("*.log\n")
    repo = repo_for(root, base / "data")
    await repo.snapshot()
    try:
        for ops in rounds:
            for op in ops:
                apply(root, *op)
            assert await repo.snapshot() == await scanned_tree(repo), ops
    finally:
        repo.close()


async def test_an_overflow_or_a_watch_limit_makes_the_snapshot_scan(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = repo_for(folder, tmp_path / "data")
    first = await repo.snapshot()
    assert repo._watch is not None
    from inotify_simple import Event, flags

    queued = [[Event(-1, flags.Q_OVERFLOW, 0, "")]]  # what the kernel queues when it overflows
    monkeypatch.setattr(
        repo._watch._notify, "read", lambda timeout=None: queued.pop() if queued else []
    )
    (folder / "b.txt").write_text("changed while the queue overflowed\n")
    calls = git_calls(repo, monkeypatch)
    second = await repo.snapshot()
    assert calls == ["add", "write-tree"]  # the whole scan: `add --all -- .`
    assert [d.path for d in await repo.deltas(first, second)] == [str(folder / "b.txt")]
    repo.close()

    def no_room(self: Any, path: str, mask: int) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    from inotify_simple import INotify

    monkeypatch.setattr(INotify, "add_watch", no_room)
    other = repo_for(folder, tmp_path / "other")
    before = await other.snapshot()
    assert other.watch_note is not None and "max_user_watches" in other.watch_note
    (folder / "src" / "a.py").write_text("still seen\n")
    after = await other.snapshot()
    assert [d.path for d in await other.deltas(before, after)] == [str(folder / "src" / "a.py")]


def tree_digest(path: Path) -> dict[str, str]:
    return {
        str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


def committed(folder: Path) -> None:
    """Make ``folder`` a checkout whose HEAD holds every file it has."""
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "first")


async def test_a_checkouts_first_snapshot_borrows_the_users_objects_and_index(
    folder: Path, tmp_path: Path
) -> None:
    committed(folder)
    (folder / "b.txt").write_text("bee, the user's unsaved change\n")
    (folder / "untracked.py").write_text("u = 1\n")
    user_git = tree_digest(folder / ".git")
    repo = repo_for(folder, tmp_path / "data")
    first = await repo.snapshot()
    assert repo.borrowed == str(folder / ".git")
    alternates = repo.git_dir / "objects" / "info" / "alternates"
    assert alternates.read_text().strip() == str(folder / ".git" / "objects")
    # only the changed and the untracked file were hashed into the shadow store
    loose = list((repo.git_dir / "objects").glob("??/*"))
    assert {blob_id(b"bee, the user's unsaved change\n"), blob_id(b"u = 1\n")} <= {
        p.parent.name + p.name for p in loose
    }
    assert blob_id(b"a = 1\n") not in {p.parent.name + p.name for p in loose}
    # an agent changes a clean file: its "before" is the blob at HEAD, from the user's objects
    (folder / "src" / "a.py").write_text("a = 2\n")
    second = await repo.snapshot()
    [delta] = await repo.deltas(first, second)
    assert await repo.blob(delta.before or "") == b"a = 1\n"
    assert tree_digest(folder / ".git") == user_git  # the user's repository is never written
    assert second == await scanned_tree(repo)


async def test_a_subfolder_of_a_checkout_borrows_nothing(folder: Path, tmp_path: Path) -> None:
    committed(folder)
    repo = repo_for(folder / "src", tmp_path / "data")
    await repo.snapshot()
    assert repo.borrowed is None
    assert not (repo.git_dir / "objects" / "info" / "alternates").exists()


def test_a_network_file_system_is_scanned(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(watch, "_fs_type", lambda path: "nfs4")
    with pytest.raises(watch.WatchUnavailable, match="network file system"):
        watch.DirtyWatch(str(tmp_path))


async def changed_during_the_first_scan(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Callable[[], None]
) -> tuple[ShadowRepo, dict[str, Any]]:
    """The deltas between a checkout's first snapshot, during whose scan ``change`` ran (an
    agent already at work), and the next snapshot, by path relative to the folder."""
    repo = repo_for(folder, tmp_path / "data")
    real = repo._add_all

    async def scan_meanwhile() -> None:
        change()
        await real()

    monkeypatch.setattr(repo, "_add_all", scan_meanwhile)
    first = await repo.snapshot()
    monkeypatch.setattr(repo, "_add_all", real)
    second = await repo.snapshot()
    assert second == await scanned_tree(repo)
    return repo, {os.path.relpath(d.path, folder): d for d in await repo.deltas(first, second)}


async def test_a_change_made_while_the_first_scan_runs_is_still_a_change(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # its change must not become part of the "before"
    committed(folder)

    def change() -> None:
        (folder / "src" / "a.py").write_text("a = 2, written during the scan\n")
        (folder / "made.py").write_text("made during the scan\n")

    repo, deltas = await changed_during_the_first_scan(folder, tmp_path, monkeypatch, change)
    assert set(deltas) == {"src/a.py", "made.py"}
    assert await repo.blob(deltas["src/a.py"].before or "") == b"a = 1\n"  # HEAD's
    assert deltas["made.py"].before is None


async def test_an_untracked_file_rewritten_while_the_first_scan_runs_is_never_a_creation(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the user's untracked files, rewritten meanwhile: what they held before is not known
    # (the scan read them after the change), but they were there: shown as created, a reject
    # of the "creation" would delete the user's file
    committed(folder)
    (folder / "notes.txt").write_text("the user's notes\n")
    (folder / "todo.txt").write_text("the user's list\n")

    def change() -> None:
        (folder / "notes.txt").write_text("notes, rewritten in place\n")
        spare = folder / "todo.txt.tmp"
        spare.write_text("list, renamed over\n")
        os.replace(spare, folder / "todo.txt")  # sed -i's way, and an editor's save
        (folder / "made.py").write_text("made during the scan\n")
        (folder / "fresh").mkdir()
        (folder / "fresh" / "f.py").write_text("in a folder made during the scan\n")

    _, deltas = await changed_during_the_first_scan(folder, tmp_path, monkeypatch, change)
    # made plainly (a file, a folder): not there before; the rewritten ones are not shown
    assert set(deltas) == {"made.py", "fresh/f.py"}
    assert all(d.before is None for d in deltas.values())
    assert (folder / "notes.txt").read_text() == "notes, rewritten in place\n"
    assert git(folder, "status", "--porcelain").decode().splitlines() == [
        "?? fresh/",
        "?? made.py",
        "?? notes.txt",
        "?? todo.txt",
    ]  # untracked, as the test means


def test_the_watcher_tells_a_plain_creation_from_a_rewrite_or_a_rename(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("old\n")
    (tmp_path / "over.txt").write_text("over\n")
    (tmp_path / "gone.txt").write_text("gone\n")
    watcher = watch.DirtyWatch(str(tmp_path))
    try:
        (tmp_path / "new.txt").write_text("new\n")
        (tmp_path / "new.txt").write_text("new, again\n")
        (tmp_path / "old.txt").write_text("old, rewritten\n")
        (tmp_path / "tmp").write_text("renamed over\n")
        os.replace(tmp_path / "tmp", tmp_path / "over.txt")
        (tmp_path / "gone.txt").unlink()
        (tmp_path / "gone.txt").write_text("made again\n")  # deleted first: was there
        (tmp_path / "dir").mkdir()
        assert watcher.take() == {"new.txt", "old.txt", "tmp", "over.txt", "gone.txt", "dir"}
        assert watcher.created == {"new.txt", "tmp", "dir"}
        (tmp_path / "new.txt").write_text("new, a third time\n")
        assert watcher.take() == {"new.txt"}
        assert watcher.created == set()  # by then an old file
    finally:
        watcher.close()


async def test_a_git_stopped_mid_snapshot_leaves_no_lock_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a timed-out or cancelled snapshot once left index.lock, and the folder was never
    # tracked again (the shadow repository outlives the server)
    from acp_lsp.disk import shadow

    root = tmp_path / "many"
    for n in range(5000):
        (root / f"d{n // 100}").mkdir(parents=True, exist_ok=True)
        (root / f"d{n // 100}" / f"f{n}.txt").write_text(f"{n}\n" * 50)
    repo = repo_for(root, tmp_path / "data")
    monkeypatch.setattr(shadow, "FIRST_SCAN_TIMEOUT_S", 0.05)
    with pytest.raises(shadow.ShadowError, match="took over"):
        await repo.snapshot()
    assert not (repo.git_dir / "index.lock").exists()
    monkeypatch.undo()
    await repo.snapshot()  # tracked after all


async def test_changes_too_many_to_read_go_through_an_index_that_catches_up(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the bridge stores small changes itself, leaving git's index behind; a flood of changes
    # (a branch switch) goes through `git add`, which must start from the last tree
    from acp_lsp.disk import shadow

    repo = repo_for(folder, tmp_path / "data")
    await repo.snapshot()
    (folder / "src" / "a.py").write_text("a = 2\n")
    (folder / "b.txt").unlink()
    stored = await repo.snapshot()
    calls = git_calls(repo, monkeypatch)
    monkeypatch.setattr(shadow, "MAX_READ_PATHS", 1)
    (folder / "src" / "a.py").write_text("a = 3\n")
    (folder / "new.py").write_text("new\n")
    flooded = await repo.snapshot()
    assert "read-tree" in calls and "add" in calls
    assert {os.path.relpath(d.path, folder) for d in await repo.deltas(stored, flooded)} == {
        "src/a.py",
        "new.py",
    }
    assert flooded == await scanned_tree(repo)


async def test_a_capture_is_the_folder_when_it_was_read(folder: Path, tmp_path: Path) -> None:
    # the prompt's checkpoint: read before the prompt goes out, stored after; a change made
    # after the read (the agent's) is the next snapshot's, never the checkpoint's
    repo = repo_for(folder, tmp_path / "data")
    first = await repo.snapshot()
    assert (nothing := repo.capture()) is not None and await repo.snapshot(nothing) == first
    (folder / "src" / "a.py").write_text("the user's save\n")
    changes = repo.capture()
    assert changes is not None and changes.tree is None
    (folder / "src" / "a.py").write_text("the agent's edit\n")
    (folder / "agent.py").write_text("made by the agent\n")
    checkpoint = await repo.snapshot(changes)
    [saved] = await repo.deltas(first, checkpoint)
    assert await repo.blob(saved.after or "") == b"the user's save\n"
    after = await repo.snapshot()
    deltas = {os.path.relpath(d.path, folder): d for d in await repo.deltas(checkpoint, after)}
    assert set(deltas) == {"src/a.py", "agent.py"}
    assert await repo.blob(deltas["src/a.py"].before or "") == b"the user's save\n"
    assert after == await scanned_tree(repo)


async def test_a_capture_is_refused_for_a_new_folder_and_its_paths_kept(
    folder: Path, tmp_path: Path
) -> None:
    repo = repo_for(folder, tmp_path / "data")
    first = await repo.snapshot()
    (folder / "pkg").mkdir()
    (folder / "pkg" / "m.py").write_text("m\n")
    assert repo.capture() is None  # a folder is read whole: not on the prompt's path
    second = await repo.snapshot()
    assert [d.path for d in await repo.deltas(first, second)] == [str(folder / "pkg" / "m.py")]


@pytest.mark.parametrize("when", ["_exclude_large", "_add_all"])
async def test_a_prompt_before_or_during_a_checkouts_first_scan_is_checkpointed_at_once(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    # the first prompt comes while a big checkout's shadow repository is still set up (the
    # index being borrowed: `_exclude_large`) or while its first scan runs (`_add_all`): the
    # user's save before it is in the checkpoint, the agent's change after it is the turn's
    # (it once went into the checkpoint: the 300,000-file test under load, runs 18 and 20)
    from acp_lsp.disk.trees import Changes

    committed(folder)
    repo = repo_for(folder, tmp_path / "data")
    real = getattr(repo, when)
    captured: list[Changes | None] = []

    async def prompt_meanwhile() -> None:
        (folder / "b.txt").write_text("the user's save before the prompt\n")
        captured.append(repo.capture())  # the prompt goes out now
        (folder / "src" / "a.py").write_text("the agent's edit\n")
        await real()

    monkeypatch.setattr(repo, when, prompt_meanwhile)
    await repo.snapshot()
    monkeypatch.setattr(repo, when, real)
    [changes] = captured
    assert changes is not None
    checkpoint = await repo.snapshot(changes)
    saved = await repo._git("cat-file", "blob", f"{checkpoint}:b.txt")
    assert saved == b"the user's save before the prompt\n"
    after = await repo.snapshot()
    [edit] = await repo.deltas(checkpoint, after)
    assert edit.path == str(folder / "src" / "a.py")
    assert await repo.blob(edit.before or "") == b"a = 1\n"
    assert await repo.blob(edit.after or "") == b"the agent's edit\n"
    assert after == await scanned_tree(repo)


async def test_a_fresh_git_init_makes_its_first_prompt_wait_for_the_first_scan(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `git init` with nothing added (the Emacs tests' workspace) has no index to tell apart
    # what changes during the first scan: a capture then let the agent's sed into the
    # checkpoint, and the turn found no change (the Emacs review test, CI of stop 39). Its
    # prompt waits for the first scan, as a plain folder's does
    git(folder, "init", "-q")
    repo = repo_for(folder, tmp_path / "data")
    captured: list[object] = []
    real = repo._exclude_large

    async def prompt_meanwhile() -> None:
        captured.append(repo.capture())
        await real()

    monkeypatch.setattr(repo, "_exclude_large", prompt_meanwhile)
    first = await repo.snapshot()
    assert captured == [None] and repo.borrowed is None
    (folder / "src" / "a.py").write_text("the agent's edit\n")
    [edit] = await repo.deltas(first, await repo.snapshot())
    assert await repo.blob(edit.before or "") == b"a = 1\n"
