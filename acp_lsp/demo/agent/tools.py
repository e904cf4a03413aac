"""The demo turn's tool calls: read a file, edit it behind a permission, run a terminal."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.schema import PermissionOption, ToolCallUpdate
from pydantic import ValidationError

from acp_lsp.demo.agent.catalog import LINE_COUNT_SCRIPT
from acp_lsp.demo.agent.prompt import edited_text
from acp_lsp.demo.agent.stream import TurnCancelled, TurnStream, status_update, text_content

log = logging.getLogger(__name__)

# The client answered with an error, or with a result that is not what the method returns.
CLIENT_ERRORS = (RequestError, ValidationError)

PERMISSION_OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


class ToolSteps(TurnStream):
    """Tool-call steps; `_target` is the file the turn works on."""

    _target: Path
    _old_text: str | None = None

    async def _read(self) -> None:
        path, rel, call_id = self._target, self._rel(self._target), f"t{self._n}-read"
        await self._tool(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "title": f"Read {rel}",
                "kind": "read",
                "status": "pending",
                "locations": [{"path": str(path), "line": 1}],
                "rawInput": {"path": str(path)},
            }
        )
        await self._tool(
            {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"}
        )
        text, source = await self._read_text(path)
        if text is None:
            await self._tool(status_update(call_id, "failed", f"{rel} does not exist yet."))
            await self._say(f"`{rel}` does not exist yet; I would create it.")
            return
        self._old_text = text
        lines = text.splitlines()
        await self._tool(status_update(call_id, "completed", f"{len(lines)} lines"))
        first = lines[0] if lines else ""
        await self._say(f"The first line of `{rel}` ({source}) reads:\n\n> {first}\n\n")

    async def _read_text(self, path: Path) -> tuple[str | None, str]:
        if self._caps.read:
            try:
                response = await self._race(
                    lambda: self._conn.read_text_file(session_id=self._sid, path=str(path))
                )
            except CLIENT_ERRORS as exc:
                log.info("fs/read_text_file %s failed: %s", path, exc)
                return None, "missing"
            return response.content, "from your editor, unsaved changes included"
        try:
            return path.read_text(encoding="utf-8"), "from disk"
        except (OSError, UnicodeDecodeError):
            return None, "missing"

    async def _edit(self) -> None:
        path, rel, call_id = self._target, self._rel(self._target), f"t{self._n}-edit"
        old, new = self._old_text, edited_text(path, self._old_text, self._n)
        diff: dict[str, Any] = {"type": "diff", "path": str(path), "newText": new}
        if old is not None:
            diff["oldText"] = old
        location = {"path": str(path), "line": 2 if old else 1}
        await self._tool(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "title": f"Edit {rel}",
                "kind": "edit",
                "status": "pending",
                "locations": [location],
                "content": [diff],
                "rawInput": {"path": str(path), "line": location["line"]},
            }
        )
        if not await self._allowed(call_id, rel, location, diff):
            await self._tool(
                status_update(call_id, "failed", f"Edit rejected: {rel} was left unchanged.")
            )
            await self._say(f"All right, I left `{rel}` as it was.")
            return
        await self._tool(
            {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"}
        )
        error = await self._write(path, new)
        if error is not None:
            await self._tool(status_update(call_id, "failed", f"Could not write {rel}: {error}"))
            await self._say(f"I could not write `{rel}`: {error}")
            return
        await self._tool(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "status": "completed",
                "content": [diff],
            }
        )
        await self._say(f"I added a review note to `{rel}`.")

    async def _allowed(
        self, call_id: str, rel: str, location: dict[str, Any], diff: dict[str, Any]
    ) -> bool:
        if self._session.always_allow_edits:
            return True
        tool_call = ToolCallUpdate.model_validate(
            {
                "toolCallId": call_id,
                "title": f"Edit {rel}",
                "kind": "edit",
                "status": "pending",
                "locations": [location],
                "content": [diff],
            }
        )
        options = [PermissionOption.model_validate(o) for o in PERMISSION_OPTIONS]
        try:
            response = await self._race(
                lambda: self._conn.request_permission(
                    session_id=self._sid, tool_call=tool_call, options=options
                )
            )
        except CLIENT_ERRORS as exc:
            log.info("permission request failed: %s", exc)
            return False
        outcome = response.outcome.model_dump(by_alias=True)
        if outcome.get("outcome") != "selected":
            self._check()  # a cancelled turn stops here; a dismissed prompt is a reject
            return False
        kind = next(
            (o["kind"] for o in PERMISSION_OPTIONS if o["optionId"] == outcome.get("optionId")),
            None,
        )
        if kind == "allow_always":
            self._session.always_allow_edits = True
        return kind in ("allow_once", "allow_always")

    async def _write(self, path: Path, content: str) -> str | None:
        """Write through the client when it offers fs writes, else to disk ourselves."""
        if self._caps.write:
            try:
                await self._race(
                    lambda: self._conn.write_text_file(
                        session_id=self._sid, path=str(path), content=content
                    )
                )
            except CLIENT_ERRORS as exc:
                return _describe(exc)
            return None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        except OSError as exc:
            return str(exc)
        return None

    async def _run_check(self) -> None:
        call_id, cwd = f"t{self._n}-run", str(self._session.cwd)
        args = ["-c", LINE_COUNT_SCRIPT]
        await self._tool(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "title": "Count the lines of the workspace files",
                "kind": "execute",
                "status": "pending",
                "rawInput": {"command": sys.executable, "args": args, "cwd": cwd},
            }
        )
        try:
            created = await self._race(
                lambda: self._conn.create_terminal(
                    session_id=self._sid,
                    command=sys.executable,
                    args=args,
                    cwd=cwd,
                    output_byte_limit=16_384,
                )
            )
        except CLIENT_ERRORS as exc:
            await self._tool(
                status_update(call_id, "failed", f"Could not start the command: {_describe(exc)}")
            )
            return
        terminal_id = created.terminal_id
        terminal = [{"type": "terminal", "terminalId": terminal_id}]
        await self._tool(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "status": "in_progress",
                "content": terminal,
            }
        )
        try:
            exited = await self._race(
                lambda: self._conn.wait_for_terminal_exit(
                    session_id=self._sid, terminal_id=terminal_id
                )
            )
            output = await self._race(
                lambda: self._conn.terminal_output(session_id=self._sid, terminal_id=terminal_id)
            )
        except TurnCancelled:
            await self._release(terminal_id, kill=True)
            raise
        except CLIENT_ERRORS as exc:
            await self._release(terminal_id, kill=True)
            await self._tool(
                status_update(call_id, "failed", f"The terminal failed: {_describe(exc)}")
            )
            return
        await self._release(terminal_id, kill=False)
        code = exited.exit_code
        update = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call_id,
            "status": "completed" if code == 0 else "failed",
            "content": terminal,
            "rawOutput": {"exitCode": code, "signal": exited.signal, "output": output.output},
        }
        # A replayed session has no live terminal any more: keep the output as text.
        history = {**update, "content": [text_content(output.output)]}
        await self._tool(update, history)
        files = len([line for line in output.output.splitlines() if line.strip()])
        await self._say(f"The check exited with code {code} and listed {files} files.")

    async def _release(self, terminal_id: str, *, kill: bool) -> None:
        """Best effort: a cancelled turn still frees its terminal."""
        try:
            if kill:
                await asyncio.wait_for(
                    self._conn.kill_terminal(session_id=self._sid, terminal_id=terminal_id), 2.0
                )
            await asyncio.wait_for(
                self._conn.release_terminal(session_id=self._sid, terminal_id=terminal_id), 2.0
            )
        except (*CLIENT_ERRORS, ConnectionError, TimeoutError) as exc:
            log.info("terminal %s cleanup failed: %s", terminal_id, exc)


def _describe(exc: Exception) -> str:
    """One line for the user: the error message, and its data when there is some."""
    text = (str(exc).splitlines() or [type(exc).__name__])[0]
    data = getattr(exc, "data", None)
    return f"{text} ({json.dumps(data, default=str)})" if data else text
