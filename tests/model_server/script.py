"""What the scripted model plays: steps, scripts, the server state, and tool-call rendering.

The interface every API module (``anthropic``, ``openai_responses``, ``openai_chat``,
``gemini``) builds on:

- A :class:`Script` is a list of user turns; each turn is the model's responses in order.
  A :class:`Tool` step is one model response holding one tool call; a :class:`Say` step is a
  final answer (the last step of a turn).
- An API module works out *where* a request is from the request's own conversation: how
  many user prompts it holds (``turn`` = prompts - 1) and how many tool results follow the
  last prompt (``step``). Then ``state.script.step(turn, step)`` is what to answer.
- A :class:`Tool` is abstract (``read``/``edit``/``write``/``delete``/``shell``/``call``);
  ``tool_calls.render_tool`` makes the concrete call from the tools the request offers
  (``{name: JSON schema of its input}``), so the same script drives every agent.
- :class:`ServerState` is shared by all API modules: the script, every recorded request,
  and the stall gate (``stalled`` is set when a :class:`Say` with ``stall_after`` reaches
  that chunk; the stream waits until ``release()``).
"""

from __future__ import annotations

import asyncio
import shlex
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.model_server.faults import Fault

JsonObject = dict[str, Any]
ACTIONS = ("read", "edit", "write", "delete", "shell", "call")


@dataclass(frozen=True)
class Say:
    """A final answer, streamed in ``chunks`` pieces (an optional thought first).

    ``stall_after``: the stream stops after that many pieces until the test releases it
    (``ServerState.release``); the cancel tests use it.
    """

    text: str
    chunks: int = 1
    thought: str | None = None
    stall_after: int | None = None

    def pieces(self) -> list[str]:
        """``text`` cut into ``chunks`` nearly equal pieces (never an empty one)."""
        n = max(1, min(self.chunks, len(self.text) or 1))
        size, extra = divmod(len(self.text), n)
        out, start = [], 0
        for i in range(n):
            end = start + size + (1 if i < extra else 0)
            out.append(self.text[start:end])
            start = end
        return [p for p in out if p] or [""]


@dataclass(frozen=True)
class Tool:
    """One model response holding one tool call.

    ``action`` is one of :data:`ACTIONS`; ``args``: read ``{path}``, edit ``{path, old, new}``,
    write ``{path, content}``, delete ``{path}``, shell ``{command}``. Paths are absolute
    (the agents want them so); the prebuilt scripts take the workspace root.
    ``call`` ``{name, input}`` calls the tool ``name`` as given (``input``: its arguments as
    JSON text), offered or not: an MCP tool, or one an agent loads on demand (Claude Code's
    ToolSearch).
    """

    action: str
    args: dict[str, str]

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"unknown tool action {self.action!r} (one of {ACTIONS})")


Step = Say | Tool


@dataclass
class Script:
    """Per user turn, the model's responses in order (the last one of a turn is a Say)."""

    name: str
    turns: list[list[Step]]

    def step(self, turn: int, step: int) -> Step:
        """The response for the ``step``-th model call of user turn ``turn`` (both from 0).

        Past the script's end it answers a plain Say, so an agent never waits on it.
        """
        if turn < 0 or turn >= len(self.turns):
            return Say(f"(script {self.name!r} has no turn {turn + 1})")
        steps = self.turns[turn]
        if step < 0 or step >= len(steps):
            return Say(f"(script {self.name!r} turn {turn + 1} is over)")
        return steps[step]


# -- state shared by the API modules -----------------------------------------------------------


@dataclass
class Recorded:
    """One request as the server received it (``kind``: "turn", "side" or "unknown")."""

    api: str
    method: str
    path: str
    query: str
    body: Any
    kind: str = "turn"
    step: Step | None = None
    # when it arrived (time.monotonic): how long an agent waited before a retry
    at: float = field(default_factory=time.monotonic)


@dataclass
class ServerState:
    """The script being played, the requests received, the stall gate, and the faults to
    play (``faults``: pending [fault, turn requests left]; ``faulted``: those served)."""

    script: Script = field(default_factory=lambda: Script("empty", []))
    requests: list[Recorded] = field(default_factory=list)
    stalled: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)
    closing: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    faults: list[list[Any]] = field(default_factory=list)
    faulted: list[tuple[Fault, Recorded]] = field(default_factory=list)

    def inject(self, *faults: Fault) -> None:
        """Queue faults for the next turn requests, in order, ``times`` each."""
        with self.lock:
            self.faults += [[f, f.times] for f in faults if f.times > 0]

    def take_fault(self, entry: Recorded) -> Fault | None:
        """The fault ``entry`` gets, if any (side requests never get one)."""
        if entry.kind != "turn":
            return None
        with self.lock:
            if not self.faults:
                return None
            pending = self.faults[0]
            pending[1] -= 1
            if pending[1] <= 0:
                self.faults.pop(0)
            self.faulted.append((pending[0], entry))
            return pending[0]  # type: ignore[no-any-return]

    def record(self, entry: Recorded) -> Recorded:
        with self.lock:
            self.requests.append(entry)
        return entry

    def release(self) -> None:
        """Let a stalled stream go on."""
        self.released.set()

    def reset(self, script: Script | None = None) -> None:
        with self.lock:
            self.requests.clear()
            self.faults.clear()
            self.faulted.clear()
        self.stalled.clear()
        self.released.clear()
        if script is not None:
            self.script = script

    def turn_requests(self, api: str | None = None) -> list[Recorded]:
        return [r for r in self.requests if r.kind == "turn" and (api is None or r.api == api)]

    async def pieces(self, say: Say) -> AsyncIterator[str]:
        """The answer's pieces; at ``stall_after`` pieces, wait for ``release()``."""
        for i, piece in enumerate(say.pieces()):
            if say.stall_after is not None and i == say.stall_after:
                self.stalled.set()
                # polls: the gate is a threading.Event set from the test's thread/loop
                while not (self.released.is_set() or self.closing.is_set()):
                    await asyncio.sleep(0.02)
            yield piece


def conversation_position(
    entries: list[JsonObject],
    results: Callable[[JsonObject], int],
    is_prompt: Callable[[JsonObject], bool],
) -> tuple[int, int]:
    """(user turn, step) of a request: the turn counts the prompts (``is_prompt``), the step
    the tool results (``results`` of each entry) since the last prompt."""
    turn, step = -1, 0
    for entry in entries:
        found = results(entry)
        if found:
            step += found
        elif is_prompt(entry):
            turn, step = turn + 1, 0
    return max(turn, 0), step


def sample_json(schema: Any, text: str = "Scripted session") -> Any:
    """A small value that fits a JSON schema (for side requests that ask for JSON)."""
    if not isinstance(schema, dict):
        return text
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return sample_json(schema[key][0], text)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {k: sample_json(v, text) for k, v in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return text


# -- prebuilt scripts --------------------------------------------------------------------------


def read_edit_answer(
    root: str, file: str = "greet.py", old: str = "Hello", new: str = "Howdy"
) -> Script:
    """Read a file, replace ``old`` with ``new`` in it, answer."""
    path = str(Path(root) / file)
    return Script(
        "read-edit",
        [
            [
                Tool("read", {"path": path}),
                Tool("edit", {"path": path, "old": old, "new": new}),
                Say(f"I updated the greeting in {file}.", chunks=3),
            ]
        ],
    )


def write_new_file(root: str, file: str = "notes.txt", content: str = "new notes\n") -> Script:
    path = str(Path(root) / file)
    return Script(
        "write",
        [[Tool("write", {"path": path, "content": content}), Say(f"I wrote {file}.")]],
    )


def delete_file(root: str, file: str = "greet.py") -> Script:
    """Delete a file with a shell ``rm`` (no agent has a delete tool)."""
    path = str(Path(root) / file)
    return Script(
        "delete",
        [[Tool("shell", {"command": f"rm {shlex.quote(path)}"}), Say(f"I deleted {file}.")]],
    )


def shell_edit(root: str, file: str = "greet.py", old: str = "Hello", new: str = "Howdy") -> Script:
    """A shell command that changes a file on disk (``sed -i``)."""
    path = str(Path(root) / file)
    command = f"sed -i 's/{old}/{new}/' {shlex.quote(path)}"
    return Script(
        "shell-edit",
        [[Tool("shell", {"command": command}), Say(f"I ran sed on {file}.")]],
    )


def long_turn(
    root: str, file: str = "greet.py", tool_calls: int = 200, answer_chunks: int = 500
) -> Script:
    """``tool_calls`` reads of one file, then a long answer in ``answer_chunks`` pieces."""
    path = str(Path(root) / file)
    text = " ".join(f"word{i}" for i in range(answer_chunks * 4))
    steps: list[Step] = [Tool("read", {"path": path}) for _ in range(tool_calls)]
    steps.append(Say(text, chunks=answer_chunks))
    return Script("long", [steps])


def several_turns(root: str, file: str = "greet.py", turns: int = 3) -> Script:
    """Turn 1 reads the file and answers; later turns answer straight away."""
    path = str(Path(root) / file)
    first: list[Step] = [Tool("read", {"path": path}), Say("Turn 1: I read it.")]
    rest: list[list[Step]] = [[Say(f"Turn {i + 1}: done.")] for i in range(1, turns)]
    return Script("turns", [first, *rest])


def stall(
    root: str = "", text: str = "one two three four five six", stall_after: int = 2
) -> Script:
    """An answer that stops mid-stream until the test releases it (or cancels the turn)."""
    return Script("stall", [[Say(text, chunks=6, stall_after=stall_after)]])


def answer(root: str = "", text: str = "Hello from the scripted model.") -> Script:
    return Script("answer", [[Say(text, chunks=2)]])


HUGE_END = "End of the huge answer."


def huge_answer(size: int = 10 * 1024 * 1024, turns: int = 2) -> Script:
    """Turn 1 answers ``size`` characters of numbered lines (in 64 KiB pieces) ending with
    :data:`HUGE_END`; later turns answer a line."""
    line = "Line {:08d}: the quick brown fox jumps over the lazy dog, again and again.\n"
    width = len(line.format(0))
    body = "".join(line.format(i) for i in range(max(0, size - len(HUGE_END)) // width))
    text = body + HUGE_END
    rest: list[list[Step]] = [[Say(f"Turn {i + 1}: done.")] for i in range(1, turns)]
    return Script("huge", [[Say(text, chunks=max(1, len(text) // 65536))], *rest])


SCRIPTS: dict[str, Callable[[str], Script]] = {
    "answer": answer,
    "read-edit": read_edit_answer,
    "write": write_new_file,
    "delete": delete_file,
    "shell-edit": shell_edit,
    "long": long_turn,
    "turns": several_turns,
    "stall": stall,
}
