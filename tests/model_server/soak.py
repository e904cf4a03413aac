"""The soak's model: per session, turns of many tool calls on the session's own files, and one
model server that plays every session's script at once.

Why one server can serve many sessions: an API module finds a request's place in the script
from the request's own conversation (``conversation_position``: prompts and tool results
since the last prompt), never from the session, so a single :class:`~tests.model_server.Script`
would hand every session the same step — the same absolute paths. Each session's prompts
therefore carry a tag (:func:`prompt`); :class:`SoakServer` reads the tag from the request
body before the app handles it, and :class:`SessionScripts` plays that session's script.
One agent process (the bridge shares it between sessions) talks to one server.

A :class:`SoakPlan` builds a session's turns and knows the text every file has on disk after
any number of turns, so a test compares the disk and the editor's buffers with what the model
asked for::

    plans = {name: SoakPlan(root / name, name) for name in ("s0", "s1")}
    with SoakServer({n: plan.script(turns=20) for n, plan in plans.items()}) as model:
        ...  # prompt session "s0" with prompt("s0", 1), …
        assert read(root / "s0") == plans["s0"].files_after(turns_done)
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.model_server.app import ModelServer
from tests.model_server.script import Say, Script, Step, Tool

TAG = re.compile(rb"\[soak ([A-Za-z0-9_-]+)\]")
_session: contextvars.ContextVar[str | None] = contextvars.ContextVar("soak_session", default=None)
LINES = 12  # value lines per file
WORDS = 60  # words in each answer


def prompt(name: str, turn: int) -> str:
    """The user's prompt of ``turn`` (from 1) in session ``name``; it carries the session's tag."""
    return f"[soak {name}] Turn {turn}: go through the files again."


def answer(name: str, turn: int) -> str:
    """The whole answer text of ``turn`` (from 1): numbered words, so a lost or doubled piece
    shows."""
    words = " ".join(f"w{turn}.{i}" for i in range(WORDS))
    return f"{name} turn {turn} done: {words}."


def _line(file: str, j: int, value: int) -> str:
    return f"value_{j} = {value}  # {file} line {j}"


@dataclass
class SoakPlan:
    """The turns of one session on its files under ``root``: every turn is ``tool_calls``
    calls in groups of five — read A, edit A, edit A, read B, write B (B whole, one line
    changed) — going round the files, then an answer in ``chunks`` pieces."""

    root: Path
    name: str
    files: int = 4
    tool_calls: int = 50
    chunks: int = 20
    _state: dict[str, list[int]] = field(default_factory=dict, init=False)
    _after: list[dict[str, str]] = field(default_factory=list, init=False)
    _turns: list[list[Step]] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self._state = {self.file(i): [0] * LINES for i in range(self.files)}
        self._after = [self._texts()]

    def file(self, i: int) -> str:
        return f"mod{i}.py"

    def path(self, file: str) -> str:
        return str(self.root / file)

    def _text(self, file: str, values: list[int]) -> str:
        head = f'"""{self.name}/{file}: numbers the soak changes."""\n\n'
        return head + "".join(_line(file, j, v) + "\n" for j, v in enumerate(values))

    def _texts(self) -> dict[str, str]:
        return {f: self._text(f, v) for f, v in self._state.items()}

    def initial(self) -> dict[str, str]:
        """The files before the first turn."""
        return dict(self._after[0])

    def write_initial(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        for file, text in self.initial().items():
            (self.root / file).write_text(text, encoding="utf-8")

    def _edit(self, file: str, j: int) -> Tool:
        values = self._state[file]
        old = _line(file, j, values[j])
        values[j] += 1
        return Tool("edit", {"path": self.path(file), "old": old, "new": _line(file, j, values[j])})

    def _write(self, file: str, j: int) -> Tool:
        self._state[file][j] += 1
        content = self._text(file, self._state[file])
        return Tool("write", {"path": self.path(file), "content": content})

    def _build(self, turn: int) -> list[Step]:
        steps: list[Step] = []
        k = 0
        while len(steps) < self.tool_calls:
            a = self.file((turn + k) % self.files)
            b = self.file((turn + k + 1) % self.files)
            group: list[Step] = [
                Tool("read", {"path": self.path(a)}),
                self._edit(a, (2 * k) % LINES),
                self._edit(a, (2 * k + 1) % LINES),
                Tool("read", {"path": self.path(b)}),
                self._write(b, (3 * k + turn) % LINES),
            ]
            steps += group[: self.tool_calls - len(steps)]
            k += 1
        steps.append(Say(answer(self.name, turn + 1), chunks=self.chunks))
        return steps

    def turn(self, turn: int) -> list[Step]:
        """The model's steps of ``turn`` (from 0)."""
        while len(self._turns) <= turn:
            self._turns.append(self._build(len(self._turns)))
            self._after.append(self._texts())
        return self._turns[turn]

    def script(self, turns: int) -> Script:
        return Script(f"soak-{self.name}", [self.turn(i) for i in range(turns)])

    def files_after(self, turns: int) -> dict[str, str]:
        """Each file's text on disk once ``turns`` turns are done."""
        if turns:
            self.turn(turns - 1)
        return dict(self._after[turns])

    def tools(self, turn: int) -> list[Tool]:
        return [s for s in self.turn(turn) if isinstance(s, Tool)]


class SessionScripts(Script):
    """The scripts of every session; a request plays the one its tag names."""

    def __init__(self, scripts: dict[str, Script]) -> None:
        super().__init__("soak", [])
        self.scripts = scripts

    def step(self, turn: int, step: int) -> Step:
        name = _session.get()
        script = self.scripts.get(name or "")
        if script is None:
            return Say(f"(soak: no session tag {name!r} in the request)")
        return script.step(turn, step)


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def by_session(app: App) -> App:
    """ASGI wrapper: read the whole body, note the session tag it carries, hand it on."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        parts, more = [], True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            parts.append(message.get("body", b""))
            more = bool(message.get("more_body"))
        body = b"".join(parts)
        found = TAG.search(body)
        token = _session.set(found.group(1).decode() if found else None)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # a disconnect, while a response streams

        try:
            await app(scope, replay, send)
        finally:
            _session.reset(token)

    return wrapped


class SoakServer(ModelServer):
    """A :class:`ModelServer` playing each session's script (``{name: script}``), the session
    told by the tag of its prompts."""

    def __init__(self, scripts: dict[str, Script], port: int = 0) -> None:
        super().__init__(SessionScripts(scripts), port)
        config = self._server.config  # loaded when the server starts: wrap it before
        app: App = config.app  # type: ignore[assignment]  # create_app's Starlette
        config.app = by_session(app)

    def set_scripts(self, scripts: dict[str, Script]) -> None:
        self.state.script = SessionScripts(scripts)
