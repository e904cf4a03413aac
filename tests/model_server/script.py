"""What the scripted model plays: steps, scripts, the server state, and tool-call rendering.

The interface every API module (``anthropic``, ``openai_responses``, ``openai_chat``,
``gemini``) builds on:

- A :class:`Script` is a list of user turns; each turn is the model's responses in order.
  A :class:`Tool` step is one model response holding one tool call; a :class:`Say` step is a
  final answer (the last step of a turn).
- An API module works out *where* a request is from the request's own conversation: how
  many user prompts it holds (``turn`` = prompts - 1) and how many tool results follow the
  last prompt (``step``). Then ``state.script.step(turn, step)`` is what to answer.
- A :class:`Tool` is abstract (``read``/``edit``/``write``/``delete``/``shell``);
  :func:`render_tool` makes the concrete call from the tools the request offers
  (``{name: JSON schema of its input}``), so the same script drives every agent.
- :class:`ServerState` is shared by all API modules: the script, every recorded request,
  and the stall gate (``stalled`` is set when a :class:`Say` with ``stall_after`` reaches
  that chunk; the stream waits until ``release()``).
"""

from __future__ import annotations

import asyncio
import difflib
import json
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


# -- concrete tool calls ---------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: JsonObject


class NoSuchTool(LookupError):
    """The request offers no tool that can do the step's action."""


# Per action, tool names in order of preference, across agents: Claude (Read/Edit/Write/Bash),
# Qwen Code (read_file/edit/write_file/run_shell_command), Gemini CLI (read_file/replace/...),
# Codex (exec_command or shell: everything is a command).
TOOL_NAMES: dict[str, tuple[str, ...]] = {
    "read": ("Read", "read_file"),
    "edit": ("Edit", "edit", "replace"),
    "write": ("Write", "write_file"),
    "delete": (),
    "shell": ("Bash", "run_shell_command"),
    "call": (),
}
SHELL_TOOLS = ("Bash", "run_shell_command", "exec_command", "shell", "local_shell")
PATH_KEYS = ("file_path", "absolute_path", "path")


def _properties(schema: Any) -> JsonObject:
    if isinstance(schema, dict):
        props = schema.get("properties")
        if isinstance(props, dict):
            return props
    return {}


def _path_key(schema: Any) -> str:
    props = _properties(schema)
    return next((k for k in PATH_KEYS if k in props), "file_path")


def _command_key(schema: Any) -> str:
    props = _properties(schema)
    return next((k for k in ("command", "cmd") if k in props), "command")


def _shell(tools: dict[str, Any], command: str) -> ToolCall:
    name = next((n for n in SHELL_TOOLS if n in tools), None)
    if name is None:
        raise NoSuchTool(f"no shell tool among {sorted(tools)}")
    key = _command_key(tools[name])
    if name == "shell":  # Codex's older tool takes argv
        return ToolCall(name, {key: ["bash", "-lc", command]})
    args: JsonObject = {key: command}
    if name == "Bash":
        args["description"] = "Run " + command.split()[0]
    return ToolCall(name, args)


def update_patch(path: str, old_text: str, new_text: str) -> str:
    """An ``apply_patch`` patch turning file ``path`` from ``old_text`` into ``new_text``
    (hunks with up to 3 lines of context)."""
    old_lines = old_text.splitlines()
    new_lines = new_text.splitlines()
    body: list[str] = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(3):
        body.append("@@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                body += [" " + ln for ln in old_lines[i1:i2]]
            else:
                body += ["-" + ln for ln in old_lines[i1:i2]]
                body += ["+" + ln for ln in new_lines[j1:j2]]
    return "\n".join(["*** Begin Patch", f"*** Update File: {path}", *body, "*** End Patch"]) + "\n"


def add_patch(path: str, content: str) -> str:
    lines = "\n".join("+" + ln for ln in content.splitlines())
    return f"*** Begin Patch\n*** Add File: {path}\n{lines}\n*** End Patch\n"


def edit_patch(tool: Tool) -> str:
    """The ``apply_patch`` patch of an edit or write step (an edit reads the file now)."""
    a = tool.args
    if tool.action == "write":
        return add_patch(a["path"], a["content"])
    old_file = Path(a["path"]).read_text(encoding="utf-8")
    return update_patch(a["path"], old_file, old_file.replace(a["old"], a["new"], 1))


def apply_patch_command(path: str, old_text: str, new_text: str) -> str:
    """Codex's own way to edit: ``apply_patch`` with a patch in a heredoc."""
    return f"apply_patch <<'EOF'\n{update_patch(path, old_text, new_text)}EOF\n"


def render_tool(tool: Tool, tools: dict[str, Any]) -> ToolCall:
    """The concrete call for ``tool`` among the request's ``tools`` ({name: input schema}).

    Agents with file tools get them (argument names from the tool's own schema); agents
    with only a command tool (Codex) get ``cat``, an ``apply_patch`` heredoc and ``rm``.
    Edits for command-only agents read the file now, on this machine, to build the patch.
    """
    a = tool.args
    if tool.action == "call":
        return ToolCall(a["name"], json.loads(a["input"]))
    name = next((n for n in TOOL_NAMES[tool.action] if n in tools), None)
    if name is None:
        if tool.action == "read":
            return _shell(tools, f"cat {shlex.quote(a['path'])}")
        if tool.action in ("edit", "write"):
            return _shell(tools, f"apply_patch <<'EOF'\n{edit_patch(tool)}EOF\n")
        if tool.action == "delete":
            return _shell(tools, f"rm {shlex.quote(a['path'])}")
        return _shell(tools, a["command"])
    schema = tools[name]
    if tool.action == "read":
        return ToolCall(name, {_path_key(schema): a["path"]})
    if tool.action == "edit":
        args: JsonObject = {_path_key(schema): a["path"], "old_string": a["old"]}
        args["new_string"] = a["new"]
        if "instruction" in _properties(schema):  # Gemini's replace requires one
            args["instruction"] = "Apply the requested change."
        return ToolCall(name, args)
    if tool.action == "write":
        return ToolCall(name, {_path_key(schema): a["path"], "content": a["content"]})
    return _shell(tools, a["command"])


def playable(step: Step, tools: dict[str, Any]) -> Step:
    """``step``, or an answer saying so when the request offers no tool for it (a mode that
    takes tools away, e.g. plan): the turn ends there, as it would with a real model. For the
    agents whose tools name edits and writes (Qwen Code, Gemini CLI)."""
    if not isinstance(step, Tool):
        return step
    own = TOOL_NAMES[step.action]
    # no apply_patch through the shell here: that is Codex's way, not this agent's
    if step.action in ("edit", "write") and not any(n in tools for n in own):
        return Say(f"(scripted model: no tool to {step.action} among {sorted(tools)})")
    try:
        render_tool(step, tools)
    except NoSuchTool as exc:
        return Say(f"(scripted model: {exc})")
    return step


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
