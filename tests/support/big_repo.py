"""A git repository of many committed files, made fast: one ``git fast-import`` stream (the
generated files share a handful of blobs, so nothing is hashed per file) and a checkout that
writes them and the index's stat data, as a clone would."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

PER_FOLDER = 100
GENERATED = b"generated = True\n"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "user",
    "GIT_AUTHOR_EMAIL": "user@example.com",
    "GIT_COMMITTER_NAME": "user",
    "GIT_COMMITTER_EMAIL": "user@example.com",
}


def git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    # niced: writing 300,000 files must not starve the tests running beside this one
    return subprocess.run(
        ["nice", "-n", "19", "git", "-C", str(root), *args],
        input=stdin,
        capture_output=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    ).stdout


def generated_path(n: int) -> str:
    return f"gen/p{n // (PER_FOLDER * 100)}/m{n // PER_FOLDER}/f{n % PER_FOLDER}.txt"


def commit_everything(root: Path, generated: int) -> None:
    """Make ``root`` (its files kept) a checkout whose HEAD holds them and ``generated``
    more files, every one of them on disk and clean."""
    git(root, "init", "-q")
    stream = [b"blob\nmark :1\ndata %d\n%s\n" % (len(GENERATED), GENERATED)]
    own = sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)
    stream.append(b"commit refs/heads/main\ncommitter user <user@example.com> 0 +0000\n")
    stream.append(b"data 6\nfirst\n")
    for path in own:
        data = path.read_bytes()
        rel = path.relative_to(root).as_posix().encode()
        stream.append(b"M 100644 inline %s\ndata %d\n%s\n" % (rel, len(data), data))
    stream.extend(b"M 100644 :1 %s\n" % generated_path(n).encode() for n in range(generated))
    git(root, "fast-import", "--quiet", stdin=b"".join(stream) + b"\n")
    git(root, "symbolic-ref", "HEAD", "refs/heads/main")
    git(root, "reset", "--hard", "-q")
