"""Which files of a tracked folder changed since the last snapshot: a dirty set kept by a file
watcher (DESIGN §3 "Disk tracking at any size").

With it a snapshot hashes only the dirty paths, and an unchanged folder costs nothing. Linux
inotify through ``inotify_simple`` (a thin, kept wrapper that hands over every raw event, the
queue overflow included; watchfiles and watchdog drop the overflow silently, and a dropped
event is a change never shown). inotify queues an event inside the system call that changed
the file, so draining the queue when a snapshot starts sees every change made before it.

The watcher answers "I don't know" (``take`` returns None) whenever it cannot vouch for the
set: the queue overflowed, or a watch could not be added. The snapshot then scans the folder
as before. Where no watcher can cover a folder (another platform, a network file system, too
few inotify watches) ``start`` says why and every snapshot scans.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sys
from collections.abc import Iterable
from typing import Any

log = logging.getLogger(__name__)

NETWORK_FS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "lustre"}
)
"""Changes made by other machines never reach this machine's inotify."""


def _fs_type(path: str) -> str | None:
    """The file system type of the mount holding ``path`` (from /proc/self/mountinfo)."""
    best, kind = "", None
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                left, _, right = line.partition(" - ")
                fields = left.split()
                if len(fields) < 5 or not right:
                    continue
                mount = fields[4].replace("\\040", " ")
                inside = path == mount or path.startswith(mount.rstrip("/") + "/")
                if inside and len(mount) >= len(best):
                    best, kind = mount, right.split()[0]
    except OSError:
        return None
    return kind


def _join(folder: str, name: str) -> str:
    return os.path.join(folder, name) if folder else name


class WatchUnavailable(Exception):
    """No watcher covers this folder; the message says why (shown to the user once)."""


def _refuse_unwatchable(root: str) -> None:
    if sys.platform != "linux":
        raise WatchUnavailable(f"no file watcher on {sys.platform} yet: every scan reads it")
    kind = _fs_type(root) or ""
    if kind in NETWORK_FS or kind.startswith("fuse.sshfs"):
        raise WatchUnavailable(f"{root} is on a network file system ({kind})")


class DirtyWatch:
    """The paths (relative to ``root``) changed since the last ``take``."""

    def __init__(self, root: str, skip: Iterable[str] = ()) -> None:
        self.root = root
        self._skip = {os.path.realpath(s) for s in skip}
        self._dirs: dict[int, str] = {}  # watch descriptor -> folder (relative, "" = root)
        self._wds: dict[str, int] = {}
        self._dirty: set[str] = set()
        self._born: set[str] = set()  # paths whose first change since the take was a creation
        self.created: set[str] = set()  # of the last take: the paths it found plainly created
        self._lost = False  # an overflow or a watch not added: the next take answers None
        _refuse_unwatchable(root)
        from inotify_simple import INotify

        self._notify: Any = INotify(nonblocking=True)
        try:
            self._add_tree("")
        except WatchUnavailable:
            self._notify.close()
            raise

    @property
    def _mask(self) -> int:
        from inotify_simple import flags

        return int(
            flags.CLOSE_WRITE
            | flags.MODIFY
            | flags.ATTRIB
            | flags.CREATE
            | flags.DELETE
            | flags.MOVED_FROM
            | flags.MOVED_TO
            | flags.DELETE_SELF
            | flags.MOVE_SELF
            | flags.ONLYDIR
            | flags.DONT_FOLLOW
        )

    def _add_tree(self, rel: str) -> None:
        """Watch folder ``rel`` and every folder below it (not .git, not the skipped ones)."""
        stack = [rel]
        while stack:
            current = stack.pop()
            full = os.path.join(self.root, current) if current else self.root
            if full in self._skip:
                continue
            try:
                wd = int(self._notify.add_watch(full, self._mask))
            except OSError as exc:
                if exc.errno == errno.ENOSPC:
                    raise WatchUnavailable(
                        f"{self.root} has more folders than inotify may watch "
                        "(raise fs.inotify.max_user_watches)"
                    ) from None
                continue  # gone or unreadable meanwhile: its parent's event covers it
            self._dirs[wd] = current
            self._wds[current] = wd
            try:
                with os.scandir(full) as entries:
                    for entry in entries:
                        if entry.name != ".git" and entry.is_dir(follow_symlinks=False):
                            stack.append(
                                os.path.join(current, entry.name) if current else entry.name
                            )
            except OSError:
                continue

    def close(self) -> None:
        self._notify.close()

    # -- reading -----------------------------------------------------------------------------
    def take(self) -> set[str] | None:
        """The dirty paths since the last take (then forgotten), or None when some change may
        have been missed and the folder must be scanned."""
        self.drain()
        dirty, lost, self.created = self._dirty, self._lost, self._born
        self._dirty, self._lost, self._born = set(), False, set()
        return None if lost else dirty

    def mark(self, paths: set[str]) -> None:
        """Count ``paths`` as changed again at the next take."""
        self._dirty |= paths

    def drain(self) -> None:
        """Read every queued event into the dirty set."""
        from inotify_simple import flags

        notify = self._notify
        while True:
            try:
                events = notify.read(timeout=0)
            except BlockingIOError:
                return
            if not events:
                return
            for event in events:
                if event.mask & flags.Q_OVERFLOW:
                    log.info("inotify queue overflowed in %s: scanning it", self.root)
                    self._lost = True
                    continue
                folder = self._dirs.get(event.wd)
                if folder is None:
                    continue
                if event.mask & flags.IGNORED:
                    self._forget(folder, event.wd)
                    continue
                if event.mask & (flags.DELETE_SELF | flags.MOVE_SELF):
                    if folder:
                        self._dirty.add(folder)
                    continue
                name = event.name
                path = _join(folder, name)
                if not name or name == ".git":
                    continue
                if event.mask & flags.ISDIR and event.mask & flags.ATTRIB:
                    continue  # a folder's own mode or times: git keeps none of them
                # made, not renamed into place (sed -i, an editor's save): not there before,
                # unless it had changed before (deleted, then made)
                if event.mask & flags.CREATE and path not in self._dirty:
                    self._born.add(path)
                self._dirty.add(path)
                if event.mask & flags.ISDIR:
                    if event.mask & flags.MOVED_FROM:
                        self._unwatch_below(path)
                    elif event.mask & (flags.CREATE | flags.MOVED_TO):
                        try:
                            self._add_tree(path)  # before the snapshot reads the folder
                        except WatchUnavailable as exc:
                            log.info("%s", exc)
                            self._lost = True

    def _forget(self, folder: str, wd: int) -> None:
        self._dirs.pop(wd, None)
        if self._wds.get(folder) == wd:
            del self._wds[folder]

    def _unwatch_below(self, path: str) -> None:
        """A folder moved away: its watches (which follow it) no longer name our paths."""
        prefix = path + os.sep
        for folder in [f for f in self._wds if f == path or f.startswith(prefix)]:
            wd = self._wds.pop(folder)
            self._dirs.pop(wd, None)
            with contextlib.suppress(OSError):
                self._notify.rm_watch(wd)

    @property
    def watched(self) -> int:
        """How many folders are watched (one inotify watch each)."""
        return len(self._dirs)
