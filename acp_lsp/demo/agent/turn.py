"""One prompt turn of the demo agent: a deterministic script over the real ACP methods.

A full turn streams a thought, a plan, message text, a `read` tool call (through
`fs/read_text_file` when the client offers it), an `edit` tool call behind
`session/request_permission`, an `execute` tool call in a client terminal, a usage update,
then ends. Slash commands and the session mode pick a subset; "slow" slows it down.
"""

from __future__ import annotations

from acp.interfaces import Client

from acp_lsp.demo.agent.catalog import COMMANDS, MODEL_VALUES
from acp_lsp.demo.agent.prompt import PromptInfo, resolve_target
from acp_lsp.demo.agent.session import DemoSession, now_iso
from acp_lsp.demo.agent.stream import ClientCaps, TurnCancelled
from acp_lsp.demo.agent.tools import ToolSteps


class DemoTurn(ToolSteps):
    def __init__(
        self,
        conn: Client,
        session: DemoSession,
        prompt: PromptInfo,
        caps: ClientCaps,
        delay: float,
    ) -> None:
        super().__init__(conn, session, caps, delay, prompt.slow)
        self._prompt = prompt
        self._plan: list[dict[str, str]] = []
        self._target = resolve_target(session.cwd, prompt)
        self._old_text = None

    async def run(self) -> str:
        """Play the turn; the stop reason."""
        try:
            await self._play()
        except TurnCancelled:
            return "cancelled"
        return "cancelled" if self._cancelled.is_set() else "end_turn"

    async def _set_plan(self, index: int | None = None, status: str = "") -> None:
        if index is not None:
            self._plan[index]["status"] = status
        await self._send({"sessionUpdate": "plan", "entries": [dict(e) for e in self._plan]})
        await self._pause()

    async def _play(self) -> None:
        self._record_prompt()
        command = self._prompt.command
        if command == "help":
            await self._say(_help_text())
            return
        if command is not None and command not in {c["name"] for c in COMMANDS}:
            await self._say(f"I don't know `/{command}`. Try `/help`.")
            return
        steps = self._steps()
        rel = self._rel(self._target)
        await self._think(
            f"The user asked: {self._prompt.text[:80] or '(nothing)'}. "
            f"The file to look at is {rel}. Let me plan this."
        )
        if self._session.title is None:
            self._session.title = (self._prompt.text or "Demo session")[:48]
            await self._send(
                {
                    "sessionUpdate": "session_info_update",
                    "title": self._session.title,
                    "updatedAt": now_iso(),
                }
            )
        self._plan = [_entry(label, rel) for label in [*steps, "summarize"]]
        await self._set_plan()
        planning = command == "plan" or (self._session.mode_id == "architect" and command is None)
        intro = list(self._prompt.notes)
        if steps and not planning:
            intro.append(f"Let me look at `{rel}`.")
        if intro:
            await self._say(" ".join(intro))
        if planning:
            await self._say(
                f"Here is how I would go about it: read `{rel}`, propose a small edit, then "
                "run a quick check. Switch to the Code mode and ask again to do it."
            )
            return
        if not steps:
            await self._say("There is nothing I can do here with what your editor offers.")
        for index, step in enumerate(steps):
            await self._set_plan(index, "in_progress")
            await {"read": self._read, "edit": self._edit, "run": self._run_check}[step]()
            await self._set_plan(index, "completed")
        await self._set_plan(len(steps), "in_progress")
        await self._say(self._summary(steps))
        await self._set_plan(len(steps), "completed")
        size = MODEL_VALUES.get(str(self._session.config.get("model")), 200_000)
        await self._send(
            {
                "sessionUpdate": "usage_update",
                "used": min(1800 + 900 * self._n, size),
                "size": size,
                "cost": {"amount": round(0.002 * self._n, 4), "currency": "USD"},
            }
        )

    def _record_prompt(self) -> None:
        for block in self._prompt.blocks:
            self._session.record(
                {
                    "sessionUpdate": "user_message_chunk",
                    "messageId": f"{self._sid}-t{self._n}-user",
                    "content": block,
                }
            )

    def _steps(self) -> list[str]:
        command, mode = self._prompt.command, self._session.mode_id
        if command == "explain" or (command is None and mode == "ask"):
            return ["read"]
        if command == "edit":
            return ["read", "edit"]
        if command == "run":
            return ["run"] if self._caps.terminal else []
        if command == "plan" or mode == "architect":
            return ["read", "edit", "run"]
        run = self._caps.terminal and self._session.config.get("run_checks") is not False
        return ["read", "edit", "run"] if run else ["read", "edit"]

    def _summary(self, steps: list[str]) -> str:
        verbosity = self._session.config.get("verbosity")
        done = ", ".join({"read": "read", "edit": "edited", "run": "checked"}[s] for s in steps)
        text = f"Done: {done or 'nothing'}."
        if verbosity != "concise":
            text += " Ask again to repeat the demo, or try `/help` for the other commands."
        if verbosity == "detailed":
            text += (
                " Everything you saw came through the Agent Client Protocol: thoughts, the "
                "plan, tool calls with locations, a permission request, file reads and "
                "writes through your editor, and a terminal."
            )
        return text


def _entry(step: str, rel: str) -> dict[str, str]:
    labels = {
        "read": (f"Read {rel}", "high"),
        "edit": (f"Propose an edit to {rel}", "high"),
        "run": ("Run a quick check in a terminal", "medium"),
        "summarize": ("Summarize what was done", "low"),
    }
    content, priority = labels[step]
    return {"content": content, "priority": priority, "status": "pending"}


def _help_text() -> str:
    lines = ["I am the acp-lsp demo agent. Commands:"]
    lines += [f"- `/{c['name']}`: {c['description']}" for c in COMMANDS]
    lines.append("Anything else runs the whole demo: read, edit (with your permission), run.")
    lines.append('Say "slow" to make me stream slowly, so you can try cancelling.')
    return "\n".join(lines)
