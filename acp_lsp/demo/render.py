"""Terminal rendering for ``acp-lsp demo``: streamed text, tool calls, plans, prompts."""

from __future__ import annotations

import asyncio
import difflib
import sys
from collections.abc import Callable
from typing import Any, TextIO

JsonObject = dict[str, Any]

_STATUS_ICON = {
    "pending": "…",
    "in_progress": "▶",
    "completed": "✔",
    "failed": "✘",
    "cancelled": "⊘",
}
_PLAN_ICON = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


class Renderer:
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.color = out.isatty()
        self._mode = ""  # what the last streamed text was: "agent" | "thought" | ""
        self._tool_status: dict[str, str] = {}
        self._plan: list[JsonObject] = []

    def _c(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def _line(self, text: str = "") -> None:
        self._end_stream()
        self.out.write(text + "\n")
        self.out.flush()

    def _end_stream(self) -> None:
        if self._mode:
            self.out.write("\n")
            self._mode = ""

    def note(self, text: str) -> None:
        self._line(self._c("2", f"· {text}"))

    def error(self, text: str) -> None:
        self._line(self._c("31", f"error: {text}"))

    def agents(self, agents: list[JsonObject], chosen: str) -> None:
        names = ", ".join(f"{a['name']}{' (default)' if a.get('default') else ''}" for a in agents)
        self.note(f"configured agents: {names}; using {chosen!r}")

    def session(self, snap: JsonObject) -> None:
        modes = snap.get("modes") or {}
        mode = modes.get("currentModeId")
        commands = " ".join("/" + c["name"] for c in snap.get("commands") or [])
        extra = f", mode {mode}" if mode else ""
        self.note(f"session {snap['sessionId']} on {snap['agent']}{extra}")
        if commands:
            self.note(f"slash commands: {commands}")

    def prompt(self, text: str) -> None:
        self._line(self._c("1", f"\nyou › {text}\n"))

    def update(self, update: JsonObject, rel: Callable[[str], str]) -> None:
        kind = update.get("sessionUpdate")
        if kind in ("agent_message_chunk", "agent_thought_chunk"):
            content = update.get("content") or {}
            text = content.get("text", "") if isinstance(content, dict) else ""
            mode = "agent" if kind == "agent_message_chunk" else "thought"
            if self._mode != mode:
                self._end_stream()
                self.out.write(
                    self._c("36", "agent › ") if mode == "agent" else self._c("2;3", "thinking › ")
                )
                self._mode = mode
            self.out.write(self._c("2;3", text) if mode == "thought" else text)
            self.out.flush()
        elif kind == "tool_call":
            self._tool(update.get("toolCall") or {}, rel)
        elif kind == "plan":
            entries = [e for e in update.get("entries") or [] if isinstance(e, dict)]
            if not self._plan or len(entries) != len(self._plan):
                self._line(self._c("33", "plan:"))
                for entry in entries:
                    icon = _PLAN_ICON.get(entry.get("status", ""), "[?]")
                    self._line(f"  {icon} {entry.get('content', '')}")
            else:
                for before, entry in zip(self._plan, entries, strict=True):
                    if before != entry:
                        icon = _PLAN_ICON.get(entry.get("status", ""), "[?]")
                        self._line(self._c("33", f"plan {icon} {entry.get('content', '')}"))
            self._plan = entries
        elif kind == "usage_update":
            used, size = update.get("used"), update.get("size")
            cost = update.get("cost") or {}
            money = f", {cost.get('amount')} {cost.get('currency')}" if cost else ""
            self.note(f"context: {used}/{size} tokens{money}")
        elif kind == "current_mode_update":
            self.note(f"mode: {update.get('currentModeId')}")

    def _tool(self, call: JsonObject, rel: Callable[[str], str]) -> None:
        tid = str(call.get("toolCallId"))
        status = str(call.get("status", "pending"))
        if self._tool_status.get(tid) == status:
            return
        self._tool_status[tid] = status
        icon = _STATUS_ICON.get(status, "?")
        where = ""
        locations = call.get("locations") or []
        if locations and isinstance(locations[0], dict) and locations[0].get("path"):
            loc = locations[0]
            where = f" — {rel(loc['path'])}" + (f":{loc['line']}" if loc.get("line") else "")
        self._line(
            self._c(
                "35",
                f"  {icon} [{call.get('kind', 'other')}] {call.get('title', '')}{where} ({status})",
            )
        )

    def follow(self, path: str, line: int) -> None:
        self._line(self._c("34", f"  ↪ follow-along: {path}:{line}"))

    def edit(self, path: str, old: str, new: str) -> None:
        self._line(self._c("32", f"  ✎ edit applied to your buffer {path}:"))
        for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0):
            if line.startswith(("---", "+++")):
                continue
            color = "32" if line.startswith("+") else "31" if line.startswith("-") else "2"
            self._line("     " + self._c(color, line))

    def terminal(self, params: JsonObject) -> None:
        data = params.get("data", "")
        for line in str(data).splitlines():
            self._line(self._c("2", f"  │ {line}"))
        status = params.get("exitStatus")
        if status:
            self._line(self._c("2", f"  └ exited: {status}"))

    def status(self, params: JsonObject) -> None:
        if params.get("status") == "awaiting_permission":
            self._end_stream()

    async def permission(
        self, call: JsonObject, options: list[JsonObject], ask: bool
    ) -> str | None:
        self._line(self._c("1;33", f"  ? permission: {call.get('title', 'tool call')}"))
        for item in call.get("content") or []:
            if isinstance(item, dict) and item.get("type") == "diff":
                old = item.get("oldText") or ""
                for line in difflib.unified_diff(
                    old.splitlines(), str(item.get("newText", "")).splitlines(), lineterm="", n=0
                ):
                    if not line.startswith(("---", "+++")):
                        self._line("     " + line)
        for i, option in enumerate(options, 1):
            self._line(f"     {i}) {option.get('name')} [{option.get('kind')}]")
        if not ask:
            allow = next(
                (o for o in options if o.get("kind") == "allow_once"),
                options[0] if options else None,
            )
            if allow is None:
                return None
            self._line(f"     → {allow.get('name')} (--yes)")
            return str(allow["optionId"])
        if not sys.stdin or not sys.stdin.isatty():
            self._line("     (no terminal to ask: dismissed; use --yes to allow)")
            return None
        answer = await asyncio.to_thread(input, "     choose a number (Enter = dismiss): ")
        try:
            return str(options[int(answer) - 1]["optionId"])
        except (ValueError, IndexError):
            return None

    def turn_end(self, stop: Any) -> None:
        self._line(self._c("1", f"\nturn ended: {stop}"))

    def summary(self, snap: JsonObject, rel: Callable[[str], str]) -> None:
        calls = snap.get("toolCalls") or []
        self.note(
            f"session has {len(snap.get('messages') or [])} messages and {len(calls)} tool calls "
            f"(seq {snap.get('seq')})"
        )
        for call in calls:
            review = call.get("review")
            if isinstance(review, dict):
                self.note(f"review of {call.get('title')}: {review.get('status')}")
