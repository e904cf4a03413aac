"""initialize / configuration / shutdown / exit: settings in, every child process out.

However the server ends — ``shutdown`` + ``exit``, ``exit`` alone, stdin closing, SIGTERM,
SIGHUP, SIGINT — the session history is written and closed and every agent and terminal
process group is stopped (``Ending``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import threading
import time
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from acp_lsp.server import AcpLanguageServer

if TYPE_CHECKING:
    from acp_lsp.platform.proc import Proc

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]
# The last history write and close may take this long; then the process ends anyway.
FINAL_FLUSH_S = 2.0
# Between SIGTERM and SIGKILL to the children's process groups.
KILL_GRACE_S = 0.2
# A signal's end waits this long for the event loop to run it (a loop stuck in a blocking
# call never would): then the children are killed and the process ends without the history.
LOOP_WAIT_S = 3.0
TURN_STATUSES = ("running", "awaiting_permission", "cancelling")


class Ending:
    """The one synchronous end every way out shares (``finish``), and the exit code.

    ``shutdown`` stops agents and writes the history on the event loop first; the other ends
    cannot wait for the loop (``exit`` alone must end now, a signal may interrupt anything,
    after stdin closes the loop is gone), so ``finish`` runs where they are: the exit handler,
    a loop callback for a signal, or after ``start_io`` returns.
    """

    def __init__(self, server: AcpLanguageServer) -> None:
        self.server = server
        self.code = 0
        self.shut_down = False  # shutdown was answered: exit is 0, else 1 (LSP)
        self.loop: asyncio.AbstractEventLoop | None = None  # the server's, once initialized
        self._finishing = False
        self._signalled = False

    def finish(self) -> None:
        """Stop every child process group, write what the history lacks and close it;
        bounded (KILL_GRACE_S + FINAL_FLUSH_S at most), and only once."""
        if self._finishing:
            return
        self._finishing = True
        # the process tools load when the server ends, not on the way to ``initialize``
        from acp_lsp.backends.wire_tree import signal_tree
        from acp_lsp.platform.stop import KILL

        built = self.server.__dict__  # the editor side and the hub exist once used
        pids = _child_pids(self.server)
        trees = _trees(pids)
        _signal_groups(pids, signal.SIGTERM)
        signal_tree(trees, signal.SIGTERM)
        termed = time.monotonic()
        try:
            if "hub" in built:
                for session in self.server.hub.sessions.values():
                    if session.status in TURN_STATUSES:
                        # a turn cut off by the end: kept as far as it got, ended as a cancel
                        session.finish_turn("cancelled")
                        session.status = "idle"
                self.server.hub.settle_stopped()  # a shutdown under way stopped its agents
            recorder = self.server.editor.recorder if "editor" in built else None
            if recorder is not None:
                recorder.close_now(FINAL_FLUSH_S)
        except Exception:  # the children go all the same
            log.exception("writing the session history at the end")
        finally:
            if pids:
                time.sleep(max(0.0, KILL_GRACE_S - (time.monotonic() - termed)))
                _signal_groups(pids, KILL)
                signal_tree(trees, KILL)

    def signalled(self, signum: int) -> None:
        """The signal handler (``signal.signal``: it may interrupt anything). The end runs as
        an event loop callback, between two steps of the server, where sessions are whole;
        at once when no loop runs (before ``initialize``, after stdin closed)."""
        self.code = 128 + signum
        if self._finishing or self._signalled:
            return  # an end is under way (bounded); it exits with this code
        loop = self.loop
        if loop is not None and loop.is_running():
            self._signalled = True
            loop.call_soon_threadsafe(self.exit_now)
            watchdog = threading.Timer(LOOP_WAIT_S, self._loop_stuck)
            watchdog.daemon = True
            watchdog.start()
            return
        self.exit_now()

    def _loop_stuck(self) -> None:
        if self._finishing:
            return
        log.error(
            "the event loop did not run the end in %.0f s: killing agents, exiting", LOOP_WAIT_S
        )
        with contextlib.suppress(Exception):  # read from another thread: best effort
            from acp_lsp.platform.stop import KILL

            _signal_groups(_child_pids(self.server), KILL)
        logging.shutdown()
        os._exit(self.code)

    def exit_now(self) -> None:
        # os._exit: the stdin reader thread may block on a read that never returns
        self.finish()
        logging.shutdown()
        os._exit(self.code)


_ENDINGS: weakref.WeakKeyDictionary[AcpLanguageServer, Ending] = weakref.WeakKeyDictionary()


def ending(server: AcpLanguageServer) -> Ending:
    found = _ENDINGS.get(server)
    if found is None:
        found = _ENDINGS[server] = Ending(server)
    return found


def _section(raw: Any) -> Mapping[str, Any] | None:
    """Settings may come bare or under an ``acp`` key. An empty object is no settings: eglot
    1.9 sends ``{settings: {}}`` right after ``initialized``, which replaced the
    initializationOptions with nothing."""
    if isinstance(raw, Mapping) and raw:
        inner = raw.get("acp")
        if isinstance(inner, Mapping):
            return inner
        return raw
    return None


def _workspace_folders(params: types.InitializeParams) -> list[str]:
    folders: list[str] = []
    for folder in params.workspace_folders or []:
        path = to_fs_path(folder.uri)
        if path:
            folders.append(os.path.abspath(path))
    if not folders:
        root = (params.root_uri and to_fs_path(params.root_uri)) or params.root_path
        if root:
            folders.append(os.path.abspath(root))
    return folders


def _report(server: AcpLanguageServer, problems: list[str]) -> None:
    for problem in problems:
        server.editor.show_message(
            f"acp-lsp: invalid setting {problem} (using the default instead)", "warning"
        )


def register(server: AcpLanguageServer) -> None:
    @server.feature(types.INITIALIZE)
    def on_initialize(server: AcpLanguageServer, params: types.InitializeParams) -> None:
        folders = _workspace_folders(params)
        section = _section(params.initialization_options)
        server.init_options = dict(section) if section is not None else None
        raw = params.initialization_options
        not_an_object = raw is not None and not isinstance(raw, Mapping)

        def start() -> None:
            gc.enable()  # paused by acp-lsp's serve() until the answer is written
            server.hub.workspace_folders = folders
            if not_an_object:
                server.editor.show_message(
                    "acp-lsp: initializationOptions must be an object (using defaults)", "warning"
                )
            _report(server, server.load_settings(server.init_options))
            # loaded now, off the start-up path: the last-resort end (another thread, the
            # loop stuck) must not import anything, which could wait on a held import lock
            import acp_lsp.backends.wire_tree
            import acp_lsp.platform.stop  # noqa: F401

        # Settings, the hub and their imports are built right after the answer is written
        # (before the next message is read): the editor does not wait for them.
        ending(server).loop = asyncio.get_running_loop()  # where a signal's end will run
        if not server.protocol.after_response(start):
            start()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_configuration(
        server: AcpLanguageServer, params: types.DidChangeConfigurationParams
    ) -> None:
        section = _section(params.settings)
        if (
            section is None
            and server.client_capabilities.workspace
            and (server.client_capabilities.workspace.configuration)
        ):
            try:
                items = await server.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section="acp")])
                )
                section = _section(items[0]) if items else None
            except Exception as exc:
                log.info("workspace/configuration failed: %s", exc)
        if section is None:
            return
        server.init_options = dict(section)
        _report(server, server.load_settings(server.init_options))

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def on_folders(
        server: AcpLanguageServer, params: types.DidChangeWorkspaceFoldersParams
    ) -> None:
        folders = server.hub.workspace_folders
        for removed in params.event.removed:
            path = to_fs_path(removed.uri)
            if path and os.path.abspath(path) in folders:
                folders.remove(os.path.abspath(path))
        for added in params.event.added:
            path = to_fs_path(added.uri)
            if path and os.path.abspath(path) not in folders:
                folders.append(os.path.abspath(path))

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(server: AcpLanguageServer, _params: Any) -> None:
        ending(server).shut_down = True
        await server.hub.shutdown()
        await server.editor.close()
        if server.editor.recorder is not None:
            await server.editor.recorder.close()  # the last fraction of a second, too
        await server.tasks.close(timeout=2.0)

    @server.feature(types.EXIT)
    def on_exit(server: AcpLanguageServer, _params: Any) -> None:
        # Synchronous, and the process ends here: after pygls's own exit (a SystemExit out of
        # the loop) asyncio.run would cancel every task and wait for them all, and under load
        # the process was seen still alive 15 s after `exit`. The end has run by then (agents
        # stopped, the history written): nothing is left to wait for.
        end = ending(server)
        end.code = 0 if end.shut_down else 1
        end.exit_now()

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    async def on_progress_cancel(
        server: AcpLanguageServer, params: types.WorkDoneProgressCancelParams
    ) -> None:
        for session_id in list(server.hub.turns):
            if server.editor.progress.token_cancelled(session_id):
                await server.hub.cancel(session_id)


def _child_pids(server: AcpLanguageServer) -> list[int]:
    """Agents and terminal commands: each leads its own process group. Only parts already
    built are asked (an end before ``initialize`` builds nothing)."""
    built = server.__dict__
    pids: list[int] = list(server.editor.terminals.pids()) if "editor" in built else []
    for backend in server.hub.backends.values() if "hub" in built else ():
        pid = getattr(backend, "pid", lambda: None)()
        if isinstance(pid, int):
            pids.append(pid)
    return pids


def _trees(pids: list[int]) -> list[Proc]:
    """Every process under those groups, wherever its own group is: Claude Code and Codex
    run each shell command in a session of its own, which signalling the group misses."""
    from acp_lsp.backends.wire_tree import process_tree

    found: dict[tuple[int, float], Proc] = {}
    for pid in pids:
        for proc in process_tree(pid):
            found[(proc.pid, proc.start)] = proc
    return list(found.values())


def _signal_groups(pids: list[int], sig: signal.Signals) -> None:
    from acp_lsp.platform.stop import signal_group

    for pid in pids:
        signal_group(pid, sig)
