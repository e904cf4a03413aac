"""initialize / configuration / shutdown / exit: settings in, every child process out."""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Mapping
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from acp_lsp.server import AcpLanguageServer

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]


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
            server.hub.workspace_folders = folders
            if not_an_object:
                server.editor.show_message(
                    "acp-lsp: initializationOptions must be an object (using defaults)", "warning"
                )
            _report(server, server.load_settings(server.init_options))

        # Settings, the hub and their imports are built right after the answer is written
        # (before the next message is read): the editor does not wait for them.
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
        await server.hub.shutdown()
        await server.editor.close()
        if server.editor.recorder is not None:
            await server.editor.recorder.close()  # the last fraction of a second, too
        await server.tasks.close(timeout=2.0)

    @server.feature(types.EXIT)
    def on_exit(server: AcpLanguageServer, _params: Any) -> None:
        # exit without shutdown: nothing async can run any more; kill what is left.
        kill_children_now(server)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    async def on_progress_cancel(
        server: AcpLanguageServer, params: types.WorkDoneProgressCancelParams
    ) -> None:
        for session_id in list(server.hub.turns):
            if server.editor.progress.token_cancelled(session_id):
                await server.hub.cancel(session_id)


def kill_children_now(server: AcpLanguageServer) -> None:
    """Synchronously stop every agent process group and terminal (the editor is gone)."""
    import signal

    pids: list[int] = list(server.editor.terminals.pids())
    for backend in server.hub.backends.values():
        pid = getattr(backend, "pid", lambda: None)()
        if isinstance(pid, int):
            pids.append(pid)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, sig)
        if sig == signal.SIGTERM and pids:
            time.sleep(0.2)
