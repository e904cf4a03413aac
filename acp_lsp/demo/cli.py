"""``acp-lsp demo``: a complete session through the real server, in a small terminal editor.

The demo is an LSP client of its own: it starts ``acp-lsp`` over stdio, opens a file of a
temporary copy of the sample workspace with an unsaved change (the agent reads the unsaved
text), streams the answer, shows each tool call with its status, asks permission questions
in the terminal (``--yes`` answers allow), applies the agent's edits to its buffer and saves
them, shows follow-along jumps and terminal output, and ends with a review of the edit.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.protocol import default_converter
from pygls.uris import from_fs_path, to_fs_path

from acp_lsp.demo.render import Renderer
from acp_lsp.lsp_protocol import AcpClientProtocol, stop_client
from acp_lsp.textedits import apply_edits

JsonObject = dict[str, Any]
SAMPLE = Path(__file__).parent / "workspace"
DEFAULT_PROMPT = "Look at src/app.py and add a review note; then run a quick check."


class DemoEditor(LanguageClient):
    """The terminal 'editor': a document store plus acp/* handlers."""

    def __init__(self, out: TextIO, ask: bool) -> None:
        super().__init__(
            "acp-lsp-demo", "1", protocol_cls=AcpClientProtocol, converter_factory=default_converter
        )
        self.render = Renderer(out)
        self.ask = ask
        self.docs: dict[str, list[Any]] = {}  # uri -> [version, text]
        self.root = Path()
        self.encoding = "utf-16"
        self.turn_done = asyncio.Event()
        self._features()

    def open_doc(self, path: Path, text: str) -> None:
        uri = from_fs_path(str(path)) or ""
        self.docs[uri] = [1, text]
        self.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=1, text=text
                )
            )
        )

    def rel(self, uri_or_path: str) -> str:
        path = to_fs_path(uri_or_path) if uri_or_path.startswith("file:") else uri_or_path
        try:
            return str(Path(path or "").relative_to(self.root))
        except ValueError:
            return str(path)

    def _apply(self, uri: str, edits: list[types.TextEdit]) -> bool:
        doc = self.docs.get(uri)
        if doc is None:
            path = Path(to_fs_path(uri) or "")
            self.open_doc(path, path.read_text(encoding="utf-8") if path.exists() else "")
            doc = self.docs[uri]
        old = doc[1]
        new = apply_edits(old, edits, self.encoding)
        doc[0] += 1
        doc[1] = new
        self.render.edit(self.rel(uri), old, new)
        self.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=doc[0]),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=new)],
            )
        )
        return True

    def _features(self) -> None:
        @self.feature("acp/sessionUpdate")
        def on_update(client: DemoEditor, params: JsonObject) -> None:
            for update in params.get("updates", []):
                client.render.update(update, client.rel)

        @self.feature("acp/sessionStatus")
        def on_status(client: DemoEditor, params: JsonObject) -> None:
            client.render.status(params)

        @self.feature("acp/terminalOutput")
        def on_terminal(client: DemoEditor, params: JsonObject) -> None:
            client.render.terminal(params)

        @self.feature("acp/requestPermission")
        async def on_permission(client: DemoEditor, params: JsonObject) -> JsonObject:
            options = params.get("options", [])
            choice = await client.render.permission(params.get("toolCall", {}), options, client.ask)
            if choice is None:
                return {"outcome": {"outcome": "cancelled"}}
            return {"outcome": {"outcome": "selected", "optionId": choice}}

        @self.feature("acp/saveDocument")
        def on_save(client: DemoEditor, params: JsonObject) -> JsonObject:
            saved = []
            for uri in params.get("uris", []):
                doc = client.docs.get(uri)
                if doc is not None:
                    Path(to_fs_path(uri) or "").write_text(doc[1], encoding="utf-8")
                    saved.append(uri)
            return {"saved": saved}

        @self.feature(types.WORKSPACE_APPLY_EDIT)
        def on_apply(
            client: DemoEditor, params: types.ApplyWorkspaceEditParams
        ) -> types.ApplyWorkspaceEditResult:
            ok = True
            for change in params.edit.document_changes or []:
                if isinstance(change, types.TextDocumentEdit):
                    ok &= client._apply(change.text_document.uri, list(change.edits))  # type: ignore[arg-type]
                elif isinstance(change, types.CreateFile):
                    path = Path(to_fs_path(change.uri) or "")
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.touch()
                elif isinstance(change, types.DeleteFile):
                    path = Path(to_fs_path(change.uri) or "")
                    client.docs.pop(change.uri, None)
                    path.unlink(missing_ok=True)
                    client.render.note(f"deleted {client.rel(change.uri)}")
            for uri, edits in (params.edit.changes or {}).items():
                ok &= client._apply(uri, list(edits))
            return types.ApplyWorkspaceEditResult(applied=ok)

        @self.feature(types.WINDOW_SHOW_DOCUMENT)
        def on_show(
            client: DemoEditor, params: types.ShowDocumentParams
        ) -> types.ShowDocumentResult:
            line = params.selection.start.line + 1 if params.selection else 1
            client.render.follow(client.rel(params.uri), line)
            return types.ShowDocumentResult(success=True)

        @self.feature(types.WINDOW_SHOW_MESSAGE)
        def on_message(client: DemoEditor, params: types.ShowMessageParams) -> None:
            client.render.note(params.message)

        @self.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(client: DemoEditor, params: types.LogMessageParams) -> None:
            return None

        @self.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def on_progress_create(client: DemoEditor, params: Any) -> None:
            return None

        @self.feature(types.PROGRESS)
        def on_progress(client: DemoEditor, params: Any) -> None:
            return None


def _capabilities() -> types.ClientCapabilities:
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=True,
                resource_operations=[
                    types.ResourceOperationKind.Create,
                    types.ResourceOperationKind.Delete,
                ],
            ),
        ),
        window=types.WindowClientCapabilities(
            show_document=types.ShowDocumentClientCapabilities(support=True)
        ),
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf16]
        ),
        experimental={"acp": {"requestPermission": True, "saveDocument": True}},
    )


async def _session(args: argparse.Namespace, root: Path, out: TextIO) -> int:
    editor = DemoEditor(out, ask=not args.yes)
    editor.root = root
    await editor.start_io(sys.executable, "-m", "acp_lsp", env={**os.environ})
    init_options: JsonObject = {}
    result = await editor.initialize_async(
        types.InitializeParams(
            capabilities=_capabilities(),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=init_options,
        )
    )
    editor.initialized(types.InitializedParams())
    enc = result.capabilities.position_encoding
    editor.encoding = str(getattr(enc, "value", enc) or "utf-16")
    render = editor.render
    code = 0
    try:
        app = root / "src" / "app.py"
        if app.exists():
            text = app.read_text(encoding="utf-8")
            unsaved = "# TODO (unsaved in the editor): greet in French too\n" + text
            editor.open_doc(app, unsaved)
            render.note(
                "opened src/app.py with an unsaved change: agents read what the editor shows"
            )
        agents = await editor.protocol.send_request_async("acp/listAgents", {})
        render.agents(agents.get("agents", []), args.agent)
        snap = await editor.protocol.send_request_async("acp/newSession", {"agent": args.agent})
        sid = snap["sessionId"]
        render.session(snap)
        prompt = args.prompt or DEFAULT_PROMPT
        render.prompt(prompt)
        res = await editor.protocol.send_request_async(
            "acp/prompt", {"sessionId": sid, "prompt": prompt}
        )
        render.turn_end(res.get("stopReason"))
        final = await editor.protocol.send_request_async("acp/getSession", {"sessionId": sid})
        render.summary(final, editor.rel)
        if any((c.get("review") or {}).get("status") == "pending" for c in final["toolCalls"]):
            render.note("review: rejecting the turn's edits to show the revert (acp/reviewEdit)")
            review = await editor.protocol.send_request_async(
                "acp/reviewEdit", {"sessionId": sid, "action": "reject"}
            )
            for item in review.get("files", []):
                extra = f" — {item['message']}" if item.get("message") else ""
                render.note(f"{editor.rel(item['path'])}: {item['status']}{extra}")
        if app.exists():
            on_disk = app.read_text(encoding="utf-8")
            render.note(
                f"src/app.py on disk: {len(on_disk.splitlines())} lines (saved by the editor)"
            )
    except Exception as exc:  # show the server's error plainly; the demo is a user's first run
        render.error(str(getattr(exc, "message", exc)))
        code = 1
    finally:
        await stop_client(editor)
    return code


def run_demo(args: argparse.Namespace) -> int:
    out = sys.stdout
    if args.editor == "nvim":
        from acp_lsp.demo.nvim import run_nvim_demo

        return run_nvim_demo(args)
    tmp = None
    if args.workspace:
        root = Path(args.workspace).resolve()
    else:
        tmp = tempfile.mkdtemp(prefix="acp-lsp-demo-")
        root = Path(tmp) / "sample"
        shutil.copytree(SAMPLE, root)
    if args.config:
        shutil.copy(args.config, root / "acp-lsp.toml")
    out.write(f"acp-lsp demo — workspace: {root} (a temporary copy; your files are not touched)\n")
    try:
        return asyncio.run(_session(args, root, out))
    except KeyboardInterrupt:
        return 130
    finally:
        if tmp is not None and not os.environ.get("ACP_LSP_DEMO_KEEP"):
            shutil.rmtree(tmp, ignore_errors=True)


def unified(old: str, new: str, name: str) -> list[str]:
    return list(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), f"a/{name}", f"b/{name}", lineterm="", n=1
        )
    )
