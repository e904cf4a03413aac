"""A scripted LSP editor for end-to-end tests through the real acp-lsp server.

It behaves like a real editor where tests need it to: open documents with versions, apply
``workspace/applyEdit`` to them (sending ``didChange`` as an editor does), save on
``acp/saveDocument``, answer permission prompts by a per-test policy, and keep an editor-side
model of every session from ``acp/sessionUpdate`` (the same merge an editor front end does).
"""

from __future__ import annotations

import asyncio
import copy
import functools
import os
import sys
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pygls.uris import from_fs_path, to_fs_path
from pytest_lsp import LanguageClient
from pytest_lsp.client import register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

from acp_lsp.lsp_protocol import structure_raw_acp
from acp_lsp.textedits import apply_edits
from tests.support.acp_lsp_schema import validate
from tests.support.editor_model import EditorModel

JsonObject = dict[str, Any]
PermissionPolicy = Callable[[JsonObject], Awaitable[JsonObject | None] | JsonObject | None]

ROOT = Path(__file__).resolve().parents[2]
SERVER_COMMAND = [sys.executable, "-m", "acp_lsp"]


def coverage_env() -> dict[str, str]:
    """In a measured run (`./run tests`: coverage with patch = subprocess), what a Python agent
    the bridge starts needs to be measured too: agents get an environment of their own."""
    config = os.environ.get("COVERAGE_PROCESS_CONFIG")
    return {"COVERAGE_PROCESS_CONFIG": config} if config else {}


shared_converter = functools.cache(default_converter)
"""One converter for every test editor of the process: cattrs generates (and compiles) its
structure and unstructure functions per converter, which cost each new editor ~0.1 s of CPU."""


class RawAcpProtocol(LanguageClientProtocol):
    """Keep acp/* params as plain JSON dicts (the test asserts on the wire shape)."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        raw = structure_raw_acp(self, data)
        return raw if raw is not None else super().structure_message(data)


@attrs.define
class Doc:
    uri: str
    version: int
    text: str


class TestEditor(LanguageClient):
    """pytest-lsp client + document store + acp/* recorders."""

    __test__ = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(protocol_cls=RawAcpProtocol, converter_factory=shared_converter, **kwargs)
        self.docs: dict[str, Doc] = {}
        self.schema_errors: list[str] = []
        self.encoding = "utf-16"
        self.sessions: dict[str, EditorModel] = {}
        self.notifications: list[tuple[str, JsonObject]] = []
        self.statuses: dict[str, list[JsonObject]] = defaultdict(list)
        self.terminal_output: dict[str, str] = defaultdict(str)
        self.terminal_messages: list[JsonObject] = []
        self.permission_requests: list[JsonObject] = []
        self.message_requests: list[types.ShowMessageRequestParams] = []
        self.applied_edits: list[types.ApplyWorkspaceEditParams] = []
        self.saved: list[str] = []
        self.permission_policy: PermissionPolicy = lambda _p: {
            "outcome": {"outcome": "selected", "optionId": _first(_p, "allow_once")}
        }
        self.message_policy: Callable[[types.ShowMessageRequestParams], str | None] = lambda p: (
            p.actions[0].title if p.actions else None
        )
        self.elicitations: list[JsonObject] = []
        self.elicitation_policy: Callable[[JsonObject], JsonObject] = lambda _p: {
            "action": "decline"
        }
        self.edit_mode = "apply"  # apply | refuse | skip (answer applied but do nothing)
        self._changed = asyncio.Event()
        self._status_event = asyncio.Event()
        register_lsp_features(self)
        self._register()

    # -- documents -------------------------------------------------------------------------
    def open(self, path: str | Path, text: str | None = None) -> Doc:
        path = str(path)
        uri = from_fs_path(path) or ""
        if text is None:
            text = Path(path).read_text(encoding="utf-8")
        doc = Doc(uri, 1, text)
        self.docs[uri] = doc
        self.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="plaintext", version=1, text=text
                )
            )
        )
        return doc

    def doc(self, path: str | Path) -> Doc:
        return self.docs[from_fs_path(str(path)) or ""]

    def type_text(self, path: str | Path, new_text: str) -> None:
        """The user edits the buffer (full-text didChange, not saved)."""
        doc = self.doc(path)
        doc.version += 1
        doc.text = new_text
        self.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=doc.uri, version=doc.version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_text)],
            )
        )

    def _apply_text_edits(self, uri: str, version: int | None, edits: list[Any]) -> bool:
        doc = self.docs.get(uri)
        if doc is None:
            path = to_fs_path(uri) or ""
            text = Path(path).read_text(encoding="utf-8") if os.path.exists(path) else ""
            doc = self.open(path, text)
        if version is not None and version != doc.version:
            return False
        new = apply_edits(doc.text, edits, self.encoding)
        if self.edit_mode == "skip":
            return True
        doc.text = new
        doc.version += 1
        self.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=new)],
            )
        )
        return True

    # -- handlers --------------------------------------------------------------------------
    def _register(self) -> None:
        @self.feature(types.WORKSPACE_APPLY_EDIT)
        def apply_edit(
            client: TestEditor, params: types.ApplyWorkspaceEditParams
        ) -> types.ApplyWorkspaceEditResult:
            client.applied_edits.append(params)
            if client.edit_mode == "refuse":
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="user said no")
            edit = params.edit
            ok = True
            for change in edit.document_changes or []:
                if isinstance(change, types.TextDocumentEdit):
                    ok &= client._apply_text_edits(
                        change.text_document.uri, change.text_document.version, list(change.edits)
                    )
                elif isinstance(change, types.CreateFile):
                    path = to_fs_path(change.uri) or ""
                    if not os.path.exists(path):
                        Path(path).parent.mkdir(parents=True, exist_ok=True)
                        Path(path).write_text("", encoding="utf-8")
                elif isinstance(change, types.DeleteFile):
                    path = to_fs_path(change.uri) or ""
                    client.docs.pop(change.uri, None)
                    if os.path.exists(path):
                        os.remove(path)
            for uri, edits in (edit.changes or {}).items():
                ok &= client._apply_text_edits(uri, None, list(edits))
            return types.ApplyWorkspaceEditResult(applied=ok)

        @self.feature("acp/saveDocument")
        def save_document(client: TestEditor, params: JsonObject) -> JsonObject:
            client.check("acp/saveDocument", "params", params)
            saved = []
            for uri in params["uris"]:
                doc = client.docs.get(uri)
                if doc is not None:
                    Path(to_fs_path(uri) or "").write_text(doc.text, encoding="utf-8")
                    saved.append(uri)
                    client.saved.append(uri)
            return {"saved": saved}

        @self.feature("acp/requestPermission")
        async def request_permission(client: TestEditor, params: JsonObject) -> Any:
            client.check("acp/requestPermission", "params", params)
            client.permission_requests.append(params)
            answer = client.permission_policy(params)
            if asyncio.iscoroutine(answer) or isinstance(answer, asyncio.Future):
                answer = await answer
            return answer

        @self.feature("acp/elicitation")
        def elicitation(client: TestEditor, params: JsonObject) -> JsonObject:
            client.check("acp/elicitation", "params", params)
            client.elicitations.append(params)
            return client.elicitation_policy(params)

        @self.feature("acp/elicitationComplete")
        def elicitation_complete(client: TestEditor, params: JsonObject) -> None:
            client.check("acp/elicitationComplete", "params", params)
            client.notifications.append(("acp/elicitationComplete", params))

        @self.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def show_message_request(
            client: TestEditor, params: types.ShowMessageRequestParams
        ) -> types.MessageActionItem | None:
            client.message_requests.append(params)
            title = client.message_policy(params)
            return types.MessageActionItem(title=title) if title is not None else None

        @self.feature("acp/sessionUpdate")
        def session_update(client: TestEditor, params: JsonObject) -> None:
            client.check("acp/sessionUpdate", "params", params)
            client.notifications.append(("acp/sessionUpdate", params))
            model = client.sessions.get(params["sessionId"])
            if model is None:
                model = client.sessions[params["sessionId"]] = EditorModel()
            model.apply_notification(params)
            client._changed.set()

        @self.feature("acp/sessionStatus")
        def session_status(client: TestEditor, params: JsonObject) -> None:
            client.check("acp/sessionStatus", "params", params)
            client.notifications.append(("acp/sessionStatus", params))
            client.statuses[params["sessionId"]].append(params)
            client._status_event.set()

        @self.feature("acp/documentsSynced")
        def documents_synced(client: TestEditor, params: JsonObject) -> None:
            client.check("acp/documentsSynced", "params", params)
            client.notifications.append(("acp/documentsSynced", params))
            client._changed.set()

        @self.feature("acp/terminalOutput")
        def terminal_output(client: TestEditor, params: JsonObject) -> None:
            client.check("acp/terminalOutput", "params", params)
            client.terminal_messages.append(params)
            key = params["terminalId"]
            if params.get("reset"):
                client.terminal_output[key] = params.get("data", "")
            else:
                client.terminal_output[key] += params.get("data", "")

    # -- acp helpers -----------------------------------------------------------------------
    def check(self, method: str, part: str, value: Any) -> None:
        """Every acp/* message is checked against the schema; violations fail the test."""
        try:
            validate(method, part, value)
        except AssertionError as exc:
            self.schema_errors.append(str(exc))

    async def acp(self, method: str, params: JsonObject | None = None, timeout: float = 30) -> Any:
        result = await asyncio.wait_for(
            self.protocol.send_request_async(method, params if params is not None else {}),
            timeout,
        )
        self.check(method, "result", result)
        return result

    async def new_session(self, **params: Any) -> JsonObject:
        snapshot = await self.acp("acp/newSession", params)
        self.adopt(snapshot)
        return dict(snapshot)

    def adopt(self, snapshot: JsonObject) -> EditorModel:
        """The session's model from a snapshot, plus what arrived meanwhile: notifications
        right behind the response may be read before the awaiting test resumes (as in any
        editor, they carry later seqs; stale ones are dropped)."""
        sid = snapshot["sessionId"]
        model = self.sessions[sid] = EditorModel(snapshot)
        for method, params in self.notifications:
            if method == "acp/sessionUpdate" and params["sessionId"] == sid:
                model.apply_notification(params)
        return model

    async def prompt(self, session_id: str, prompt: Any, timeout: float = 30) -> JsonObject:
        result = await self.acp(
            "acp/prompt", {"sessionId": session_id, "prompt": prompt}, timeout=timeout
        )
        return dict(result)

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 10) -> None:
        async def loop() -> None:
            while not predicate():
                self._changed.clear()
                self._status_event.clear()
                waiters = [
                    asyncio.ensure_future(self._changed.wait()),
                    asyncio.ensure_future(self._status_event.wait()),
                ]
                await asyncio.wait(waiters, timeout=0.05, return_when=asyncio.FIRST_COMPLETED)
                for w in waiters:
                    w.cancel()

        await asyncio.wait_for(loop(), timeout)

    def progress_titles(self) -> list[str]:
        """Titles of every work-done progress the server began."""
        return [
            r.title
            for reports in self.progress_reports.values()
            for r in reports
            if isinstance(r, types.WorkDoneProgressBegin)
        ]

    def status_values(self, session_id: str) -> list[str]:
        return [s["status"] for s in self.statuses[session_id]]


def _first(params: JsonObject, kind: str) -> str | None:
    for option in params.get("options", []):
        if option.get("kind") == kind:
            return str(option["optionId"])
    return None


def pick(kind: str) -> PermissionPolicy:
    """Answer every permission prompt with the first option of ``kind``."""
    return lambda params: {"outcome": {"outcome": "selected", "optionId": _first(params, kind)}}


def capabilities(profile: str, *, rich: bool = True) -> types.ClientCapabilities:
    caps = copy.deepcopy(_profile(profile))
    experimental = {"acp": {"requestPermission": rich, "saveDocument": rich, "elicitation": rich}}
    caps.experimental = experimental
    return caps


@functools.cache
def _profile(profile: str) -> types.ClientCapabilities:
    """pytest-lsp reads and structures a profile with a new converter each time (~0.1 s)."""
    return pytest_lsp.client_capabilities(profile)
