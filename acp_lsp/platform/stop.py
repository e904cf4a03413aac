"""Starting a child in a group of its own, and stopping that group.

POSIX: a new session (``start_new_session``) makes the child lead its own process group, which
``killpg`` signals whole. Windows has neither: the child gets a new process group
(``CREATE_NEW_PROCESS_GROUP``) so that ``CTRL_BREAK_EVENT`` reaches it and its console
children (the polite stop), and the hard stop ends it and its descendants through psutil.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
from typing import Any

log = logging.getLogger(__name__)

# The hard stop. Windows has no SIGKILL: os.kill with SIGTERM there is TerminateProcess,
# which cannot be caught either.
if sys.platform == "win32":
    KILL = signal.SIGTERM
else:
    KILL = signal.SIGKILL


def new_group() -> dict[str, Any]:
    """Keyword arguments for subprocess / asyncio / anyio that start a child in a group of
    its own, which :func:`signal_group` stops whole."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    else:
        return {"start_new_session": True}


def signal_group(leader: int, sig: signal.Signals) -> None:
    """Signal the group ``leader`` leads (started with :func:`new_group`): SIGTERM or KILL.
    Gone already is fine; refused is logged."""
    if leader <= 0:  # killpg(0) would be our own group
        return
    try:
        if sys.platform == "win32":
            _stop_windows_group(leader, sig)
        else:
            os.killpg(leader, sig)
    except ProcessLookupError:
        pass
    except PermissionError as exc:
        log.warning("cannot signal process group %d: %s", leader, exc)


if sys.platform == "win32":

    def _stop_windows_group(leader: int, sig: signal.Signals) -> None:
        if sig != KILL:
            # the polite stop; it needs a console shared with the child, which a server
            # started by an editor may lack: then the hard stop after the grace does it
            with contextlib.suppress(OSError):
                os.kill(leader, signal.CTRL_BREAK_EVENT)
            return
        import psutil

        try:
            root = psutil.Process(leader)
            tree = [*root.children(recursive=True), root]
        except psutil.NoSuchProcess:
            raise ProcessLookupError(leader) from None
        for proc in tree:
            with contextlib.suppress(psutil.Error):
                proc.kill()
