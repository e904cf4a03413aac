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
lose their stat data in the copy and the first ``git add -A`` hashes those files as they are.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shutil
from pathlib import Path

log = logging.getLogger(__name__)

GIT_TIMEOUT_S = 120.0
_CONVERTING = ("text", "eol", "crlf", "filter", "ident", "working-tree-encoding")
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
        proc = await asyncio.create_subprocess_exec(
            "git",
            *args,
            cwd=root,
            env=env,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except FileNotFoundError:
        return None
    try:
        out, _ = await asyncio.wait_for(proc.communicate(stdin), GIT_TIMEOUT_S)
    except (TimeoutError, asyncio.CancelledError) as exc:
        proc.kill()
        await proc.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        log.info("git %s took over %g s in %s", args[0], GIT_TIMEOUT_S, root)
        return None
    assert proc.returncode is not None
    return proc.returncode, out


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


async def _autocrlf(root: str) -> bool:
    """Whether the user's git converts newlines of files no attribute speaks of (its effective
    ``core.autocrlf`` is true or input, or cannot be read)."""
    ran = await _users_git(root, "config", "--type=bool-or-str", "--get", "core.autocrlf")
    if ran is None or ran[0] not in (0, 1):  # (a git before 2.31 has no bool-or-str)
        return True
    return ran[0] == 0 and ran[1].strip() != b"false"


async def _outside_attributes(root: str, common_dir: Path) -> list[Path]:
    """The attributes files outside the tree that apply to the checkout: its
    ``info/attributes`` and the user's global one. (The system file, which this git does not
    name, is not looked at.)"""
    ran = await _users_git(root, "config", "--type=path", "--get", "core.attributesFile")
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


async def _may_convert(root: str, common_dir: Path, index: Path) -> bool:
    """Whether any attributes may apply to the checkout's files: a .gitattributes in the
    index or at the top, or an attributes file outside the tree that mentions a converting
    attribute. (An untracked .gitattributes further down is not looked for.)"""
    if os.path.lexists(os.path.join(root, ".gitattributes")):
        return True
    found = await _users_git(root, "ls-files", "-z", "--", ":(glob)**/.gitattributes", index=index)
    if found is None or found[0] != 0 or found[1]:
        return True
    outside = await _outside_attributes(root, common_dir)
    return any(_mentions_conversion(path) for path in outside)


def _converts(values: list[bytes]) -> bool:
    """Whether git may convert a file with these values of ``_CONVERTING`` (as check-attr
    prints them) on its way into the index."""
    text, eol, crlf, filter_, ident, encoding = values
    if any(v not in (b"unspecified", b"unset") for v in (filter_, ident, encoding)):
        return True
    if text == b"unspecified":
        text = crlf  # the old name of text (crlf=input: text with eol=lf)
    if text == b"unset":
        return False
    return text != b"unspecified" or eol != b"unspecified"  # (eol implies text)


async def _converted_entries(root: str, index: Path) -> list[bytes] | None:
    """The entries of ``index`` (as ``ls-files -s -z`` prints them) whose files the user's
    attributes may convert, or None when the user's git could not tell."""
    listed = await _users_git(root, "ls-files", "-s", "-z", index=index)
    if listed is None or listed[0] != 0:
        return None
    entries = [e for e in listed[1].split(b"\0") if e]
    paths = b"".join(e.split(b"\t", 1)[1] + b"\0" for e in entries)
    checked = await _users_git(
        root, "check-attr", "-z", "--stdin", *_CONVERTING, stdin=paths, index=index
    )
    if checked is None or checked[0] != 0:
        return None
    fields = checked[1].split(b"\0")
    step = 3 * len(_CONVERTING)  # path, attribute, value for each attribute of a path
    neutral = [b"unspecified"] * len(_CONVERTING)
    converted: set[bytes] = set()
    for at in range(0, len(fields) - step + 1, step):
        values = fields[at + 2 : at + step : 3]
        if values != neutral and _converts(values):
            converted.add(fields[at])
    return [e for e in entries if e.split(b"\t", 1)[1] in converted]


async def _forget_stat_data(root: str, git_dir: Path, entries: list[bytes]) -> bool:
    """Put ``entries`` back into the shadow repository's index without stat data, so that its
    first ``git add -A`` hashes their files (the shadow repository's own git, as ``shadow``
    runs it)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(git_dir),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": root,
        "LC_ALL": "C",
    }
    if "SYSTEMROOT" in os.environ:
        env["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
    proc = await asyncio.create_subprocess_exec(
        "git",
        "update-index",
        "-z",
        "--index-info",
        cwd=root,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        await asyncio.wait_for(proc.communicate(b"\0".join(entries) + b"\0"), GIT_TIMEOUT_S)
    except (TimeoutError, asyncio.CancelledError) as exc:
        proc.terminate()  # (SIGTERM: git removes its index.lock)
        await proc.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        return False
    return proc.returncode == 0


async def _borrow_index(root: str, index: Path, common_dir: Path, git_dir: Path) -> None:
    """Copy the user's ``index`` into the shadow repository, but no stat data of an entry
    whose blob may not be its file's bytes."""
    if await _autocrlf(root):
        log.info("index of %s not borrowed: its git converts newlines (core.autocrlf)", root)
        return
    copy = git_dir / "index"
    try:
        # copy2 keeps the index's mtime: git's "racily clean" check compares entries to it
        shutil.copy2(index, copy)
    except OSError as exc:
        log.info("index of %s not borrowed: %s", root, exc)
        copy.unlink(missing_ok=True)
        return
    if not await _may_convert(root, common_dir, copy):
        return
    converted = await _converted_entries(root, copy)
    if converted is None or (converted and not await _forget_stat_data(root, git_dir, converted)):
        log.info("index of %s not borrowed: its attributes could not be checked", root)
        copy.unlink(missing_ok=True)
    elif converted:
        log.info("%d files of %s hashed anew: git converts them", len(converted), root)


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
    await _borrow_index(root, index, common_dir, git_dir)
    return user_git
