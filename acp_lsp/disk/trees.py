"""A snapshot's tree from the last tree and the changed paths alone (DESIGN §3 "Disk tracking
at any size").

``git add`` + ``write-tree`` read and rewrite the whole index, every entry of the folder, even
for one changed file: 2-5 µs per file of the folder, seconds in a monorepo. Here the changed
files' bytes are read once (``read_changes``, before the prompt goes to the agent when it is
on the prompt's path), stored as blobs, and only the trees on the way from the folder's top to
each change are rebuilt; every other tree is reused by id. The cost follows the change.

Blobs and trees are written as loose objects in the format git reads (zlib of "<kind>
<size>\\0<data>"); the trees read back come from ``git cat-file --batch`` (they may live in the
user's packs, borrowed as an alternate) and are cached by id.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import zlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

TREE = b"40000"
GITLINK = b"160000"
SYMLINK = "120000"
MAX_CACHED_ENTRIES = 50_000
"""Tree entries kept in memory between snapshots (a few MB): the trees of folders that change."""

Entries = dict[bytes, tuple[bytes, bytes]]
"""A tree: name -> (mode, binary object id)."""


@dataclass
class Changes:
    """What the changed paths (relative to the folder) held when they were read."""

    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    """Path -> (git mode, bytes) of each changed file or symbolic link."""
    gone: set[str] = field(default_factory=set)
    """Paths that no longer exist (a file or a whole folder)."""
    replaced: set[str] = field(default_factory=set)
    """Folders read whole (made or moved in): what they held before is dropped."""
    tree: str | None = None
    """The snapshot's tree, once stored."""
    failed: str | None = None
    """Why it could not be stored (the snapshot then scanned the folder instead)."""

    @property
    def size(self) -> int:
        return sum(len(data) for _, data in self.files.values())


def _in_nested_repo(root: str, rel: str, seen: dict[str, bool]) -> bool:
    """Whether a folder above ``rel`` (inside ``root``) is another git repository: its files
    are that repository's, never snapshotted (``git add`` refuses them too)."""
    parent = os.path.dirname(rel)
    while parent:
        found = seen.get(parent)
        if found is None:
            found = seen[parent] = os.path.lexists(os.path.join(root, parent, ".git"))
        if found:
            return True
        parent = os.path.dirname(parent)
    return False


def _read_file(full: str, st: os.stat_result) -> tuple[str, bytes]:
    if stat.S_ISLNK(st.st_mode):
        return SYMLINK, os.fsencode(os.readlink(full))
    with open(full, "rb") as fh:
        data = fh.read()
    return ("100755" if st.st_mode & stat.S_IXUSR else "100644"), data


def read_changes(
    root: str, dirty: set[str], *, max_paths: int, max_bytes: int, max_file: int, walk: bool
) -> Changes | None:
    """The bytes of the ``dirty`` paths now, or None when they are too many or too large to
    read here (or include a folder and ``walk`` is off): the caller lets git scan them."""
    if len(dirty) > max_paths:
        return None
    changes = Changes()
    nested: dict[str, bool] = {}
    total = 0
    count = 0
    for rel in sorted(dirty):
        if _in_nested_repo(root, rel, nested):
            continue
        full = os.path.join(root, rel)
        try:
            st = os.lstat(full)
            if stat.S_ISDIR(st.st_mode):
                if not walk:
                    return None
                changes.replaced.add(rel)
                if os.path.lexists(os.path.join(full, ".git")):
                    continue  # another repository moved in: not ours
                for folder, dirs, names in os.walk(full):
                    # a link to a folder is a link (os.walk lists it with the folders)
                    names += [d for d in dirs if os.path.islink(os.path.join(folder, d))]
                    dirs[:] = [
                        d
                        for d in dirs
                        if d != ".git"
                        and d not in names
                        and not os.path.lexists(os.path.join(folder, d, ".git"))
                    ]
                    for name in names:
                        path = os.path.join(folder, name)
                        inner = os.lstat(path)
                        if not (stat.S_ISREG(inner.st_mode) or stat.S_ISLNK(inner.st_mode)):
                            continue
                        count += 1
                        total += inner.st_size
                        if count > max_paths or total > max_bytes or inner.st_size > max_file:
                            return None
                        changes.files[os.path.relpath(path, root)] = _read_file(path, inner)
                continue
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                changes.gone.add(rel)  # a socket or a pipe: git keeps none
                continue
            count += 1
            total += st.st_size
            if count > max_paths or total > max_bytes or st.st_size > max_file:
                return None
            changes.files[rel] = _read_file(full, st)
        except (FileNotFoundError, NotADirectoryError):
            changes.gone.add(rel)
        except OSError:
            return None  # unreadable: git's scan skips it the way a whole scan does
    return changes


def _object(kind: bytes, data: bytes) -> tuple[bytes, bytes]:
    """The object as git stores it (before zlib) and its binary id."""
    body = kind + b" %d\0" % len(data) + data
    return body, hashlib.sha1(body, usedforsecurity=False).digest()


def blob_id(data: bytes) -> str:
    """The id git gives ``data`` as a blob (to recognise a known text without asking git)."""
    return _object(b"blob", data)[1].hex()


def write_object(git_dir: Path, kind: bytes, data: bytes) -> bytes:
    """Store ``data`` as a loose object of ``kind``; its binary id."""
    body, oid = _object(kind, data)
    hexid = oid.hex()
    path = git_dir / "objects" / hexid[:2] / hexid[2:]
    if not path.exists():
        path.parent.mkdir(exist_ok=True)
        temp = path.with_name(f"tmp_obj_{os.getpid()}_{hexid[2:10]}")
        temp.write_bytes(zlib.compress(body, 1))
        with contextlib.suppress(OSError):
            temp.chmod(0o444)
        os.replace(temp, path)
    return oid


def _sort_key(item: tuple[bytes, tuple[bytes, bytes]]) -> bytes:
    name, (mode, _) = item
    return name + b"/" if mode == TREE else name  # git's order: a folder sorts as "name/"


def encode_tree(entries: Entries) -> bytes:
    return b"".join(
        mode + b" " + name + b"\0" + oid
        for name, (mode, oid) in sorted(entries.items(), key=_sort_key)
    )


def decode_tree(data: bytes) -> Entries:
    entries: Entries = {}
    at = 0
    while at < len(data):
        space = data.index(b" ", at)
        nul = data.index(b"\0", space)
        entries[data[space + 1 : nul]] = (data[at:space], data[nul + 1 : nul + 21])
        at = nul + 21
    return entries


class _Node:
    """The changes under one folder: its entries to set or drop, and its changed subfolders."""

    __slots__ = ("children", "files", "gone", "replaced")

    def __init__(self) -> None:
        self.children: dict[bytes, _Node] = {}
        self.files: dict[bytes, tuple[bytes, bytes, bool]] = {}  # name -> (mode, id, ignored)
        self.gone: set[bytes] = set()
        self.replaced = False

    def at(self, parts: list[bytes]) -> _Node:
        node = self
        for part in parts:
            node = node.children.setdefault(part, _Node())
        return node


ReadTrees = Callable[[list[str]], Awaitable[list[tuple[str, bytes, bytes] | None]]]
"""Given object names (``<tree>:<path>``), each one's kind, binary id and raw contents, or
None where there is none (``git cat-file --batch``)."""


class TreeBuilder:
    """Writes new trees from an old one and ``Changes``; remembers the trees it read."""

    def __init__(self, git_dir: Path, read: ReadTrees) -> None:
        self._git_dir = git_dir
        self._read = read
        self._cache: OrderedDict[bytes, Entries] = OrderedDict()
        self._cached_entries = 0
        self._found: dict[int, bytes] = {}  # during one apply: id(node) -> its old tree

    def clear(self) -> None:
        self._cache.clear()
        self._cached_entries = 0

    async def apply(self, base: str, changes: Changes, ignored: set[str]) -> str:
        """The id of ``base`` with ``changes`` made; ``ignored`` files are updated only where
        the old tree already holds them (a tracked file stays tracked, as with ``git add``)."""
        top = _Node()
        for rel in changes.gone:
            *parents, name = os.fsencode(rel).split(b"/")
            top.at(parents).gone.add(name)
        for rel in changes.replaced:
            top.at(os.fsencode(rel).split(b"/")).replaced = True
        for rel, (mode, data) in changes.files.items():
            *parents, name = os.fsencode(rel).split(b"/")
            oid = write_object(self._git_dir, b"blob", data)
            top.at(parents).files[name] = (mode.encode(), oid, rel in ignored)
        self._found = {}
        await self._load(bytes.fromhex(base), top)
        new = self._build(top, root=True)
        self._found = {}
        assert new is not None
        return new.hex()

    async def _load(self, base: bytes, top: _Node) -> None:
        """Read the old trees on the way to every change that are not cached: one
        ``cat-file`` for all of them, by path (``<tree>:<folder>``), whatever their depth."""
        wanted: list[tuple[str, _Node]] = []
        ids: dict[int, bytes] = {}  # id(node) -> its old tree, where known

        def walk(node: _Node, path: bytes, oid: bytes | None, known: bool) -> None:
            if node.replaced:
                return
            if known:
                if oid is None:
                    return  # no such folder before: nothing to read below
                ids[id(node)] = oid
            entries = self._cache.get(oid) if known and oid is not None else None
            if entries is None:
                spec = base.hex() + (":" + os.fsdecode(path) if path else "")
                wanted.append((spec, node))
            for name, child in node.children.items():
                if entries is not None:
                    found = entries.get(name)
                    sub = found[1] if found is not None and found[0] == TREE else None
                    walk(child, path + b"/" + name if path else name, sub, True)
                else:
                    walk(child, path + b"/" + name if path else name, None, False)

        walk(top, b"", base, True)
        self._found.update(ids)
        if not wanted:
            return
        read = await self._read([spec for spec, _ in wanted])
        for (_, node), found in zip(wanted, read, strict=True):
            if found is not None:
                kind, oid, data = found
                if kind == "tree":
                    self._remember(oid, decode_tree(data))
                    self._found[id(node)] = oid

    def _remember(self, oid: bytes, entries: Entries) -> None:
        self._cache[oid] = entries
        self._cached_entries += len(entries) + 1
        while self._cached_entries > MAX_CACHED_ENTRIES and len(self._cache) > 1:
            _, dropped = self._cache.popitem(last=False)
            self._cached_entries -= len(dropped) + 1

    def _build(self, node: _Node, *, root: bool = False) -> bytes | None:
        """The new id of a folder (None: it holds nothing now, and git keeps no empty folder
        but the top one)."""
        entries: Entries = {}
        old = self._found.get(id(node))
        if old is not None and not node.replaced:
            cached = self._cache.get(old)
            if cached is None:
                raise KeyError(f"tree {old.hex()} not read")
            self._cache.move_to_end(old)
            entries = dict(cached)
        for name in node.gone:
            entries.pop(name, None)
        for name, child in node.children.items():
            found = entries.get(name)
            if found is not None and found[0] == GITLINK:
                continue  # another repository's folder
            if found is None or found[0] != TREE:
                child.replaced = True  # nothing of the old tree below (or not a folder)
            new = self._build(child)
            if new is None:
                if found is not None and found[0] == TREE:
                    del entries[name]
            else:
                entries[name] = (TREE, new)
        for name, (mode, oid, ignored) in node.files.items():
            found = entries.get(name)
            if ignored and (found is None or found[0] == TREE):
                continue  # ignored and not tracked: stays out, as with `git add --all`
            entries[name] = (mode, oid)
        if not entries and not root:
            return None
        oid = write_object(self._git_dir, b"tree", encode_tree(entries))
        self._remember(oid, entries)
        return oid


def parse_batch(out: bytes) -> list[tuple[str, bytes, bytes] | None]:
    """A ``git cat-file --batch`` answer: (kind, binary id, contents) per object asked for, in
    order; None for one that is missing."""
    found: list[tuple[str, bytes, bytes] | None] = []
    at = 0
    while at < len(out):
        end = out.index(b"\n", at)
        header = out[at:end].rsplit(b" ", 2)
        at = end + 1
        if len(header) != 3 or header[1] not in (b"tree", b"blob", b"commit", b"tag"):
            found.append(None)  # "<name> missing" (or ambiguous)
            continue
        size = int(header[2])
        found.append((header[1].decode(), bytes.fromhex(header[0].decode()), out[at : at + size]))
        at += size + 1
    return found
