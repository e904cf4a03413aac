"""Permission prompts: rules first, then the editor; never blocking, exactly one answer each.

Editors that declared ``requestPermission`` get ``acp/requestPermission``; others get
``window/showMessageRequest`` with one action per option. A dismissed prompt answers
``reject_once`` when offered, else ``cancelled``; a cancelled turn answers every pending
prompt ``cancelled`` and withdraws it from the editor (``$/cancelRequest``).
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
import os
import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from acp_lsp.backends.base import PermissionAnswer
from acp_lsp.config import PermissionRule
from acp_lsp.session import Session, named_paths

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]
CANCELLED: JsonObject = {"outcome": "cancelled"}

# (method, params, msg_id) -> the editor's raw answer; raises on error. The request is written
# at the call, so the status that points at a prompt can follow it.
SendRequest = Callable[[str, JsonObject, str], Awaitable[Any]]
Withdraw = Callable[[str], None]


def rule_matches(rule: PermissionRule, tool_call: JsonObject) -> bool:
    if rule.kind is not None and tool_call.get("kind") != rule.kind:
        return False
    if rule.title is not None:
        title = tool_call.get("title")
        if not isinstance(title, str):
            return False
        try:
            if re.search(rule.title, title) is None:
                return False
        except re.error as exc:  # a bad pattern in the settings matches nothing
            log.warning("permission rule title %r is not a valid regex: %s", rule.title, exc)
            return False
    if rule.path is not None:
        # normalised first: "/ws/../etc/passwd" must not pass for a "/ws/*" rule
        # judged where the path lands: '..' and symlinks out of a folder must not match it
        paths = [os.path.realpath(path) for path in named_paths(tool_call)]
        # a path rule matches only when every location of the call matches
        if not paths or not all(fnmatch.fnmatchcase(path, rule.path) for path in paths):
            return False
    return True


def pick_option(options: list[JsonObject], kinds: tuple[str, ...]) -> str | None:
    for kind in kinds:
        for option in options:
            if option.get("kind") == kind and isinstance(option.get("optionId"), str):
                return str(option["optionId"])
    return None


def dismissed(options: list[JsonObject]) -> JsonObject:
    option_id = pick_option(options, ("reject_once",))
    if option_id is None:
        return dict(CANCELLED)
    return {"outcome": "selected", "optionId": option_id}


def describe(tool_call: JsonObject) -> str:
    """One line for a plain prompt: the agent's title and what the call will touch."""
    title = tool_call.get("title") or tool_call.get("toolCallId") or "tool call"
    parts = [f"Agent wants to run: {title}"]
    paths = named_paths(tool_call)
    if paths:
        parts.append("touching " + ", ".join(dict.fromkeys(paths)))
    raw = tool_call.get("rawInput")
    if isinstance(raw, dict) and isinstance(raw.get("command"), str):
        parts.append(f"command: {raw['command']}")
    return " — ".join(parts)


@dataclass
class _Pending:
    session_id: str
    msg_id: str
    sent: bool = False
    future: asyncio.Future[PermissionAnswer] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def answer(self, answer: PermissionAnswer) -> bool:
        """Idempotent: only the first answer counts."""
        if self.future.done():
            return False
        self.future.set_result(answer)
        return True


class PermissionBroker:
    def __init__(
        self,
        send_request: SendRequest,
        withdraw: Withdraw,
        *,
        rules: Callable[[], list[PermissionRule]],
        rich_editor: Callable[[], bool],
        on_change: Callable[[Session, int], None] | None = None,
    ) -> None:
        self._send_request = send_request
        self._withdraw = withdraw
        self._rules = rules
        self._rich = rich_editor
        self._on_change = on_change
        self._pending: dict[str, _Pending] = {}
        self.asked = 0
        self.answered = 0

    def pending_count(self, session_id: str) -> int:
        """The prompts of the session that the editor has been sent and not yet answered."""
        return sum(1 for p in self._pending.values() if p.session_id == session_id and p.sent)

    def _by_rule(
        self, tool_call: JsonObject, options: list[JsonObject], unasked: PermissionAnswer | None
    ) -> PermissionAnswer | None:
        for rule in self._rules():
            if not rule_matches(rule, tool_call):
                continue
            if rule.action == "ask":
                return None
            kinds = (
                ("allow_once", "allow_always")
                if rule.action == "allow"
                else ("reject_once", "reject_always")
            )
            option_id = pick_option(options, kinds)
            if option_id is None:
                return None
            return PermissionAnswer({"outcome": "selected", "optionId": option_id})
        return unasked  # no rule says otherwise

    async def ask(
        self,
        session: Session,
        tool_call: JsonObject,
        options: list[JsonObject],
        unasked: PermissionAnswer | None = None,
    ) -> PermissionAnswer:
        """``unasked``: the answer when no rule matches, instead of asking the editor."""
        if session.status in ("cancelling", "failed", "closed"):
            # asked after a cancel (or for a dead session): never shown, never approved
            return PermissionAnswer(dict(CANCELLED))
        ruled = self._by_rule(tool_call, options, unasked)
        if ruled is not None:
            return ruled
        pending = _Pending(session.session_id, f"acp-permission-{uuid.uuid4().hex}")
        self._pending[pending.msg_id] = pending
        self.asked += 1
        ask_task = asyncio.ensure_future(self._ask_editor(session, tool_call, options, pending))
        try:
            return await pending.future
        finally:
            self._pending.pop(pending.msg_id, None)
            self.answered += 1
            if not ask_task.done():
                ask_task.cancel()
                self._withdraw(pending.msg_id)
            self._changed(session)

    def _sent(self, session: Session, pending: _Pending) -> None:
        # The status saying "awaiting permission" follows the prompt: an editor that shows it
        # already has the prompt to show.
        pending.sent = True
        self._changed(session)

    def _changed(self, session: Session) -> None:
        if self._on_change is not None:
            self._on_change(session, self.pending_count(session.session_id))

    async def _ask_editor(
        self,
        session: Session,
        tool_call: JsonObject,
        options: list[JsonObject],
        pending: _Pending,
    ) -> None:
        try:
            if self._rich():
                method, read = "acp/requestPermission", self._from_rich
                params: JsonObject = {
                    "sessionId": session.session_id,
                    "toolCall": tool_call,
                    "options": options,
                }
            else:
                method, read = "window/showMessageRequest", self._from_plain
                actions = [{"title": str(o.get("name", o.get("optionId")))} for o in options]
                params = {"type": 3, "message": describe(tool_call), "actions": actions}
            reply = self._send_request(method, params, pending.msg_id)
            self._sent(session, pending)
            pending.answer(read(await reply, options))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # an editor error is a dismissed prompt, not a hang
            log.info("permission prompt failed: %s", exc)
            pending.answer(PermissionAnswer(dismissed(options)))

    @staticmethod
    def _from_rich(raw: Any, options: list[JsonObject]) -> PermissionAnswer:
        raw = raw if isinstance(raw, dict) else {}
        outcome = raw.get("outcome")
        reason = raw.get("reason") if isinstance(raw.get("reason"), str) else None
        if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
            option_id = outcome.get("optionId")
            if any(o.get("optionId") == option_id for o in options):
                return PermissionAnswer({"outcome": "selected", "optionId": option_id}, reason)
        # cancelled, unknown outcomes and unknown option ids are never approval
        return PermissionAnswer(dismissed(options), reason)

    @staticmethod
    def _from_plain(raw: Any, options: list[JsonObject]) -> PermissionAnswer:
        # a dict from a raw reply, a MessageActionItem from pygls
        title = raw.get("title") if isinstance(raw, dict) else getattr(raw, "title", None)
        for option in options:
            if title is not None and str(option.get("name", option.get("optionId"))) == title:
                return PermissionAnswer({"outcome": "selected", "optionId": option["optionId"]})
        return PermissionAnswer(dismissed(options))

    def cancel_session(self, session_id: str) -> int:
        """Answer every pending prompt of the session ``cancelled``; returns how many."""
        count = 0
        for item in list(self._pending.values()):
            if item.session_id == session_id and item.answer(PermissionAnswer(dict(CANCELLED))):
                count += 1
        return count

    def cancel_all(self) -> None:
        for item in list(self._pending.values()):
            item.answer(PermissionAnswer(dict(CANCELLED)))
