"""Running git for a shadow repository: its own ``GIT_DIR`` and config alone (no user or system
config changes what is snapshotted), a timeout, and a stop that leaves no ``index.lock``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from pathlib import Path

log = logging.getLogger(__name__)

GIT_TIMEOUT_S = 120.0


class ShadowError(Exception):
    """git is missing, or a snapshot failed; the message says which and why."""


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM first: git then removes its index.lock, which a SIGKILL would leave behind
    (and every later snapshot of the folder would fail on it)."""
    try:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 2.0)
    except ProcessLookupError:
        return  # it had ended already
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()


def drop_stale_lock(lock: Path, older_than: float) -> None:
    """An index.lock older than any git run of ours: left by a server killed mid-snapshot."""
    try:
        if time.time() - lock.stat().st_mtime > older_than:
            lock.unlink()
            log.info("removed a stale %s", lock)
    except OSError:
        pass


def nul(paths: set[str]) -> bytes:
    """Paths for ``--stdin -z`` or ``--pathspec-file-nul``."""
    return b"".join(os.fsencode(path) + b"\0" for path in sorted(paths))


async def communicate(
    args: tuple[str, ...], cwd: str, env: dict[str, str], stdin: bytes | None, timeout: float
) -> tuple[int, bytes, bytes]:
    """Run ``git args``: its exit code, output and errors. Stopped (no lock left behind) on a
    timeout (TimeoutError) or a cancel; FileNotFoundError without git."""
    proc = await asyncio.create_subprocess_exec(
        "git",
        *args,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin), timeout)
    except (TimeoutError, asyncio.CancelledError):
        await _stop(proc)
        raise
    assert proc.returncode is not None
    return proc.returncode, out, err


async def run_git(
    git_dir: Path,
    root: str,
    *args: str,
    stdin: bytes | None = None,
    ok: tuple[int, ...] = (0,),
    index_file: str | None = None,
    timeout: float = GIT_TIMEOUT_S,
) -> bytes:
    """``git args`` on the shadow repository ``git_dir`` of the folder ``root``; its output."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(git_dir),  # no user or system config changes what is snapshotted
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": root,
        "LC_ALL": "C",
    }
    if args[0] != "check-ignore":  # (which takes plain paths and refuses the setting)
        env["GIT_LITERAL_PATHSPECS"] = "1"  # a file named "*.py" is that file
    if index_file is not None:  # read another index (the user's) than the shadow one
        env["GIT_INDEX_FILE"] = index_file
    if "SYSTEMROOT" in os.environ:  # Windows: git's own DLLs and sockets need it
        env["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
    try:
        code, out, err = await communicate(args, root, env, stdin, timeout)
    except FileNotFoundError:
        raise ShadowError("git is not installed: changes made on disk cannot be tracked") from None
    except TimeoutError:
        raise ShadowError(f"git {args[0]} took over {timeout:g} s in {root}") from None
    if code not in ok:
        message = err.decode(errors="replace").strip().splitlines()
        raise ShadowError(f"git {args[0]} failed in {root}: {' '.join(message[-2:])}")
    return out
