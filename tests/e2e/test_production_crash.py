"""A real agent killed mid-turn (kill -9), as the user sees it through acp-lsp.

Claude (claude-agent-acp, which runs the Claude Code CLI, which runs each Bash command in a
session of its own) is killed while its Bash runs ``sleep 30``, and while it streams an
answer. Each time: the turn ends at once with -32005 naming the agent and how it died, with
its stderr tail; the tool call it cut off ends ``failed``; every process of the agent's tree
(recorded from /proc before the kill) is gone; ``acp/sessionStatus`` says ``failed`` with the
same error; history keeps what was shown; and ONE ``acp/loadSession`` brings the session back
(same id, ``resumedFrom: "agent"``, what was shown kept), after which the next turn works and
the model is sent the earlier conversation. Codex (codex-acp) is killed during its shell
command the same way.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig

from acp_lsp import protocol as p
from tests.model_server import ModelServer, Say, Script, Tool
from tests.model_server.script import Recorded, stall
from tests.support.lsp_editor import SERVER_COMMAND, TestEditor, capabilities
from tests.support.production import (
    binary,
    open_session,
    server_env,
    start_agent,
    texts,
    tool_calls,
)

pytestmark = pytest.mark.timeout(300)

JsonObject = dict[str, Any]
TURN = 180.0  # a whole turn on a shared 2-core machine: generous, never asserted on
GONE = 10.0  # every process of the killed agent's tree is gone within this
SLEEP = "echo waiting; sleep 30; echo woke"  # a standalone `sleep 30` Claude refuses to run
FIGURES = os.environ.get("ACP_LSP_CRASH_FIGURES")  # a JSON-lines file for the docs' numbers


# -- processes, from /proc -------------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    """state, ppid, pgrp, session, ... of a live process (None when gone or a zombie)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()
    return None if fields[0] == "Z" else fields


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def process_tree(root: int) -> dict[int, str]:
    """``root`` and all its live descendants: pid -> command line."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(int(entry))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if _stat(pid) is not None:
            found[pid] = _cmdline(pid)
            todo.extend(children.get(pid, []))
    return found


def agent_pid(editor: TestEditor, agent: str) -> int:
    """The process the server started for ``agent`` (its other children run git)."""
    server = editor._server
    assert server is not None
    command = str(binary(agent))
    [pid] = [
        pid
        for pid, cmdline in process_tree(server.pid).items()
        if (s := _stat(pid)) is not None and int(s[1]) == server.pid and command in cmdline
    ]
    return pid


async def wait_for_process(root: int, needle: str) -> dict[int, str]:
    """The tree of ``root`` once a process whose command line is ``needle`` runs in it."""
    deadline = time.monotonic() + TURN
    while time.monotonic() < deadline:
        tree = process_tree(root)
        if needle in tree.values():
            return tree
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {needle!r} under pid {root}: {process_tree(root)}")


async def wait_gone(pids: list[int]) -> list[int]:
    """Those of ``pids`` still alive after GONE seconds (empty when all went)."""
    deadline = time.monotonic() + GONE
    while (left := [pid for pid in pids if _stat(pid) is not None]) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return left


async def leftovers(home: Path, server: int) -> list[str]:
    """Processes of this test (HOME is its own) other than the server itself, once none is
    left or GONE seconds passed (one started right before the kill is stopped too, last)."""
    deadline = time.monotonic() + GONE
    while (found := _leftovers(home, server)) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return found


def _leftovers(home: Path, server: int) -> list[str]:
    marker = f"HOME={home}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == server:
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker in environ and _stat(int(entry)) is not None:
            found.append(f"{entry}: {_cmdline(int(entry))}")
    return found


def record(figure: JsonObject) -> None:
    if FIGURES:
        with open(FIGURES, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(figure) + "\n")


# -- the kill and what follows ------------------------------------------------------------------


async def kill_mid_turn(
    editor: TestEditor,
    tmp_path: Path,
    name: str,
    sid: str,
    turn: asyncio.Future[Any],
    tree: dict[int, str],
    victim: str = "",
) -> JsonObject:
    """kill -9 agent ``name`` (or the process of its tree whose command line ends with
    ``victim``: its program); check the turn's end, the status, the processes; the error."""
    agent = agent_pid(editor, name)
    [target] = (
        [p for p, cmd in tree.items() if cmd.split()[0].endswith(victim)] if victim else [agent]
    )
    killed = time.monotonic()
    os.kill(target, signal.SIGKILL)
    error = await error_of(turn)
    ended = time.monotonic() - killed
    assert error["code"] == p.AGENT_UNAVAILABLE, error
    how = "was killed by SIGKILL" if target == agent else "exited (exit code 0)"
    assert error["message"].startswith(f"agent {name!r} {how} (pid {agent})"), error
    assert "acp/loadSession brings the session back" in error["message"]
    assert error["data"]["stderr"]  # the agent's last words, for the user to read
    # the status says the same
    last = editor.statuses[sid][-1]
    assert last["status"] == "failed"
    assert last["error"]["message"] == error["message"]
    assert last["error"]["stderr"] == error["data"]["stderr"]
    # nothing the agent started is left: its CLI, the shell, the command
    left = await wait_gone(list(tree))
    gone = time.monotonic() - killed
    assert left == [], {pid: tree[pid] for pid in left}
    assert editor._server is not None
    assert await leftovers(tmp_path / "home", editor._server.pid) == []
    record(
        {
            "agent": name,
            "killed": tree[target].split()[-1].rsplit("/", 3)[-3:],
            "turnEndedS": round(ended, 3),
            "treeGoneS": round(gone, 3),
            "tree": sorted(cmd.split()[0].rsplit("/", 1)[-1] for cmd in tree.values()),
        }
    )
    return error


async def error_of(request: Any) -> JsonObject:
    """The JSON-RPC error an editor request ends with (fails if it succeeds)."""
    try:
        result = await request
    except JsonRpcException as exc:
        return {"code": exc.code, "message": exc.message, "data": getattr(exc, "data", None)}
    raise AssertionError(f"expected an error, got {result!r}")


async def reload(editor: TestEditor, agent: str, sid: str, seen: int) -> JsonObject:
    """ONE acp/loadSession (no acp/restartAgent) brings the session back."""
    loaded: JsonObject = await editor.acp(
        p.ACP_LOAD_SESSION, {"agent": agent, "sessionId": sid}, timeout=TURN
    )
    assert loaded["sessionId"] == sid and loaded["status"] == "idle"
    assert loaded["resumedFrom"] == "agent"
    assert loaded["seq"] >= seen
    editor.adopt(loaded)
    return loaded


async def stored(editor: TestEditor, text: str) -> list[JsonObject]:
    """Sessions the history finds ``text`` in."""
    listed = await editor.acp(p.ACP_LIST_SESSIONS, {"query": text})
    return [s for s in listed["sessions"] if s.get("stored")]


def sent_text(request: Recorded) -> str:
    """Everything a request showed the model, as one string."""
    return json.dumps(request.body)


async def finish(editor: TestEditor, model: ModelServer, tmp_path: Path) -> None:
    assert editor._server is not None
    server = editor._server.pid
    await editor.shutdown_session()
    assert not editor.schema_errors, editor.schema_errors
    assert await leftovers(tmp_path / "home", server) == []
    assert model.unknown_requests() == [], model.unknown_requests()


# -- the agents ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("agent", "mode", "victim"),
    [
        ("claude", "acceptEdits", ""),
        # Codex unsandboxed: its sandbox helper needs bubblewrap, which is not everywhere
        ("codex", "full-access", ""),
        # the Rust agent itself dies (a panic, the OOM killer): its node wrapper then exits 0
        ("codex", "full-access", "bin/codex-acp"),
    ],
    ids=["claude", "codex", "codex-native"],
)
async def test_killed_during_a_shell_command(
    tmp_path: Path, model: ModelServer, agent: str, mode: str, victim: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model.script = Script(
        "sleep-then-answer",
        [[Tool("shell", {"command": SLEEP}), Say("Slept.")], [Say("Back, and I remember.")]],
    )
    editor = await start_agent(tmp_path, ws, agent, model)
    sid = await open_session(editor, mode)
    turn = asyncio.ensure_future(editor.prompt(sid, "Sleep for half a minute.", timeout=TURN))
    # Claude: agent -> Claude Code CLI -> bash -> sleep (bash in a session of its own);
    # Codex: node wrapper -> codex-acp -> bash -> sleep (likewise)
    tree = await wait_for_process(agent_pid(editor, agent), "sleep 30")
    if victim:
        # The bash the Rust agent ran is orphaned the moment that agent dies: the bridge
        # knows it from its note of the agent's tree (every 0.2 s). A command started in
        # the last moments before such a death is the case the bridge cannot know of.
        await asyncio.sleep(1.0)
    await kill_mid_turn(editor, tmp_path, agent, sid, turn, tree, victim)

    [shell] = tool_calls(editor, sid)
    assert (shell["kind"], shell["title"]) == ("execute", SLEEP)
    assert shell["status"] == "failed"  # cut off by the agent's death: not done, not cancelled
    assert [s["sessionId"] for s in await stored(editor, "Sleep for half a minute.")] == [sid]
    retry = await error_of(editor.prompt(sid, "Still there?"))
    assert retry["code"] == p.AGENT_UNAVAILABLE and "acp/loadSession" in retry["message"]

    loaded = await reload(editor, agent, sid, editor.sessions[sid].seq)
    assert loaded["modes"]["currentModeId"] == mode  # the mode the user chose stays
    [kept] = loaded["toolCalls"]
    assert (kept["toolCallId"], kept["status"]) == (shell["toolCallId"], "failed")
    assert texts(editor, sid, "user") == ["Sleep for half a minute."]

    result = await editor.prompt(sid, "Are you back?", timeout=TURN)
    assert result["stopReason"] == "end_turn"
    assert texts(editor, sid)[-1].startswith("Back, and I remember.")
    # the model was sent the earlier conversation: the first prompt and the killed command
    last = model.turn_requests()[-1]
    assert "Sleep for half a minute." in sent_text(last) and SLEEP in sent_text(last)
    await finish(editor, model, tmp_path)


async def test_claude_killed_mid_answer(tmp_path: Path, model: ModelServer) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    story = stall().turns[0]
    model.script = Script("stall-then-answer", [story, [Say("Where was I? Still here.")]])
    editor = await start_agent(tmp_path, ws, "claude", model)
    sid = await open_session(editor)
    turn = asyncio.ensure_future(editor.prompt(sid, "Tell me a story.", timeout=TURN))
    assert await asyncio.to_thread(model.wait_stalled, TURN), "the answer never started"
    await editor.wait_for(lambda: "one two" in "".join(texts(editor, sid)), timeout=TURN)
    tree = process_tree(agent_pid(editor, "claude"))
    await kill_mid_turn(editor, tmp_path, "claude", sid, turn, tree)
    model.release()  # the stalled stream has nobody to stream to any more

    shown = "".join(texts(editor, sid))
    assert shown.startswith("one two")  # what was shown stays shown
    assert tool_calls(editor, sid) == []
    # history keeps the cut-off answer
    assert [s["sessionId"] for s in await stored(editor, "one two")] == [sid]

    loaded = await reload(editor, "claude", sid, editor.sessions[sid].seq)
    assert [m["role"] for m in loaded["messages"]] == ["user", "agent"]
    assert "".join(texts(editor, sid)) == shown

    result = await editor.prompt(sid, "Go on.", timeout=TURN)
    assert result["stopReason"] == "end_turn"
    # (Claude Code may add a notice of its own about its auto mode after the answer)
    assert texts(editor, sid)[-1].startswith("Where was I? Still here.")
    last = model.turn_requests()[-1]
    assert "Tell me a story." in sent_text(last) and "Go on." in sent_text(last)
    record({"answerCutOff": shown, "modelSawCutOffAnswer": "one two" in sent_text(last)})
    await finish(editor, model, tmp_path)


async def test_claude_killed_before_its_first_turn_comes_back_from_the_transcript(
    tmp_path: Path, model: ModelServer
) -> None:
    """Claude keeps a session on disk from its first prompt on: killed before that, it has
    nothing to resume, and the bridge starts a new agent session primed with what was shown."""
    ws = tmp_path / "ws"
    ws.mkdir()
    model.script = Script("answer", [[Say("First answer.")]])
    editor = await start_agent(tmp_path, ws, "claude", model)
    sid = await open_session(editor, "acceptEdits")
    agent = agent_pid(editor, "claude")
    tree = process_tree(agent)
    os.kill(agent, signal.SIGKILL)
    await editor.wait_for(lambda: editor.status_values(sid)[-1:] == ["failed"])
    assert editor.statuses[sid][-1]["error"]["message"].startswith(
        f"agent 'claude' was killed by SIGKILL (pid {agent})"
    )
    assert await wait_gone(list(tree)) == []
    loaded = await editor.acp(p.ACP_LOAD_SESSION, {"agent": "claude", "sessionId": sid}, TURN)
    assert (loaded["sessionId"], loaded["status"]) == (sid, "idle")
    assert loaded["resumedFrom"] == "transcript"
    assert loaded["modes"]["currentModeId"] == "acceptEdits"  # the new agent session too
    editor.adopt(loaded)
    assert (await editor.prompt(sid, "Hello?", timeout=TURN))["stopReason"] == "end_turn"
    # once (with eight workers on two cores) the turn ended with no text shown: say what the
    # model was asked and what the editor holds, should it happen again
    shown = texts(editor, sid)
    asked = [(r.kind, r.step) for r in model.requests]
    assert shown and shown[-1].startswith("First answer."), (shown, asked, editor.statuses[sid])
    await finish(editor, model, tmp_path)


# -- the same without a production agent (runs wherever the agents are not installed) ----------


def demo_with_children(tmp_path: Path) -> JsonObject:
    """The demo agent, started by a shell that first leaves two children behind it: one in
    the agent's own group and one in a session of its own (as Claude Code runs its Bash).
    Each start appends "agent-pid child-pid setsid-child-pid" to tmp_path/pids."""
    script = (
        'setsid sleep 300 & lone=$!; sleep 301 & kid=$!; echo "$$ $kid $lone" >> "$0"; exec "$@"'
    )
    argv = [sys.executable, "-m", "acp_lsp.demo.agent"]
    return {
        "command": "/bin/sh",
        "args": ["-c", script, str(tmp_path / "pids"), *argv],
        "env": {"ACP_DEMO_DELAY": "0", "ACP_DEMO_STATE_DIR": str(tmp_path / "demo-state")},
    }


def started_pids(tmp_path: Path) -> list[list[int]]:
    lines = (tmp_path / "pids").read_text(encoding="ascii").splitlines()
    return [[int(pid) for pid in line.split()] for line in lines]


async def test_agent_killed_or_restarted_leaves_no_process(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    config = ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=TestEditor, server_env=server_env(home)
    )
    editor = await config.start()
    assert isinstance(editor, TestEditor)
    await editor.initialize_session(
        types.InitializeParams(
            capabilities=capabilities("neovim"),
            root_uri=ws.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
            initialization_options={"agents": {"demo": demo_with_children(tmp_path)}},
        )
    )
    sid = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(sid, "hello"))["stopReason"] == "end_turn"
    [[agent, kid, lone]] = started_pids(tmp_path)
    assert _stat(lone) is not None and int(_stat(lone)[3]) == lone  # a session of its own

    os.kill(agent, signal.SIGKILL)  # a crash between two turns
    await editor.wait_for(lambda: editor.status_values(sid)[-1:] == ["failed"])
    [status] = [s for s in editor.statuses[sid] if s["status"] == "failed"]
    assert status["error"]["message"].startswith(
        f"agent 'demo' was killed by SIGKILL (pid {agent})"
    )
    assert await wait_gone([agent, kid, lone]) == []

    loaded = await reload(editor, "demo", sid, editor.sessions[sid].seq)  # starts the agent
    assert texts(editor, sid, "user") == ["hello"] and loaded["messages"][-1]["role"] == "agent"
    [_, [agent, kid, lone]] = started_pids(tmp_path)
    # a deliberate stop reaches the command in its own session too
    assert await editor.acp(p.ACP_RESTART_AGENT, {"agent": "demo"}) == {}
    assert await wait_gone([agent, kid, lone]) == []
    await reload(editor, "demo", sid, editor.sessions[sid].seq)  # stopping failed it again
    assert (await editor.prompt(sid, "still there?"))["stopReason"] == "end_turn"
    server = editor._server
    assert server is not None
    await editor.shutdown_session()
    assert await leftovers(home, server.pid) == []


@pytest.mark.parametrize(
    ("agent", "mode", "sig"),
    [
        ("claude", "acceptEdits", signal.SIGTERM),
        ("codex", "full-access", signal.SIGTERM),
        ("codex", "full-access", signal.SIGHUP),
    ],
    ids=["claude-SIGTERM", "codex-SIGTERM", "codex-SIGHUP"],
)
async def test_the_server_killed_during_a_shell_command_leaves_no_process(
    tmp_path: Path, model: ModelServer, agent: str, mode: str, sig: signal.Signals
) -> None:
    """The editor kills the server while the agent's shell runs a command: Claude Code and
    Codex run it in a session of its own, which signalling the agent's group does not reach
    (Claude Code stops its commands itself on SIGTERM; Codex does not)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    model.script = Script("sleep", [[Tool("shell", {"command": SLEEP}), Say("Slept.")]])
    editor = await start_agent(tmp_path, ws, agent, model)
    sid = await open_session(editor, mode)
    turn = asyncio.ensure_future(editor.prompt(sid, "Sleep for half a minute.", timeout=TURN))
    tree = await wait_for_process(agent_pid(editor, agent), "sleep 30")
    assert editor._server is not None
    server = editor._server.pid
    os.kill(server, sig)
    with pytest.raises(RuntimeError, match="exited"):  # the server went under the request
        await turn
    left = await wait_gone(list(tree))
    assert left == [], {pid: tree[pid] for pid in left}
    assert await leftovers(tmp_path / "home", server) == []
