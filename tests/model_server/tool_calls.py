"""Concrete tool calls: a script's abstract :class:`~tests.model_server.script.Tool` made
into the call a request's own tools take (names and argument keys from their schemas), and
Codex's apply_patch text."""

from __future__ import annotations

import difflib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.model_server.script import JsonObject, Say, Step, Tool


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
