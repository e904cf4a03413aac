"""The macOS agent sandbox: a Seatbelt profile for ``sandbox-exec``, the confinement Codex and
Claude Code use on macOS themselves. Like the bubblewrap sandbox on Linux: everything may be
read and the network stays, but writes go only to the given roots (and the few devices a
program writes to: /dev/null, its terminal).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence

SANDBOX_EXEC = "/usr/bin/sandbox-exec"
# written by ordinary programs (a shell's redirections, a terminal, dtrace's helper)
_DEVICES = ("/dev/null", "/dev/zero", "/dev/tty", "/dev/ptmx", "/dev/dtracehelper")
_DEVICE_PATTERNS = ("^/dev/fd/[0-9]+$", "^/dev/ttys[0-9]+$")


def find_sandbox_exec(path: str | None) -> str | None:
    return shutil.which("sandbox-exec", path=path) or shutil.which(SANDBOX_EXEC)


def _quote(path: str) -> str:
    """An SBPL string literal."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def profile(writable: Sequence[str]) -> str:
    """The profile: all allowed, then every write denied, then writes under ``writable``
    (absolute, symlink-free paths: Seatbelt matches the resolved path, /private/tmp not /tmp)
    allowed again (a later rule wins)."""
    rules = [f"(subpath {_quote(path)})" for path in sorted(set(writable))]
    rules += [f"(literal {_quote(dev)})" for dev in _DEVICES]
    rules += [f'(regex #"{pattern}")' for pattern in _DEVICE_PATTERNS]
    allow = "\n".join(f"    {rule}" for rule in rules)
    return f"(version 1)\n(allow default)\n(deny file-write*)\n(allow file-write*\n{allow})\n"


def argv(sandbox_exec: str, writable: Sequence[str], command: Sequence[str]) -> list[str]:
    return [sandbox_exec, "-p", profile(writable), *command]
