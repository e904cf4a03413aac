"""A git checkout's first snapshot starts from the user's own repository (DESIGN §3 "Disk
tracking at any size").

Hashing every file of a big checkout into the shadow store takes minutes (Cline, Roo and Kilo
time out there). The user's repository already holds every committed text, and its index
knows which files are unchanged since git last looked (their stat data). So the shadow
repository reads the user's objects as an *alternate* (read-only) and starts from a copy of
the user's index: its first ``git add -A`` hashes only what differs from the index, the cost
of a ``git status``. A clean file's "before" is then its blob at HEAD, in the user's objects.
Nothing in the user's repository is written.

That holds only where the user's blob is the file's bytes. The user's git may convert a file
on its way into the index: ``core.autocrlf`` (Git for Windows sets it: LF in the index, CRLF
on disk) or attributes (``text``, ``eol``, a ``filter`` such as git-lfs's pointer files,
``ident``, ``working-tree-encoding``). The shadow repository stores raw bytes, and an undo
writes back what it stores, so such an entry's stat data must not vouch for the file: with
``core.autocrlf`` the index is not borrowed at all; with attributes, the entries they convert
lose their stat data in the copy and the first ``git add -A`` hashes those files as they are
(or, when they are most of the index, as with ``* text=auto``, no index is borrowed).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shutil
from pathlib import Path

from acp_lsp.disk.git import GIT_TIMEOUT_S, ShadowError, communicate, run_git

log = logging.getLogger(__name__)

_CONVERTING = (b"text", b"eol", b"crlf", b"filter", b"ident", b"working-tree-encoding")
"""The attributes under which a file's blob may differ from its bytes."""
_MENTIONS = re.compile(rb"\b(text|eol|crlf|filter|ident|working-tree-encoding)\b|\[attr\]")
"""What an attributes file outside the tree must contain to convert anything (a macro may)."""


async def _users_git(
    root: str, *args: str, stdin: bytes | None = None, index: Path | None = None
) -> tuple[int, bytes] | None:
    """``git args`` run in ``root`` by the user's own git (their config, attributes and
    safe.directory rules), reading ``index`` instead of theirs if given; its exit code and
    output, or None when git is missing or hangs. Nothing it runs writes."""
    env = {**os.environ, "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0", "GIT_LITERAL_PATHSPECS": "0"}
    if index is not None:
        env["GIT_INDEX_FILE"] = os.path.abspath(index)
    try:
        code, out, _ = await communicate(args, root, env, stdin, GIT_TIMEOUT_S)
    except FileNotFoundError:
        return None
    except TimeoutError:
        log.info("git %s took over %g s in %s", args[0], GIT_TIMEOUT_S, root)
        return None
    return code, out


async def _rev_parse(root: str) -> list[str] | None:
    """Top folder, git dir, common dir and object format of the checkout at ``root``, or None."""
    ran = await _users_git(
        root,
        "rev-parse",
        "--show-toplevel",
        "--absolute-git-dir",
        "--git-common-dir",
        "--show-object-format",
    )
    if ran is None or ran[0] != 0:
        return None
    lines = ran[1].decode(errors="replace").splitlines()
    return lines if len(lines) == 4 else None


async def _sparse(root: str) -> bool:
    """Whether the checkout is sparse: its index then names files that are not on disk
    (skip-worktree), or whole folders (a sparse index), which a shadow index must not."""
    ran = await _users_git(root, "config", "--type=bool", "--get", "core.sparseCheckout")
    return ran is not None and ran[0] == 0 and ran[1].strip() == b"true"


async def _autocrlf(root: str) -> bool:
    """Whether the user's git converts newlines of files no attribute speaks of: its
    effective ``core.autocrlf`` is true or input, or anything but plainly false."""
    ran = await _users_git(root, "config", "--get", "core.autocrlf")
    if ran is None or ran[0] not in (0, 1):
        return True
    # (git's false; an empty value is false too, but a key without "=" true: both print "")
    return ran[0] == 0 and ran[1].strip().lower() not in (b"false", b"no", b"off", b"0")


async def _outside_attributes(root: str, common_dir: Path) -> list[Path]:
    """The attributes files outside the tree that apply to the checkout: its
    ``info/attributes`` and the user's global one. (The system file, which this git does not
    name, is not looked at.)"""
    ran = await _users_git(root, "config", "--path", "--get", "core.attributesFile")
    if ran is not None and ran[0] == 0:
        named = Path(os.fsdecode(ran[1].rstrip(b"\n")))
        own = named if named.is_absolute() else Path(root, named)
    else:
        config = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
        own = Path(config, "git", "attributes")
    return [common_dir / "info" / "attributes", own]


def _mentions_conversion(path: Path) -> bool:
    try:
        return _MENTIONS.search(path.read_bytes()) is not None
    except FileNotFoundError:
        return False
    except OSError:
        return True  # unreadable here, perhaps not to git


def _names_gitattributes(index: Path) -> bool | None:
    """Whether the index file names a .gitattributes (or a file whose name ends so), read
    as bytes; None for an index whose names are compressed (version 4)."""
    data = index.read_bytes()
    if data[:4] != b"DIRC" or int.from_bytes(data[4:8], "big") not in (2, 3):
        return None
    return b".gitattributes\0" in data


async def _may_convert(root: str, index: Path, outside: list[Path]) -> bool:
    """Whether any attributes may apply to the files of ``index``: a .gitattributes in it or
    at the top, or an attributes file ``outside`` the tree that mentions a converting
    attribute. (An untracked .gitattributes further down is not looked for.)"""
    if os.path.lexists(os.path.join(root, ".gitattributes")):
        return True
    if any(_mentions_conversion(path) for path in outside):
        return True
    try:
        named = await asyncio.to_thread(_names_gitattributes, index)
    except OSError:
        return True
    if named is not None:
        return named
    found = await _users_git(root, "ls-files", "-z", "--", ":(glob)**/.gitattributes", index=index)
    return found is None or found[0] != 0 or bool(found[1])


def _converted(checked: bytes) -> set[bytes]:
    """The paths whose files git may convert on their way into the index, from what
    ``check-attr -z --all`` printed for them (a path, an attribute and its value each time)."""
    fields = checked.split(b"\0")
    always: set[bytes] = set()  # a filter, ident, an encoding, text (set, auto or a value)
    implied: set[bytes] = set()  # eol or the old crlf: text, unless text is unset
    off: set[bytes] = set()  # text unset; the old crlf unset (where text is unspecified)
    for path, name, value in zip(fields[0::3], fields[1::3], fields[2::3], strict=False):
        if name == b"text":
            (off if value == b"unset" else always).add(path)
        elif name == b"crlf":
            (off if value == b"unset" else implied).add(path)
        elif name == b"eol":
            implied.add(path)
        elif name in _CONVERTING and value != b"unset":
            always.add(path)
    return always | (implied - off)


async def _converted_entries(root: str, index: Path) -> list[bytes] | None:
    """The entries of ``index`` (as ``ls-files -s -z`` prints them) whose files the user's
    attributes may convert; None when the user's git could not tell, or when most do (a
    ``* text=auto``: the first ``git add -A`` then costs less with no index at all)."""
    listed = await _users_git(root, "ls-files", "-z", index=index)
    if listed is None or listed[0] != 0:
        return None
    # --all: only the attributes a path has (usually few), not a line for each asked
    checked = await _users_git(
        root, "check-attr", "-z", "--all", "--stdin", stdin=listed[1], index=index
    )
    if checked is None or checked[0] != 0:
        return None
    converted = _converted(checked[1])
    if not converted:
        return []
    if 2 * len(converted) > listed[1].count(b"\0"):
        return None
    staged = await _users_git(root, "ls-files", "-s", "-z", index=index)
    if staged is None or staged[0] != 0:
        return None
    return [e for e in staged[1].split(b"\0") if e and e[e.find(b"\t") + 1 :] in converted]


async def _forget_stat_data(root: str, git_dir: Path, entries: list[bytes]) -> bool:
    """Put ``entries`` back into the shadow repository's index without stat data, so that its
    first ``git add -A`` hashes their files (the shadow repository's own git)."""
    try:
        await run_git(
            git_dir, root, "update-index", "-z", "--index-info", stdin=b"\0".join(entries) + b"\0"
        )
    except ShadowError as exc:
        log.info("%s", exc)
        return False
    return True


async def unconverted(root: str, paths: set[str]) -> set[str]:
    """Those of ``paths`` (relative to the checkout at ``root``) whose blob in the user's
    index is their bytes: none under ``core.autocrlf``, none git may convert by attributes."""
    if not paths or await _autocrlf(root):
        return set()
    listed = b"".join(os.fsencode(path) + b"\0" for path in sorted(paths))
    checked = await _users_git(root, "check-attr", "-z", "--all", "--stdin", stdin=listed)
    if checked is None or checked[0] != 0:
        return set()
    return paths - {os.fsdecode(path) for path in _converted(checked[1])}


def _copy(index: Path, copy: Path) -> str | None:
    """Copy the user's index; why not, if it failed."""
    try:
        # copy2 keeps the index's mtime: git's "racily clean" check compares entries to it
        shutil.copy2(index, copy)
    except OSError as exc:
        copy.unlink(missing_ok=True)
        return str(exc)
    return None


async def _borrow_index(root: str, index: Path, common_dir: Path, git_dir: Path) -> None:
    """Copy the user's ``index`` into the shadow repository, but no stat data of an entry
    whose blob may not be its file's bytes."""
    copy = git_dir / "index"
    autocrlf, sparse, outside, failed = await asyncio.gather(
        _autocrlf(root),
        _sparse(root),
        _outside_attributes(root, common_dir),
        asyncio.to_thread(_copy, index, copy),
    )
    if failed is not None:
        log.info("index of %s not borrowed: %s", root, failed)
        return
    if sparse:
        log.info("index of %s not borrowed: a sparse checkout's names absent files", root)
        copy.unlink()
        return
    if autocrlf:
        log.info("index of %s not borrowed: its git converts newlines (core.autocrlf)", root)
        copy.unlink()
        return
    if not await _may_convert(root, copy, outside):
        return
    converted = await _converted_entries(root, copy)
    if converted is None or (converted and not await _forget_stat_data(root, git_dir, converted)):
        log.info("index of %s not borrowed: most of its files are converted, or unknown", root)
        copy.unlink(missing_ok=True)
    elif converted:
        log.info("%d files of %s hashed anew: git converts them", len(converted), root)


def has_index(root: str) -> bool:
    """Whether ``root`` looks like a checkout whose index ``borrow_checkout`` will borrow, told
    at once without git (a fresh ``git init`` has none; a worktree's is elsewhere: no)."""
    return _whole_index(Path(root, ".git"))


def _whole_index(git_dir: Path) -> bool:
    """An index of its own (a split index's entries live in another file: not worth the risk)."""
    return (git_dir / "index").is_file() and not any(git_dir.glob("sharedindex.*"))


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
    if not _whole_index(Path(user_git)):
        return None
    objects = (common_dir / "objects").resolve()
    if not objects.is_dir():
        return None
    alternates = git_dir / "objects" / "info" / "alternates"
    alternates.parent.mkdir(parents=True, exist_ok=True)
    alternates.write_text(f"{objects}\n", encoding="utf-8")
    await _borrow_index(root, index, common_dir, git_dir)
    return user_git


async def back_to_the_users_index(
    git_dir: Path, root: str, user_git: str, paths: set[str], made: set[str]
) -> None:
    """In the shadow index of ``git_dir``, set ``paths`` back to what the user's index holds
    (a clean file's blob at HEAD): they changed during the first scan, so what the scan read
    is not their "before". Of those the user's index lacks, only ``made`` (plainly created
    during the scan) were not there before; the others keep what the scan read: an untracked
    file rewritten in place or renamed over was the user's, and a reject of a "creation"
    would delete it."""
    index = os.path.join(user_git, "index")
    listed = await run_git(
        git_dir, root, "ls-files", "-s", "-z", "--", *sorted(paths), index_file=index
    )
    entries = [e for e in listed.split(b"\0") if e]
    known = {os.fsdecode(e.split(b"\t", 1)[1]) for e in entries}
    if new := (paths - known) & made:
        await run_git(
            git_dir, root, "rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", *sorted(new)
        )
    # a blob the user's git converted (autocrlf, text, a filter) is not the file's bytes:
    # such a file keeps what the scan read (its change during the scan is not told apart)
    same = await unconverted(root, known)
    entries = [e for e in entries if os.fsdecode(e.split(b"\t", 1)[1]) in same]
    if entries:
        await run_git(
            git_dir, root, "update-index", "-z", "--index-info", stdin=b"\0".join(entries) + b"\0"
        )
