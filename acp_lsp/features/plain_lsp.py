"""Agents in any LSP editor, no plugin: workspace/executeCommand commands, code actions and
a transcript document (DESIGN §2 stays as it is; docs/protocol.md "Plain LSP").

Commands start turns in the background and answer at once (editors wait synchronously on
executeCommand); the answer streams into the transcript, status comes as $/progress and
window/showMessage, permissions as window/showMessageRequest, follow-along as
window/showDocument. Editors that declared ``experimental.acp`` have their own front end:
they get no code actions from here.
"""

from __future__ import annotations

import logging
import os
import re
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import to_fs_path

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError
from acp_lsp.server import AcpLanguageServer

if TYPE_CHECKING:
    from acp_lsp.session import Session

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]

NEW_SESSION = "acp.newSession"
PROMPT = "acp.prompt"
ASK = "acp.ask"
CANCEL = "acp.cancel"
SET_MODE = "acp.setMode"
REVIEW_ACCEPT = "acp.reviewAccept"
REVIEW_REJECT = "acp.reviewReject"
REVIEW_CHANGE = "acp.reviewChange"
TOGGLE_FOLLOW = "acp.toggleFollow"
OPEN_TRANSCRIPT = "acp.openTranscript"
COMMANDS = (
    NEW_SESSION,
    PROMPT,
    ASK,
    CANCEL,
    SET_MODE,
    REVIEW_ACCEPT,
    REVIEW_REJECT,
    REVIEW_CHANGE,
    TOGGLE_FOLLOW,
    OPEN_TRANSCRIPT,
)

# `# acp: add type hints`, `// acp: …`, `-- acp: …`, `; acp: …`, `/* acp: … */`, `<!-- acp: … -->`
MARKER = re.compile(r"(?:#|//|--|;|/\*|<!--)\s*acp:\s*(?P<ask>.+?)\s*(?:\*/|-->)?\s*$")


class PlainEditor:
    """The plain-LSP side of one server: its current session and the transcripts."""

    def __init__(self, server: AcpLanguageServer) -> None:
        # built on the first command, so start-up does not import the transcript machinery
        from acp_lsp.editor.transcript import Transcripts
        from acp_lsp.history.paths import data_dir

        self.server = server
        self.transcripts = Transcripts(server, data_dir(os.environ) / "transcripts")
        server.editor.transcripts = self.transcripts
        self.current: str | None = None

    def _say(self, message: str, level: types.MessageType = types.MessageType.Info) -> None:
        self.server.window_show_message(types.ShowMessageParams(type=level, message=message))

    def session(self, session_id: Any = None) -> Session:
        sid = session_id if isinstance(session_id, str) else self.current
        if sid is None:
            raise BackendError(p.UNKNOWN_SESSION, "no session yet: run acp.newSession or ask first")
        return self.server.hub.session(sid)

    async def new_session(self, agent: Any = None) -> Session:
        name = agent if isinstance(agent, str) and agent else None
        await self.server.prepare_agent(name)
        session = await self.server.hub.new_session(name, None, None)
        self.server.editor.announce(session)
        self.current = session.session_id
        await self.transcripts.start(session)
        return session

    async def prompt(self, blocks: list[JsonObject], session_id: Any = None) -> JsonObject:
        session = (
            self.session(session_id)
            if session_id is not None or self.current in self.server.hub.sessions
            else await self.new_session()
        )
        if not self.transcripts.has(session.session_id):
            await self.transcripts.start(session)
        self.server.tasks.spawn(self._turn(session, blocks), name="plain turn")
        return {
            "sessionId": session.session_id,
            "transcript": self.transcripts.uri(session.session_id),
        }

    async def _turn(self, session: Session, blocks: list[JsonObject]) -> None:
        try:
            stop = await self.server.hub.prompt(session.session_id, blocks)
            if stop != "end_turn":
                self._say(f"{session.agent}: the turn ended ({stop})")
        except BackendError as exc:
            self._say(
                f"{session.agent}: {self.server.secrets.redact(exc.message)}",
                types.MessageType.Error,
            )
        finally:
            await self.transcripts.flush(session.session_id)


def _text_of(server: AcpLanguageServer, uri: str, rng: types.Range | None) -> tuple[str, str]:
    """(selected text or the whole line, a human label of where it is)."""
    doc = server.workspace.get_text_document(uri)
    lines = doc.lines
    path = to_fs_path(uri) or uri
    name = os.path.relpath(path, server.hub.default_cwd()) if path.startswith("/") else path
    if rng is None:
        return doc.source, name
    start, end = rng.start.line, rng.end.line
    if rng.end.character == 0 and end > start:
        end -= 1  # a selection that ends at the start of a line leaves that line out
    text = "".join(lines[start : end + 1])
    return text, f"{name}, lines {start + 1}-{end + 1}"


def ask_blocks(server: AcpLanguageServer, args: JsonObject) -> list[JsonObject]:
    uri = str(args.get("uri") or "")
    raw = args.get("range")
    rng = server.protocol._converter.structure(raw, types.Range) if isinstance(raw, dict) else None
    text, where = _text_of(server, uri, rng)
    instruction = str(args.get("instruction") or "Look at this")
    diagnostic = args.get("diagnostic")
    if isinstance(diagnostic, dict) and diagnostic.get("message"):
        instruction += f"\nThe editor reports: {diagnostic['message']}"
    return [
        {"type": "text", "text": f"{instruction}\n({where})"},
        {"type": "resource", "resource": {"uri": uri, "text": text, "mimeType": "text/plain"}},
    ]


def code_actions(
    server: AcpLanguageServer, params: types.CodeActionParams
) -> list[types.CodeAction]:
    uri = params.text_document.uri
    doc = server.workspace.get_text_document(uri)
    agent = server.settings.default
    title = server.settings.agents[agent].title if agent in server.settings.agents else None
    who = title or agent
    rng = params.range
    base: JsonObject = {"uri": uri, "range": server.protocol._converter.unstructure(rng)}
    actions: list[types.CodeAction] = []

    def action(label: str, kind: str, instruction: str, **extra: Any) -> None:
        args = {**base, "instruction": instruction, **extra}
        actions.append(
            types.CodeAction(
                title=label,
                kind=kind,
                command=types.Command(title=label, command=ASK, arguments=[args]),
                diagnostics=extra.pop("diagnostics", None),
            )
        )

    for diag in params.context.diagnostics:
        raw = server.protocol._converter.unstructure(diag)
        action(
            f"Ask {who} to fix: {diag.message[:60]}",
            types.CodeActionKind.QuickFix,
            "Fix this problem.",
            diagnostic=raw,
        )
    for line in range(rng.start.line, min(rng.end.line, len(doc.lines) - 1) + 1):
        found = MARKER.search(doc.lines[line].rstrip("\n")) if line < len(doc.lines) else None
        if found:
            marker_range = {
                "start": {"line": line, "character": 0},
                "end": {"line": line + 1, "character": 0},
            }
            actions.append(
                types.CodeAction(
                    title=f"Ask {who}: {found['ask']}",
                    kind=types.CodeActionKind.RefactorRewrite,
                    command=types.Command(
                        title=found["ask"],
                        command=ASK,
                        arguments=[
                            {"uri": uri, "range": marker_range, "instruction": found["ask"]}
                        ],
                    ),
                )
            )
    if rng.start != rng.end:
        action(f"Ask {who} to explain this", types.CodeActionKind.Empty, "Explain this code.")
        action(
            f"Ask {who} to improve this", types.CodeActionKind.RefactorRewrite, "Improve this code."
        )
    return review_actions(server, uri, rng.start.line) + actions


def review_actions(server: AcpLanguageServer, uri: str, line: int) -> list[types.CodeAction]:
    """Keep or reject the agent's change at ``line``, or every change in the file
    (``acp/reviewEdit`` by hunk and by file, through the command REVIEW_CHANGE)."""
    real = os.path.realpath(to_fs_path(uri) or "")
    actions: list[types.CodeAction] = []
    files: dict[str, JsonObject] = {}

    def add(title: str, args: JsonObject) -> None:
        command = types.Command(title=title, command=REVIEW_CHANGE, arguments=[args])
        actions.append(types.CodeAction(title=title, kind="source.review", command=command))

    for session_id, call_id, change, hunk in server.editor.review.decide.hunks_at(real, line):
        target = {"sessionId": session_id, "toolCallId": call_id, "path": change.path}
        add(
            f"Keep this change ({hunk.lines()})", {**target, "hunk": hunk.index, "action": "accept"}
        )
        add(
            f"Reject this change ({hunk.lines()})",
            {**target, "hunk": hunk.index, "action": "reject"},
        )
        files.setdefault(session_id, {"sessionId": session_id, "path": change.path})
    for target in files.values():
        add("Keep every change in this file", {**target, "action": "accept"})
        add("Reject every change in this file", {**target, "action": "reject"})
    return actions


def register(server: AcpLanguageServer) -> None:
    state: dict[str, PlainEditor] = {}

    def plain() -> PlainEditor:
        if "editor" not in state:
            state["editor"] = PlainEditor(server)
        return state["editor"]

    def errors(fn: Any) -> Any:
        async def wrapper(server: AcpLanguageServer, *args: Any) -> Any:
            try:
                return await fn(*args)
            except BackendError as exc:
                message = server.secrets.redact(exc.message)
                server.window_show_message(
                    types.ShowMessageParams(type=types.MessageType.Error, message=message)
                )
                raise JsonRpcException(code=exc.code, message=message) from None

        return wrapper

    @server.command(NEW_SESSION)
    @errors
    async def new_session(agent: Any = None) -> JsonObject:
        session = await plain().new_session(agent)
        return {
            "sessionId": session.session_id,
            "transcript": plain().transcripts.uri(session.session_id),
        }

    @server.command(PROMPT)
    @errors
    async def prompt(text: Any = None, session_id: Any = None) -> JsonObject:
        if not isinstance(text, str) or not text.strip():
            raise BackendError(p.INVALID_PARAMS, f"{PROMPT}: the first argument is the prompt text")
        return await plain().prompt([{"type": "text", "text": text}], session_id)

    @server.command(ASK)
    @errors
    async def ask(args: Any = None, session_id: Any = None) -> JsonObject:
        if not isinstance(args, dict) or not isinstance(args.get("uri"), str):
            raise BackendError(p.INVALID_PARAMS, f"{ASK}: expected {{uri, range?, instruction}}")
        return await plain().prompt(ask_blocks(server, args), session_id)

    @server.command(CANCEL)
    @errors
    async def cancel(session_id: Any = None) -> JsonObject:
        await server.hub.cancel(plain().session(session_id).session_id)
        return {}

    @server.command(SET_MODE)
    @errors
    async def set_mode(mode_id: Any = None, session_id: Any = None) -> JsonObject:
        if not isinstance(mode_id, str):
            raise BackendError(p.INVALID_PARAMS, f"{SET_MODE}: the first argument is the mode id")
        await server.hub.set_mode(plain().session(session_id).session_id, mode_id)
        return {}

    async def review(action: str, session_id: Any) -> JsonObject:
        session = plain().session(session_id)
        result = await server.editor.review.decide.review(session, action, None, None)
        await plain().transcripts.flush(session.session_id)
        return result

    @server.command(REVIEW_ACCEPT)
    @errors
    async def review_accept(session_id: Any = None) -> JsonObject:
        return await review("accept", session_id)

    @server.command(REVIEW_REJECT)
    @errors
    async def review_reject(session_id: Any = None) -> JsonObject:
        return await review("reject", session_id)

    @server.command(REVIEW_CHANGE)
    @errors
    async def review_change(args: Any = None) -> JsonObject:
        if not isinstance(args, dict) or args.get("action") not in ("accept", "reject"):
            raise BackendError(
                p.INVALID_PARAMS, f"{REVIEW_CHANGE}: expected {{sessionId, action, path, ...}}"
            )
        session = plain().session(args.get("sessionId"))
        hunk = args.get("hunk")
        if hunk is not None and (not isinstance(hunk, int) or isinstance(hunk, bool)):
            raise BackendError(p.INVALID_PARAMS, f"{REVIEW_CHANGE}: hunk is a number, not {hunk!r}")
        result = await server.editor.review.decide.review(
            session, args["action"], args.get("toolCallId"), args.get("path"), hunk
        )
        failed = [f for f in result["files"] if f.get("message")]
        if failed:
            plain()._say(f"{failed[0]['path']}: {failed[0]['message']}", types.MessageType.Warning)
        await plain().transcripts.flush(session.session_id)
        return result

    @server.command(TOGGLE_FOLLOW)
    @errors
    async def toggle_follow(session_id: Any = None) -> JsonObject:
        sid = plain().session(session_id).session_id
        follower = server.editor.follower
        enabled = not follower.enabled(sid)
        follower.set_enabled(sid, enabled)
        return {"enabled": enabled}

    @server.command(OPEN_TRANSCRIPT)
    @errors
    async def open_transcript(session_id: Any = None) -> JsonObject:
        session = plain().session(session_id)
        uri = await plain().transcripts.start(session, show=True)
        return {"uri": uri}

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[
                types.CodeActionKind.QuickFix,
                types.CodeActionKind.RefactorRewrite,
                types.CodeActionKind.Empty,
            ]
        ),
    )
    def on_code_action(
        server: AcpLanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        # the range editors ask code actions for is their selection (the editor tools' answer)
        server.editor_tools.last_selection = (params.text_document.uri, params.range)
        if server.protocol.client_acp:
            return None  # an acp/* front end has its own ways to ask
        try:
            return code_actions(server, params) or None
        except Exception as exc:  # a document the server does not have, a bad range
            log.info("no code actions: %s", exc)
            return None
