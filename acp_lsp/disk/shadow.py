"""Snapshots of a folder's files in a shadow git repository (DESIGN §3 "Disk and buffers never
diverge").

Agents change files on disk by routes the bridge does not see (their own writes, shell
commands, terminals); to show and undo those changes byte for byte it needs each file's text
from *before* the change. Like Cline's checkpoints, a git repository of the bridge's own (its
own ``GIT_DIR`` and index, under the data dir) snapshots the folder: a tree id per snapshot,
and two tree ids give the files that changed and both versions of each. The folder's
``.gitignore`` rules apply: ignored build output costs nothing (and is not tracked).

Work follows the changes, not the folder (DESIGN §3 "Disk tracking at any size"): a file
watcher's dirty set (``watch``) names the paths a snapshot adds, so an unchanged folder costs
no git at all, and a changed one costs its own bytes and the trees above it (``trees``), not a
pass over the index; where the watcher cannot vouch for its set, the snapshot scans the whole
folder (``git add -A``, cheap thanks to the index's stat cache). The changed files can be read
before the prompt goes to the agent and stored after (``capture``), so nothing waits on git.
A git checkout's first snapshot borrows the user's objects and index (``borrow``); the user's
repository is never written.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from acp_lsp.disk import layout
from acp_lsp.disk.borrow import back_to_the_users_index, borrow_checkout, has_index
from acp_lsp.disk.git import GIT_TIMEOUT_S, drop_stale_lock, nul, run_git
from acp_lsp.disk.git import ShadowError as ShadowError  # what the snapshots raise
from acp_lsp.disk.layout import shadow_dir as shadow_dir  # where they live
from acp_lsp.disk.trees import Changes, TreeBuilder, parse_batch, read_changes
from acp_lsp.disk.watch import DirtyWatch, WatchUnavailable

log = logging.getLogger(__name__)

FIRST_SCAN_TIMEOUT_S = 900.0
"""A folder's first whole scan hashes every file (a million-file folder: about 3 minutes)."""
MAX_SETTLED = 5_000
"""The most paths changed during a checkout's first scan that are set back to the index."""
MAX_FILE_BYTES = 8 * 1024 * 1024
"""Untracked files larger than this when a folder is first tracked are left out of its
snapshots (copying them into the shadow store would cost disk)."""
MAX_READ_PATHS = 5_000
MAX_READ_BYTES = 64 * 1024 * 1024
"""Changes read by the bridge itself at most; more (a checkout of another branch, an install)
are handed to ``git add`` through the index."""
CAPTURE_PATHS = 500
CAPTURE_BYTES = 16 * 1024 * 1024
"""Changes read at most on the prompt's path (a user's saves between turns); more, or a new
folder, and the prompt waits for the snapshot instead."""


@dataclass(frozen=True)
class FileDelta:
    """One file that differs between two snapshots. ``before``/``after`` are blob ids; None
    means the file did not exist on that side."""

    path: str
    """Absolute path of the file."""
    before: str | None
    after: str | None


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
        self._tree: str | None = None  # the last snapshot's tree
        self._index_tree: str | None = None  # the tree the index held when last written
        self._trees = TreeBuilder(git_dir, self._read_trees)
        self._captured: list[Changes] = []  # read before a prompt, not stored yet
        self._rescan = False  # the watcher lost changes a capture took: scan next time
        self.watch_note: str | None = None
        """Why no watcher covers this folder (every snapshot scans it), once known."""
        self._checkout = False  # its first scan tells apart what changes during it
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
        return await run_git(
            self.git_dir,
            self.root,
            *args,
            stdin=stdin,
            ok=ok,
            index_file=index_file,
            timeout=timeout,
        )

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
        # a first scan that borrows the user's index tells the agent's changes apart: a prompt
        # during it needs no wait (``capture``); a plain folder's, or a fresh `git init`'s, not
        new = not (self.git_dir / "HEAD").is_file()
        self._checkout = self.borrowed is not None or (new and has_index(self.root))
        if self._watch is None and self.watch_note is None:
            self._start_watch()  # first: a change made while the rest is set up is seen
        if new:
            self.git_dir.mkdir(parents=True, exist_ok=True)
            await self._git("init", "--quiet")
            layout.write_new(self.git_dir)
            self.borrowed = await borrow_checkout(self.root, self.git_dir)
            self._checkout = self.borrowed is not None  # (a capture meanwhile trusted the guess)
            await self._exclude_large()
        else:
            drop_stale_lock(self.git_dir / "index.lock", FIRST_SCAN_TIMEOUT_S)
            # texts of earlier sessions' changes: kept a day (another server may use them)
            await self._git("prune", "--expire=1.day.ago")
        layout.exclude_own_data(self.git_dir, self.root)
        layout.write_attributes(self.git_dir)
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
    def watching(self) -> int:  # how many folders the watcher covers (0: no watcher)
        return self._watch.watched if self._watch is not None else 0

    def close(self) -> None:
        """Stop watching (the folder's last session ended)."""
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        self._tree = self._index_tree = None
        self._trees.clear()
        self._fail_captured("the folder is no longer tracked")
        self._ready = False
        self.watch_note = None
        self.watch_started.clear()

    async def _exclude_large(self) -> None:
        """Before the first snapshot: leave out untracked files too large to merge or review."""
        listed = await self._git("ls-files", "--others", "--exclude-standard", "-z")
        layout.exclude(self.git_dir, layout.larger_than(self.root, listed, MAX_FILE_BYTES))

    def capture(self) -> Changes | None:
        """Read what changed since the last snapshot now, to store it later
        (``snapshot(changes)``): the prompt need not wait for git. None when a snapshot must
        run first: none yet, no watcher, one under way, an overflow, a new folder or too much.
        A checkout with an index takes it during its first snapshot too: what changes after it
        (the agent's) goes back to the user's index there and stays dirty (``_first``)."""
        if self._watch is None or self._rescan:
            return None
        if self._lock.locked() if self._tree is not None else not self._checkout:
            return None
        dirty = self._watch.take()
        if dirty is None:
            self._rescan = True
            return None
        changes = read_changes(
            self.root,
            dirty,
            max_paths=CAPTURE_PATHS,
            max_bytes=CAPTURE_BYTES,
            max_file=MAX_FILE_BYTES,
            walk=False,
        )
        if changes is None:
            self._watch.mark(dirty)
        elif not dirty and self._tree is not None:
            changes.tree = self._tree
        else:
            self._captured.append(changes)
        return changes

    async def snapshot(self, changes: Changes | None = None) -> str:
        """The id of a tree holding every (not ignored) file of the folder as it is now, or as
        it was when ``changes`` were captured."""
        if changes is not None and changes.tree is not None:
            return changes.tree
        async with self._lock:
            await self._prepare()
            first = self._tree is None
            if first:  # (what changes during it is left to the next snapshot)
                await self._first()
            await self._store_captured()
            if not first and (changes is None or changes.tree is None):
                await self._dirty_paths()
            tree = self._tree
            assert tree is not None
            if changes is None:
                return tree
            if changes.tree is None:
                changes.tree = tree
            return changes.tree

    async def _first(self) -> None:
        """The first snapshot: a whole scan. What changed since the watcher started is left to
        it (a checkout's changes during it are told apart), and to the captures waiting for it."""
        self._rescan = False
        try:
            await self._add_all()
            if self.borrowed is not None and self._watch is not None:
                await self._before_the_first_scan()
            await self._write_tree()
        except ShadowError:
            self._fail_captured("the first snapshot failed")
            raise

    async def _dirty_paths(self) -> None:  # what the watcher saw change, or a whole scan
        dirty = self._watch.take() if self._watch is not None else None
        if self._rescan:
            dirty, self._rescan = None, False
        if dirty is None:
            await self._add_all()
            await self._write_tree()
        elif dirty:
            await self._changed(dirty)

    async def _store_captured(self) -> None:
        """Store the captures in read order, each on top of the last (once a first tree is)."""
        while self._captured and self._tree is not None:
            changes = self._captured.pop(0)
            try:
                changes.tree = self._tree = await self._store(changes)
            except (ShadowError, KeyError, ValueError, OSError) as exc:
                log.info("changes read in %s not stored, scanning them: %s", self.root, exc)
                changes.failed = str(exc)
                if self._watch is not None:
                    self._watch.mark({*changes.files, *changes.gone, *changes.replaced})

    def _fail_captured(self, why: str) -> None:
        for changes in self._captured:
            changes.failed = why
        self._captured.clear()

    async def _changed(self, dirty: set[str]) -> None:
        """A snapshot of the ``dirty`` paths alone: read and stored by the bridge when few,
        else through the index (``git add`` of those paths)."""
        changes = await asyncio.to_thread(
            read_changes,
            self.root,
            dirty,
            max_paths=MAX_READ_PATHS,
            max_bytes=MAX_READ_BYTES,
            max_file=MAX_FILE_BYTES,
            walk=True,
        )
        if changes is not None:
            try:
                self._tree = await self._store(changes)
                return
            except (ShadowError, KeyError, ValueError, OSError) as exc:
                log.info("changes in %s not stored, scanning them: %s", self.root, exc)
        try:
            await self._add_paths(dirty)
        except ShadowError as exc:  # a path that changed again meanwhile: scan
            log.info("dirty paths of %s not added, scanning: %s", self.root, exc)
            await self._add_all()
        await self._write_tree()

    async def _store(self, changes: Changes) -> str:
        ignored: set[str] = set()
        if changes.files:
            out = await self._git(
                "check-ignore",
                "--no-index",
                "-z",
                "--stdin",
                stdin=nul(set(changes.files)),
                ok=(0, 1),
            )
            ignored = {os.fsdecode(name) for name in out.split(b"\0") if name}
        assert self._tree is not None
        return await self._trees.apply(self._tree, changes, ignored)

    async def _read_trees(self, names: list[str]) -> list[tuple[str, bytes, bytes] | None]:
        """Objects by name (``cat-file --batch``), each as (kind, binary id, contents)."""
        lines = "".join(f"{name}\n" for name in names)
        return parse_batch(await self._git("cat-file", "--batch", stdin=os.fsencode(lines)))

    async def _write_tree(self) -> None:
        self._tree = self._index_tree = (await self._git("write-tree")).decode().strip()

    async def _before_the_first_scan(self) -> None:
        """Files changed while a checkout's first scan ran (an agent at work) go back in this
        tree to the user's index (``back_to_the_users_index``) and stay dirty for the next."""
        assert self._watch is not None and self.borrowed is not None
        during = self._watch.take()
        if not during or len(during) > MAX_SETTLED:
            return  # none, an overflow, or a flood (a whole install): not told apart
        self._watch.mark(during)
        made = self._watch.created  # of this take: within ``during``
        await back_to_the_users_index(self.git_dir, self.root, self.borrowed, during, made)

    async def _add_all(self) -> None:
        # --ignore-errors: a file that vanishes or cannot be read mid-scan is skipped
        timeout = FIRST_SCAN_TIMEOUT_S if self._tree is None else GIT_TIMEOUT_S
        await self._git("add", "--all", "--ignore-errors", "--", ".", timeout=timeout)

    async def _add_paths(self, dirty: set[str]) -> None:
        """Bring the index up to date for ``dirty`` (paths relative to the folder) alone."""
        if self._tree is not None and self._index_tree != self._tree:
            # the snapshots stored since left the index behind: back to the last tree, the
            # stat data of every file whose blob is unchanged kept (one-tree merge)
            await self._git("read-tree", "-m", self._tree)
            self._index_tree = self._tree
        present = {p for p in dirty if os.path.lexists(os.path.join(self.root, p))}
        from_file = ("--pathspec-from-file=-", "--pathspec-file-nul")
        if gone := dirty - present:  # a deleted file or folder leaves the index
            await self._git(
                "rm", "-r", "-q", "--cached", "--ignore-unmatch", *from_file, stdin=nul(gone)
            )
        if present:
            # an ignored path named to `git add` is an error; it is simply not tracked
            out = await self._git("check-ignore", "-z", "--stdin", stdin=nul(present), ok=(0, 1))
            present -= {os.fsdecode(name) for name in out.split(b"\0") if name}
        if present:
            await self._git("add", "--all", "--ignore-errors", *from_file, stdin=nul(present))

    async def deltas(self, old: str, new: str) -> list[FileDelta]:
        """The files that differ between two snapshots (no rename detection: a move is a
        deletion and a creation, which is how it is undone too)."""
        if old == new:
            return []
        # diff-tree reads the index it never uses (24 ms at 300,000 files): an absent one
        nothing = str(self.git_dir / "no-index")
        out = await self._git(
            "diff-tree", "-r", "-z", "--no-renames", "--raw", old, new, index_file=nothing
        )
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

    async def blobs(self, ids: set[str]) -> dict[str, bytes]:
        """Many blobs by id, from one git process (a missing one is left out)."""
        if not ids:
            return {}
        found = await self._read_trees(sorted(ids))
        return {oid.hex(): data for kind, oid, data in filter(None, found) if kind == "blob"}

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
