"""Claude and Codex do whole coding turns through the real acp-lsp server, offline.

Each agent runs from its pinned install (scripts/fetch-agents.sh) with its model API pointed
at the scripted model server (tests/model_server), which plays read → edit → answer and
friends. What is asserted is what a user sees in the editor: the answer, the tool calls
(title, kind, status, diff), the permission prompts, and the file on disk. docs/agents.md
records what each agent did in these turns.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tests.model_server import ModelServer, Say, Script, Tool
from tests.model_server.script import long_turn, read_edit_answer, several_turns, shell_edit, stall
from tests.support.lsp_editor import TestEditor, pick
from tests.support.production import (
    Turns,
    cancel_mid_stream,
    diffs,
    ended,
    open_session,
    processes_of,
    start_agent,
    texts,
    tool_calls,
)

pytestmark = pytest.mark.timeout(240)

GREET = 'def greet(name):\n    return f"Hello, {name}!"\n'
LONG_TURN = 480.0
LONG_CALLS = 200


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "greet.py").write_text(GREET, encoding="utf-8")
    return root


@pytest.fixture
def turns(tmp_path: Path, ws: Path, model: ModelServer) -> Turns:
    return Turns(tmp_path, ws, model)


def thinking(script: Script, turn: int, thought: str) -> Script:
    """``script`` with a thought before the answer of ``turn``."""
    turns = [list(steps) for steps in script.turns]
    last = turns[turn][-1]
    assert isinstance(last, Say)
    turns[turn][-1] = replace(last, thought=thought)
    return Script(script.name, turns)


async def finish(editor: TestEditor, model: ModelServer, tmp_path: Path) -> None:
    await editor.shutdown_session()
    assert not editor.schema_errors, editor.schema_errors
    # the server stopped the agent with everything it started
    assert processes_of(tmp_path / "home") == []
    # the agent called nothing the scripted model does not serve
    assert model.unknown_requests() == [], model.unknown_requests()


# -- Claude ------------------------------------------------------------------------------------


async def test_claude_reads_edits_and_answers(
    tmp_path: Path, ws: Path, model: ModelServer, turns: Turns
) -> None:
    model.script = read_edit_answer(str(ws))
    # the user has the file open (sync is asserted elsewhere); Claude's own default mode: auto
    editor, sid = await turns.one("claude", "Change the greeting to Howdy.", opened=ws / "greet.py")
    assert texts(editor, sid)[-1].endswith("I updated the greeting in greet.py.")
    read, edit = tool_calls(editor, sid)
    assert (read["kind"], read["title"], read["status"]) == ("read", "Read greet.py", "completed")
    assert read["locations"][0]["path"] == str(ws / "greet.py")
    assert (edit["kind"], edit["title"], edit["status"]) == ("edit", "Edit greet.py", "completed")
    # Claude first reports the replaced snippets, then the hunk with its context lines
    [diff] = diffs(edit)
    assert (diff["path"], diff["oldText"], diff["newText"]) == (
        str(ws / "greet.py"),
        GREET.rstrip("\n"),
        GREET.replace("Hello", "Howdy").rstrip("\n"),
    )
    snippet = edit["rawInput"]
    assert (snippet["old_string"], snippet["new_string"]) == ("Hello", "Howdy")
    # Claude edits on disk itself (no fs/* through the editor)
    assert (ws / "greet.py").read_text(encoding="utf-8") == GREET.replace("Hello", "Howdy")
    assert [r.step for r in model.turn_requests()] == model.script.turns[0]
    assert editor.permission_requests == []  # auto mode asks nobody
    await finish(editor, model, tmp_path)


async def test_claude_auto_mode_runs_a_shell_command_its_classifier_allows(
    tmp_path: Path, ws: Path, model: ModelServer, turns: Turns
) -> None:
    model.script = shell_edit(str(ws))
    # Claude's own default mode: auto
    editor, sid = await turns.one("claude", "Use sed to change the greeting.")
    [bash] = tool_calls(editor, sid)
    assert (bash["kind"], bash["status"]) == ("execute", "completed")
    assert (ws / "greet.py").read_text(encoding="utf-8") == GREET.replace("Hello", "Howdy")
    assert editor.permission_requests == []
    # the safety classifier judged the command first (a transcript, no tools)
    judged = [r for r in model.requests if "</severity>" in (r.body.get("stop_sequences") or [])]
    assert judged and all(r.kind == "side" for r in judged)
    assert "sed -i" in json.dumps(judged[0].body["messages"])
    await finish(editor, model, tmp_path)


async def test_claude_manual_mode_asks_before_a_shell_command(
    tmp_path: Path, ws: Path, model: ModelServer, turns: Turns
) -> None:
    model.script = shell_edit(str(ws))
    # "Manual": always ask before making changes
    editor, sid = await turns.one(
        "claude", "Use sed to change the greeting.", mode="default", policy=pick("allow_once")
    )
    [asked] = editor.permission_requests
    assert "sed -i 's/Hello/Howdy/'" in asked["toolCall"]["title"]
    assert asked["toolCall"]["kind"] == "execute"
    assert {o["kind"] for o in asked["options"]} >= {"allow_once", "reject_once"}
    [bash] = tool_calls(editor, sid)
    assert (bash["kind"], bash["status"]) == ("execute", "completed")
    assert (ws / "greet.py").read_text(encoding="utf-8") == GREET.replace("Hello", "Howdy")
    assert texts(editor, sid)[-1] == "I ran sed on greet.py."
    await finish(editor, model, tmp_path)


async def test_claude_manual_mode_edit_the_user_rejects_stays_undone(
    tmp_path: Path, ws: Path, model: ModelServer, turns: Turns
) -> None:
    model.script = read_edit_answer(str(ws))
    editor, sid = await turns.one(
        "claude", "Change the greeting.", mode="default", policy=pick("reject_once")
    )
    [asked] = editor.permission_requests  # the read needs no permission, the edit does
    assert asked["toolCall"]["title"] == "Edit greet.py"
    edit = tool_calls(editor, sid)[-1]
    assert edit["kind"] == "edit" and edit["status"] == "failed"
    assert (ws / "greet.py").read_text(encoding="utf-8") == GREET
    await finish(editor, model, tmp_path)


async def test_claude_writes_a_new_file_and_deletes_one(
    tmp_path: Path, ws: Path, model: ModelServer, turns: Turns
) -> None:
    notes = ws / "notes.txt"
    model.script = Script(
        "write-delete",
        [
            [
                Tool("write", {"path": str(notes), "content": "remember the milk\n"}),
                Tool("shell", {"command": f"rm {ws / 'greet.py'}"}),
                Say("Wrote notes.txt and removed greet.py."),
            ]
        ],
    )
    editor, sid = await turns.one("claude", "Write notes, drop greet.py.", mode="acceptEdits")
    write, rm = tool_calls(editor, sid)
    assert (write["kind"], write["status"]) == ("edit", "completed")
    [diff] = diffs(write)
    assert diff["path"] == str(notes) and diff["newText"] == "remember the milk\n"
    assert not diff.get("oldText")
    assert (rm["kind"], rm["status"]) == ("execute", "completed")
    # acceptEdits: a new file and an `rm` in the workspace are edits, asked of nobody
    assert editor.permission_requests == []
    assert notes.read_text(encoding="utf-8") == "remember the milk\n"
    assert not (ws / "greet.py").exists()
    await finish(editor, model, tmp_path)


async def test_claude_several_turns_in_one_session(
    tmp_path: Path, ws: Path, model: ModelServer
) -> None:
    model.script = thinking(several_turns(str(ws), turns=3), 1, "Nothing to read this time.")
    editor = await start_agent(tmp_path, ws, "claude", model)
    sid = await open_session(editor)
    for n in range(3):
        await ended(editor, sid, f"Turn {n + 1}, please.")
    said = texts(editor, sid)
    assert [t for t in said if t.startswith("Turn")] == [
        "Turn 1: I read it.",
        "Turn 2: done.",
        "Turn 3: done.",
    ]
    assert texts(editor, sid, "thought") == ["Nothing to read this time."]
    # every turn's request carried the whole conversation so far
    assert [r.step for r in model.turn_requests()] == [
        step for turn in model.script.turns for step in turn
    ]
    [read] = tool_calls(editor, sid)
    assert read["kind"] == "read" and read["status"] == "completed"
    await finish(editor, model, tmp_path)


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("agent", "mode"), [("claude", None), ("codex", "full-access")])
async def test_long_turn(
    tmp_path: Path, ws: Path, model: ModelServer, agent: str, mode: str | None
) -> None:
    model.script = long_turn(str(ws), tool_calls=LONG_CALLS, answer_chunks=500)
    editor = await start_agent(tmp_path, ws, agent, model)
    sid = await open_session(editor, mode)
    result = await editor.prompt(sid, "Read it again and again.", timeout=LONG_TURN)
    assert result["stopReason"] == "end_turn"
    calls = tool_calls(editor, sid)
    assert len(calls) == LONG_CALLS
    assert {(c["kind"], c["status"]) for c in calls} == {("read", "completed")}
    final = model.script.turns[0][-1]
    assert isinstance(final, Say)
    assert texts(editor, sid)[-1].endswith(final.text)
    await finish(editor, model, tmp_path)


async def test_claude_cancel_mid_stream_ends_cancelled(
    tmp_path: Path, ws: Path, model: ModelServer
) -> None:
    model.script = stall()
    editor = await start_agent(tmp_path, ws, "claude", model)
    sid = await open_session(editor)
    await cancel_mid_stream(editor, model, sid)
    assert "one two" in "".join(texts(editor, sid))
    await finish(editor, model, tmp_path)


# -- Codex -------------------------------------------------------------------------------------
# Codex's sandbox helper needs bubblewrap and user namespaces; where it cannot sandbox, every
# command fails in read-only and auto. full-access runs commands unsandboxed, as a user would
# choose on such a machine.


async def test_codex_reads_edits_and_answers(
    tmp_path: Path, ws: Path, model: ModelServer, turns: Turns
) -> None:
    model.script = read_edit_answer(str(ws))
    editor, sid = await turns.one(
        "codex", "Change the greeting to Howdy.", mode="full-access", opened=ws / "greet.py"
    )
    assert texts(editor, sid)[-1] == "I updated the greeting in greet.py."
    read, edit = tool_calls(editor, sid)
    # Codex reads with `cat` and says so as a read
    assert (read["kind"], read["title"], read["status"]) == ("read", "Read greet.py", "completed")
    assert read["locations"] == [{"path": str(ws / "greet.py")}]
    # and edits with apply_patch: the diff is the hunk with its context
    assert (edit["kind"], edit["status"]) == ("edit", "completed")
    assert edit["title"] == f"Edit {ws / 'greet.py'}"
    [diff] = diffs(edit)
    assert diff["oldText"] == GREET and diff["newText"] == GREET.replace("Hello", "Howdy")
    assert (ws / "greet.py").read_text(encoding="utf-8") == GREET.replace("Hello", "Howdy")
    # the read ran through exec_command, the edit through the freeform apply_patch tool
    results = [r.body["input"][-1]["type"] for r in model.turn_requests()[1:]]
    assert results == ["function_call_output", "custom_tool_call_output"]
    await finish(editor, model, tmp_path)


async def test_codex_read_only_asks_before_apply_patch_in_its_sandbox(
    tmp_path: Path, ws: Path, model: ModelServer, turns: Turns
) -> None:
    model.script = read_edit_answer(str(ws))
    # Codex starts read-only
    editor, sid = await turns.one(
        "codex-sandboxed", "Change the greeting to Howdy.", policy=pick("allow_once")
    )
    [asked] = editor.permission_requests  # the sandboxed `cat` needs no permission
    assert asked["toolCall"]["kind"] == "edit"
    assert asked["toolCall"]["title"] == f"Edit {ws / 'greet.py'}"
    assert {o["kind"] for o in asked["options"]} == {"allow_once", "reject_once"}
    read, edit = tool_calls(editor, sid)
    assert (read["kind"], read["status"], edit["status"]) == ("read", "completed", "completed")
    assert (ws / "greet.py").read_text(encoding="utf-8") == GREET.replace("Hello", "Howdy")
    await finish(editor, model, tmp_path)


async def test_codex_writes_a_new_file_and_deletes_one(
    tmp_path: Path, ws: Path, model: ModelServer, turns: Turns
) -> None:
    notes = ws / "notes.txt"
    model.script = Script(
        "write-delete",
        [
            [
                Tool("write", {"path": str(notes), "content": "remember the milk\n"}),
                Tool("delete", {"path": str(ws / "greet.py")}),
                Say("Wrote notes.txt and removed greet.py."),
            ]
        ],
    )
    editor, sid = await turns.one("codex", "Write notes, drop greet.py.", mode="full-access")
    add, rm = tool_calls(editor, sid)
    # apply_patch "Add File" is an edit whose diff has no old text
    assert (add["kind"], add["status"]) == ("edit", "completed")
    [diff] = diffs(add)
    assert diff["path"] == str(notes) and diff["newText"] == "remember the milk\n"
    assert not diff.get("oldText")
    assert rm["status"] == "completed" and rm["title"].startswith("rm ")
    assert notes.read_text(encoding="utf-8") == "remember the milk\n"
    assert not (ws / "greet.py").exists()
    await finish(editor, model, tmp_path)


async def test_codex_auto_mode_runs_a_workspace_command_in_its_sandbox_unasked(
    tmp_path: Path, ws: Path, model: ModelServer, turns: Turns
) -> None:
    model.script = shell_edit(str(ws))
    editor, sid = await turns.one("codex-sandboxed", "Use sed to change the greeting.", mode="auto")
    [sed] = tool_calls(editor, sid)
    assert (sed["kind"], sed["status"]) == ("execute", "completed")
    assert editor.permission_requests == []
    assert (ws / "greet.py").read_text(encoding="utf-8") == GREET.replace("Hello", "Howdy")
    await finish(editor, model, tmp_path)


async def test_codex_shell_command_changes_a_file(
    tmp_path: Path, ws: Path, model: ModelServer, turns: Turns
) -> None:
    model.script = shell_edit(str(ws))
    editor, sid = await turns.one("codex", "Use sed to change the greeting.", mode="full-access")
    [sed] = tool_calls(editor, sid)
    assert sed["status"] == "completed" and "sed -i" in sed["title"]
    assert (ws / "greet.py").read_text(encoding="utf-8") == GREET.replace("Hello", "Howdy")
    assert texts(editor, sid)[-1] == "I ran sed on greet.py."
    await finish(editor, model, tmp_path)


async def test_codex_several_turns_and_a_cancel(
    tmp_path: Path, ws: Path, model: ModelServer
) -> None:
    model.script = thinking(several_turns(str(ws), turns=2), 1, "Nothing to read this time.")
    editor = await start_agent(tmp_path, ws, "codex", model)
    sid = await open_session(editor, "full-access")
    for n in range(2):
        await ended(editor, sid, f"Turn {n + 1}, please.")
    assert [t for t in texts(editor, sid) if t.startswith("Turn")] == [
        "Turn 1: I read it.",
        "Turn 2: done.",
    ]
    assert texts(editor, sid, "thought") == ["Nothing to read this time."]
    model.script = Script("then-stall", [*model.script.turns, *stall().turns])
    await cancel_mid_stream(editor, model, sid)
    await finish(editor, model, tmp_path)
