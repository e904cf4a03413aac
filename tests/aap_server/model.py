"""The scripted "model" and the server-side agent loop of the AAP test server (aap.md §5).

A scenario is picked per turn from the last user message (a keyword) unless the server forces
one. Each scenario is a list of assistant steps; step *k* is the reply after *k* assistant
messages since the last user message, so a turn resumed after ``tool_use`` continues the same
script. The loop runs trusted server tools (and the unexposed ``internal_lookup``) inline and
stops with ``tool_use`` while any call of the last assistant message is unresolved.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from tests.aap_server.state import AapSession, JsonObject, ServerState

INTERNAL_TOOL = "internal_lookup"  # an unexposed server tool (not in GET /meta)

# Checked in order: the first keyword found in the user text picks the scenario.
KEYWORDS = (
    "cut",
    "hang",
    "refuse",
    "fail",
    "overflow",
    "parallel",
    "weather",
    "delete",
    "mystery",
    "read",
    "write",
    "think",
)


@dataclass
class Step:
    """One assistant message and how the turn goes on after it."""

    blocks: list[JsonObject]
    stop: str = "end_turn"  # when the step has no tool_use blocks
    cut: bool = False  # close the stream right after this message, without turn_stop
    hang: bool = False  # then wait (until the client goes away) instead of finishing


@dataclass
class Context:
    session: AapSession
    text: str  # the last user message as text
    index: int  # assistant messages since that user message
    results: list[str] = field(default_factory=list)  # tool message texts since then


StepFn = Callable[[Context], Step]

# Events of the loop; the HTTP layer frames them (SSE delta / message, or JSON).
Event = tuple[str, Any]


def text(value: str) -> JsonObject:
    return {"type": "text", "text": value}


def tool_use(ctx: Context, name: str, args: JsonObject) -> JsonObject:
    return {
        "type": "tool_use",
        "toolCallId": ctx.session.next_call_id(),
        "name": name,
        "input": args,
    }


def call_or_explain(ctx: Context, name: str, args: JsonObject, client: bool) -> JsonObject:
    """A tool_use block, or a text block saying why the tool cannot be called."""
    session = ctx.session
    ok = session.has_client_tool(name) if client else session.server_tool(name) is not None
    if ok:
        return tool_use(ctx, name, args)
    return text(f"The {name} tool is not available in this session.")


def _two_steps(first: Callable[[Context], list[JsonObject]], final: str) -> StepFn:
    """First the tool calls, then a text that quotes every tool result."""

    def run(ctx: Context) -> Step:
        if ctx.index == 0:
            return Step(first(ctx))
        return Step([text(final + " " + " | ".join(ctx.results))])

    return run


def _single_tool(name: str, args: JsonObject, client: bool, final: str) -> StepFn:
    return _two_steps(lambda ctx: [call_or_explain(ctx, name, args, client)], final)


def _parallel(ctx: Context) -> list[JsonObject]:
    # aap.md §5: two client tools, one trusted and one untrusted server tool.
    return [
        call_or_explain(ctx, "read_file", {"path": "a.txt"}, True),
        call_or_explain(ctx, "read_file", {"path": "b.txt"}, True),
        call_or_explain(ctx, "get_weather", {"city": "Oslo"}, False),
        call_or_explain(ctx, "delete_records", {"table": "logs"}, False),
    ]


SCENARIOS: dict[str, StepFn] = {
    "echo": lambda ctx: Step([text(f"You said: {ctx.text}")]),
    "think": lambda ctx: Step(
        [{"type": "thinking", "thinking": "Let me think this through."}, text("Here is my answer.")]
    ),
    "cut": lambda ctx: Step([text("Partial answer that never")], cut=True),
    "hang": lambda ctx: Step([text("Working on it")], hang=True),
    "refuse": lambda ctx: Step([text("I can't help with that.")], stop="refusal"),
    "fail": lambda ctx: Step([], stop="error"),
    "overflow": lambda ctx: Step([text("The context is full")], stop="max_tokens"),
    "weather": _two_steps(
        lambda ctx: [
            text("Let me check."),
            call_or_explain(ctx, "get_weather", {"city": "Paris"}, False),
        ],
        "Weather report:",
    ),
    "delete": _single_tool("delete_records", {"table": "users"}, False, "Outcome:"),
    "mystery": _two_steps(
        lambda ctx: [tool_use(ctx, INTERNAL_TOOL, {"query": "secret"})], "Looked it up:"
    ),
    "read": _single_tool("read_file", {"path": "notes.txt"}, True, "The file says:"),
    "write": _single_tool(
        "write_file", {"path": "out.txt", "content": "hello from the agent\n"}, True, "Wrote:"
    ),
    "parallel": _two_steps(_parallel, "All done:"),
}


def pick_scenario(user_text: str, forced: str | None) -> str:
    if forced is not None:
        return forced
    lowered = user_text.lower()
    return next((k for k in KEYWORDS if k in lowered), "echo")


def run_server_tool(name: str, args: JsonObject) -> str:
    if name == "get_weather":
        return f"Sunny, 21°C in {args.get('city', '?')}"
    if name == "delete_records":
        return f"Deleted 3 rows from {args.get('table', '?')}"
    if name == INTERNAL_TOOL:
        return "42"
    return f"No such tool: {name}"


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def _last_user_index(history: list[JsonObject]) -> int:
    return max((i for i, m in enumerate(history) if m.get("role") == "user"), default=-1)


def unresolved_calls(history: list[JsonObject]) -> list[JsonObject]:
    """tool_use blocks of the last assistant message without a tool message (aap.md §5)."""
    last = max((i for i, m in enumerate(history) if m.get("role") == "assistant"), default=-1)
    if last < 0 or not isinstance(history[last].get("content"), list):
        return []
    later = history[last + 1 :]
    if any(m.get("role") == "user" for m in later):
        return []  # the conversation moved on: those calls were abandoned
    answered = {m.get("toolCallId") for m in later if m.get("role") == "tool"}
    return [
        b
        for b in history[last]["content"]
        if b.get("type") == "tool_use" and b.get("toolCallId") not in answered
    ]


def _context(session: AapSession) -> Context:
    history = session.history
    start = _last_user_index(history)
    user_text = content_text(history[start]["content"]) if start >= 0 else ""
    after = history[start + 1 :]
    return Context(
        session=session,
        text=user_text,
        index=sum(1 for m in after if m.get("role") == "assistant"),
        results=[content_text(m.get("content")) for m in after if m.get("role") == "tool"],
    )


def _find_call(history: list[JsonObject], call_id: str) -> JsonObject | None:
    for message in reversed(history):
        if message.get("role") == "assistant" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "tool_use" and block.get("toolCallId") == call_id:
                    return block  # type: ignore[no-any-return]
    return None


def _tool_message(call_id: str, content: str) -> JsonObject:
    return {"role": "tool", "toolCallId": call_id, "content": content}


async def run_turn(
    state: ServerState, session: AapSession, messages: list[JsonObject]
) -> AsyncIterator[Event]:
    """Apply the turn's messages, then run the agent loop; yields events in wire order."""
    history = session.history
    for message in messages:
        role = message.get("role")
        if role in ("user", "tool"):
            history.append(message)
        elif role == "tool_permission":
            call_id = str(message.get("toolCallId"))
            call = _find_call(history, call_id)
            if message.get("granted") is True:
                call = call or {"name": "?", "input": {}}
                result = run_server_tool(call["name"], call["input"])
                history.append(_tool_message(call_id, result))
                if not state.silent_grants:
                    yield "tool_result", {"toolCallId": call_id, "content": result}
            else:
                reason = message.get("reason")
                denial = f"Tool call denied: {reason}" if reason else "Tool call denied"
                history.append(_tool_message(call_id, denial))
            # tool_permission messages are never stored (aap.md §2)
    for _ in range(10):  # a scripted loop never needs more steps; bound it anyway
        if unresolved_calls(history):
            yield "turn_stop", "tool_use"
            return
        ctx = _context(session)
        step = SCENARIOS[pick_scenario(ctx.text, state.scenario)](ctx)
        message = {"role": "assistant", "content": step.blocks}
        if step.blocks:
            history.append(message)
            yield "message", message
        if step.cut:
            yield "cut", None
            return
        if step.hang:
            await asyncio.sleep(state.hang_seconds)
            yield "turn_stop", "end_turn"
            return
        calls = [b for b in step.blocks if b.get("type") == "tool_use"]
        if not calls:
            yield "turn_stop", step.stop
            return
        for call in calls:
            ref = session.server_tool(call["name"])
            if call["name"] == INTERNAL_TOOL or (ref is not None and ref.get("trust") is True):
                result = run_server_tool(call["name"], call["input"])
                history.append(_tool_message(call["toolCallId"], result))
                yield "tool_result", {"toolCallId": call["toolCallId"], "content": result}
    yield "turn_stop", "error"
