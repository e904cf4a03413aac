"""Snapshots of a folder's files in a shadow git repository (DESIGN §3 "Disk and buffers never
diverge").

Agents change files on disk by routes the bridge does not see (their own writes, shell
commands, terminals). To show those changes in the editor and undo them byte for byte, the
bridge needs each file's text from *before* the change. Like Cline's checkpoints, a git
repository of the bridge's own (its own ``GIT_DIR`` and index, under the data dir) snapshots
the folder: ``git add`` + ``write-tree`` gives a tree id, and two tree ids give the files
that changed and both versions of each. The folder's ``.gitignore`` rules apply, so ignored
build output costs nothing (and is not tracked).

Work follows the changes, not the folder (DESIGN §3 "Disk tracking at any size"): a file
watcher's dirty set (``watch``) names the paths a snapshot adds, so an unchanged folder costs
no git at all; where the watcher cannot vouch for its set, the snapshot scans the whole folder
(``git add -A``, cheap thanks to the index's stat cache). A git checkout's first snapshot
borrows the user's objects and index (``borrow``); the user's repository is never written.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from acp_lsp.disk.borrow import borrow_checkout
from acp_lsp.disk.watch import DirtyWatch, WatchUnavailable

log = logging.getLogger(__name__)

GIT_TIMEOUT_S = 120.0
FIRST_SCAN_TIMEOUT_S = 900.0
"""A folder's first whole scan hashes every file (a million-file folder: about 3 minutes)."""
MAX_SETTLED = 5_000
"""The most paths changed during a checkout's first scan that are set back to the index."""
MAX_FILE_BYTES = 8 * 1024 * 1024
"""Untracked files larger than this when a folder is first tracked are left out of its
snapshots (copying them into the shadow store would cost disk)."""


_CONFIG = """[core]
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


class ShadowError(Exception):
    """git is missing, or a snapshot failed; the message says which and why."""


@dataclass(frozen=True)
class FileDelta:
    """One file that differs between two snapshots. ``before``/``after`` are blob ids; None
    means the file did not exist on that side."""

    path: str
    """Absolute path of the file."""
    before: str | None
    after: str | None


def blob_id(data: bytes) -> str:
    """The id git gives ``data`` as a blob (to recognise a known text without asking git)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM first: git then removes its index.lock, which a SIGKILL would leave behind
    (and every later snapshot of the folder would fail on it)."""
    proc.terminate()
    try:
        await asyncio.wait_for(proc.wait(), 2.0)
    except TimeoutError:
        proc.kill()
        await proc.wait()


def _drop_stale_lock(lock: Path) -> None:
    """An index.lock older than any git run of ours: left by a server killed mid-snapshot."""
    try:
        if time.time() - lock.stat().st_mtime > FIRST_SCAN_TIMEOUT_S:
            lock.unlink()
            log.info("removed a stale %s", lock)
    except OSError:
        pass


def _nul(paths: set[str]) -> bytes:
    return b"".join(os.fsencode(path) + b"\0" for path in sorted(paths))


def _glob_escape(name: str) -> str:
    """A path as a literal gitignore pattern."""
    return "".join("\\" + c if c in "*?[\\!# " else c for c in name)


def shadow_dir(data_dir: Path, root: str) -> Path:
    """Where the shadow repository of ``root`` lives: one per real folder path."""
    key = hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:20]
    return data_dir / "shadow" / key


class ShadowRepo:
    """The snapshots of one folder. Calls are serialised: git's index takes one writer."""

    def __init__(self, root: str, git_dir: Path, *, watch: bool = True) -> None:
        self.root = os.path.realpath(root)
        self.git_dir = git_dir
        self._lock = asyncio.Lock()
        self._ready = False
        self._refused: str | None = None  # why this folder is not tracked, once known
        self._watch: DirtyWatch | None = None
        self._watching = watch
        self.watch_started = asyncio.Event()
        """Set once the watcher runs (or is known not to): a change made before then may be
        taken for part of the folder's first "before"."""
        self._tree: str | None = None  # the index's tree, as the last snapshot wrote it
        self.watch_note: str | None = None
        """Why no watcher covers this folder (every snapshot scans it), once known."""
        self.borrowed: str | None = None
        """The user's git dir whose objects and index started this repository, if any."""

    async def _git(
        self,
        *args: str,
        stdin: bytes | None = None,
        ok: tuple[int, ...] = (0,),
        index_file: str | None = None,
        timeout: float = GIT_TIMEOUT_S,
    ) -> bytes:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.git_dir),  # no user or system config changes what is snapshotted
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": self.root,
            "LC_ALL": "C",
            "GIT_LITERAL_PATHSPECS": "1",  # a file named "*.py" is that file
        }
        if index_file is not None:  # read another index (the user's) than the shadow one
            env["GIT_INDEX_FILE"] = index_file
        if "SYSTEMROOT" in os.environ:  # Windows: git's own DLLs and sockets need it
            env["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
        try:
            proc = await asyncio.create_subprocess_exec(
                "git",
                *args,
                cwd=self.root,
                env=env,
                stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise ShadowError(
                "git is not installed: changes made on disk cannot be tracked"
            ) from None
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin), timeout)
        except (TimeoutError, asyncio.CancelledError) as exc:
            await _stop(proc)
            if isinstance(exc, TimeoutError):
                raise ShadowError(f"git {args[0]} took over {timeout:g} s in {self.root}") from None
            raise
        if proc.returncode not in ok:
            message = err.decode(errors="replace").strip().splitlines()
            raise ShadowError(f"git {args[0]} failed in {self.root}: {' '.join(message[-2:])}")
        return out

    async def _prepare(self) -> None:
        if self._ready:
            return
        if self._refused is not None:
            raise ShadowError(self._refused)
        home = os.path.realpath(os.path.expanduser("~"))
        drive = os.path.dirname(self.root) == self.root  # "/", or "C:\\" on Windows
        if drive or self.root == home:
            self._refused = f"{self.root} is the whole {'disk' if drive else 'home folder'}"
            self.watch_started.set()  # nothing to wait for
            raise ShadowError(self._refused)
        if self._watch is None and self.watch_note is None:
            self._start_watch()  # first: a change made while the rest is set up is seen
        if not (self.git_dir / "HEAD").is_file():
            self.git_dir.mkdir(parents=True, exist_ok=True)
            await self._git("init", "--quiet")
            # one write instead of a `git config` process per key
            with (self.git_dir / "config").open("a", encoding="utf-8") as fh:
                fh.write(_CONFIG)
            (self.git_dir / "info").mkdir(exist_ok=True)
            # nested repositories' metadata is theirs, never snapshotted
            (self.git_dir / "info" / "exclude").write_text(".git\n", encoding="utf-8")
            self.borrowed = await borrow_checkout(self.root, self.git_dir)
            await self._exclude_large()
        else:
            _drop_stale_lock(self.git_dir / "index.lock")
            # texts of earlier sessions' changes: kept a day (another server may use them)
            await self._git("prune", "--expire=1.day.ago")
        self._exclude_own_data()
        self._ready = True

    def _start_watch(self) -> None:
        """Before the first scan: a change made during it is in the next dirty set."""
        self.watch_started.set()  # (once this returns: watching, or known not to)
        if not self._watching:
            self.watch_note = "file watching is off (watchFiles = false)"
            return
        try:
            self._watch = DirtyWatch(self.root, skip=[str(self.git_dir.parent.parent)])
        except WatchUnavailable as exc:
            self.watch_note = str(exc)
        except Exception as exc:  # an inotify call the kernel refuses: scans still work
            log.exception("no file watcher for %s", self.root)
            self.watch_note = f"no file watcher for {self.root}: {exc}"

    @property
    def watching(self) -> bool:
        return self._watch is not None

    def close(self) -> None:
        """Stop watching (the folder's last session ended)."""
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        self._tree = None
        self._ready = False
        self.watch_note = None
        self.watch_started.clear()

    def _exclude_own_data(self) -> None:
        """The bridge's data dir (this repository, the history) inside the folder is never
        snapshotted: a restore would otherwise rewrite the repository it reads from."""
        data = os.path.realpath(self.git_dir.parent.parent)
        if not data.startswith(self.root + os.sep):
            return
        line = "/" + _glob_escape(os.path.relpath(data, self.root)) + "/\n"
        exclude = self.git_dir / "info" / "exclude"
        exclude.parent.mkdir(exist_ok=True)
        known = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        if line not in known:
            with exclude.open("a", encoding="utf-8") as fh:
                fh.write(line)

    async def _exclude_large(self) -> None:
        """Before the first snapshot: leave out untracked files too large to merge or review."""
        listed = await self._git("ls-files", "--others", "--exclude-standard", "-z")
        names = [name for name in listed.split(b"\0") if name]
        large: list[str] = []
        for name in names:
            try:
                if os.stat(os.path.join(self.root, os.fsdecode(name))).st_size > MAX_FILE_BYTES:
                    large.append("/" + _glob_escape(os.fsdecode(name)))
            except OSError:
                continue
        if large:
            with (self.git_dir / "info" / "exclude").open("a", encoding="utf-8") as fh:
                fh.write("\n".join(large) + "\n")

    async def snapshot(self) -> str:
        """The id of a tree holding every (not ignored) file of the folder as it is now."""
        async with self._lock:
            await self._prepare()
            dirty = self._watch.take() if self._watch is not None else None
            if dirty is not None and self._tree is not None:
                if not dirty:
                    return self._tree  # nothing changed: no git at all
                try:
                    await self._add_paths(dirty)
                except ShadowError as exc:  # a path that changed again meanwhile: scan
                    log.info("dirty paths of %s not added, scanning: %s", self.root, exc)
                    await self._add_all()
            else:
                first = self._tree is None
                await self._add_all()
                if first and self.borrowed is not None and self._watch is not None:
                    await self._before_the_first_scan()
            self._tree = (await self._git("write-tree")).decode().strip()
            return self._tree

    async def _before_the_first_scan(self) -> None:
        """Files that changed while a checkout's first scan ran (an agent already at work) go
        back, in this first tree, to what the user's index holds (for a clean file, its blob
        at HEAD), and stay dirty: the next snapshot shows their change as a change."""
        assert self._watch is not None and self.borrowed is not None
        during = self._watch.take()
        if not during or len(during) > MAX_SETTLED:
            return  # none, an overflow, or a flood (a whole install): not told apart
        self._watch.mark(during)
        index = os.path.join(self.borrowed, "index")
        listed = await self._git("ls-files", "-s", "-z", "--", *sorted(during), index_file=index)
        entries = [e for e in listed.split(b"\0") if e]
        known = {os.fsdecode(e.split(b"\t", 1)[1]) for e in entries}
        if new := during - known:  # not in the user's index: not there before
            await self._git("rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", *sorted(new))
        if entries:
            await self._git("update-index", "-z", "--index-info", stdin=b"\0".join(entries) + b"\0")

    async def _add_all(self) -> None:
        # --ignore-errors: a file that vanishes or cannot be read mid-scan is skipped
        timeout = FIRST_SCAN_TIMEOUT_S if self._tree is None else GIT_TIMEOUT_S
        await self._git("add", "--all", "--ignore-errors", "--", ".", timeout=timeout)

    async def _add_paths(self, dirty: set[str]) -> None:
        """Bring the index up to date for ``dirty`` (paths relative to the folder) alone."""
        present = {p for p in dirty if os.path.lexists(os.path.join(self.root, p))}
        from_file = ("--pathspec-from-file=-", "--pathspec-file-nul")
        if gone := dirty - present:  # a deleted file or folder leaves the index
            await self._git(
                "rm", "-r", "-q", "--cached", "--ignore-unmatch", *from_file, stdin=_nul(gone)
            )
        if present:
            # an ignored path named to `git add` is an error; it is simply not tracked
            out = await self._git("check-ignore", "-z", "--stdin", stdin=_nul(present), ok=(0, 1))
            present -= {os.fsdecode(name) for name in out.split(b"\0") if name}
        if present:
            await self._git("add", "--all", "--ignore-errors", *from_file, stdin=_nul(present))

    async def deltas(self, old: str, new: str) -> list[FileDelta]:
        """The files that differ between two snapshots (no rename detection: a move is a
        deletion and a creation, which is how it is undone too)."""
        if old == new:
            return []
        out = await self._git("diff-tree", "-r", "-z", "--no-renames", "--raw", old, new)
        fields = out.split(b"\0")
        deltas: list[FileDelta] = []
        for header, name in zip(fields[0::2], fields[1::2], strict=False):
            if not header.startswith(b":"):
                continue
            old_mode, new_mode, old_id, new_id, _status = header[1:].decode().split(" ")
            if "160000" in (old_mode, new_mode):  # a nested repository: not ours to track
                continue
            path = os.path.join(self.root, os.fsdecode(name))
            before = None if set(old_id) == {"0"} else old_id
            after = None if set(new_id) == {"0"} else new_id
            deltas.append(FileDelta(path, before, after))
        return deltas

    async def blob(self, blob: str) -> bytes:
        return await self._git("cat-file", "blob", blob)

    async def keep(self, refs: dict[str, str]) -> None:
        """Point refs (``refs/checkpoints/...``) at trees, so that pruning keeps them."""
        async with self._lock:
            await self._prepare()
            lines = "".join(f"update {ref} {tree}\n" for ref, tree in refs.items())
            await self._git("update-ref", "--stdin", stdin=lines.encode())

    async def drop(self, prefix: str) -> None:
        """Remove the refs under ``prefix`` (a deleted session's checkpoints)."""
        async with self._lock:
            await self._prepare()
            out = await self._git("for-each-ref", "--format=%(refname)", prefix)
            lines = "".join(f"delete {ref}\n" for ref in out.decode().split())
            if lines:
                await self._git("update-ref", "--stdin", stdin=lines.encode())
