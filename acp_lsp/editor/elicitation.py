"""Agent questions (ACP elicitation/create) as editor prompts.

Editors that declare ``experimental.acp.elicitation`` get the agent's request as it was sent
(``acp/elicitation``) and render the form themselves. Plain LSP editors get one
``window/showMessageRequest`` per field whose answers can be picked from a list (enums,
booleans); a form that needs free text cannot be answered there and is declined, saying why.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from acp_lsp import protocol as p

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]
Ask = Callable[[str, list[str]], Awaitable[str | None]]
"""Ask one question with action titles; the chosen title or None (dismissed)."""

CANCEL: JsonObject = {"action": "cancel"}
DECLINE: JsonObject = {"action": "decline"}


def checked_answer(result: Any) -> JsonObject:
    """An editor's answer as ACP CreateElicitationResponse; anything else is a cancel."""
    if not isinstance(result, dict) or result.get("action") not in ("accept", "decline", "cancel"):
        return dict(CANCEL)
    answer: JsonObject = {"action": result["action"]}
    if result["action"] == "accept" and isinstance(result.get("content"), dict):
        answer["content"] = result["content"]
    return answer


def _choices(field: JsonObject) -> list[tuple[str, Any]] | None:
    """(title, value) pairs when the field's answer is picked from a list."""
    if field.get("type") == "boolean":
        return [("Yes", True), ("No", False)]
    if isinstance(field.get("enum"), list):
        return [(str(v), v) for v in field["enum"]]
    if isinstance(field.get("oneOf"), list):
        out = []
        for option in field["oneOf"]:
            if isinstance(option, dict) and "const" in option:
                out.append((str(option.get("title") or option["const"]), option["const"]))
        return out or None
    return None


async def ask_plainly(request: JsonObject, ask: Ask, say: Callable[[str], None]) -> JsonObject:
    """Answer a form through list questions, or decline it when it needs typing."""
    message = str(request.get("message") or "The agent asks:")
    if request.get("mode") == "url":
        url = request.get("url")
        chosen = await ask(f"{message}\n{url}", ["Open", "Cancel"])
        if chosen != "Open":
            return dict(DECLINE if chosen == "Cancel" else CANCEL)
        return {"action": "accept"}
    schema = request.get("requestedSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    props = props if isinstance(props, dict) else {}
    required = set(schema.get("required") or []) if isinstance(schema, dict) else set()
    typed = [name for name, f in props.items() if isinstance(f, dict) and _choices(f) is None]
    if any(name in required for name in typed):
        say(
            f"The agent asked for {', '.join(typed)}: this editor can only pick from lists, "
            "so the question was declined (use an editor with acp elicitation support)."
        )
        return dict(DECLINE)
    content: JsonObject = {}
    for name, field in props.items():
        choices = _choices(field) if isinstance(field, dict) else None
        if choices is None:
            continue
        label = field.get("title") or field.get("description") or name
        chosen = await ask(f"{message}\n{label}", [title for title, _ in choices])
        if chosen is None:
            return dict(CANCEL)
        content[name] = next(value for title, value in choices if title == chosen)
    return {"action": "accept", "content": content}


class Elicitations:
    def __init__(
        self,
        rich_editor: Callable[[], bool],
        send_request: Callable[[str, JsonObject], Awaitable[Any]],
        notify: Callable[[str, JsonObject], None],
        ask: Ask,
        say: Callable[[str], None],
    ) -> None:
        self._rich = rich_editor
        self._send = send_request
        self._notify = notify
        self._ask = ask
        self._say = say

    async def elicit(self, session_id: str | None, agent: str, request: JsonObject) -> JsonObject:
        try:
            if self._rich():
                params: JsonObject = {"agent": agent, "request": request}
                if session_id is not None:
                    params["sessionId"] = session_id
                if isinstance(request.get("toolCallId"), str):
                    params["toolCallId"] = request["toolCallId"]
                return checked_answer(await self._send(p.ACP_ELICITATION, params))
            return await ask_plainly(request, self._ask, self._say)
        except Exception as exc:  # an editor that fails the prompt: the agent gets a cancel
            log.info("elicitation failed in the editor: %s", exc)
            return dict(CANCEL)

    def complete(self, session_id: str | None, agent: str, elicitation_id: str) -> None:
        if not self._rich():
            return
        params: JsonObject = {"agent": agent, "elicitationId": elicitation_id}
        if session_id is not None:
            params["sessionId"] = session_id
        self._notify(p.ACP_ELICITATION_COMPLETE, params)
