"""Agent terminals end to end (DESIGN §3): real processes, capped output, nothing left behind.

Process ids come from the commands themselves (``echo $$``), read from the live
``acp/terminalOutput`` stream, and are checked in /proc after the session or server ends.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from acp_lsp import protocol as p
from tests.e2e.test_files import answers, finish, req, scripted_editor
from tests.support.lsp_editor import TestEditor

pytestmark = pytest.mark.timeout(90)

JsonObject = dict[str, Any]


def create(rid: str, command: str, *args: str, **params: Any) -> JsonObject:
    step = req("terminal/create", rid, command=command, args=list(args), **params)
    step["save_as"] = rid
    return step


def on(rid: str, method: str, terminal: str) -> JsonObject:
    return req(method, rid, terminalId="{" + terminal + ".terminalId}")


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a parent that is not us counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def wait_gone(pids: list[int]) -> list[int]:
    """The pids still alive after a bounded wait for them to go."""
    for _ in range(200):
        if not any(alive(pid) for pid in pids):
            return []
        await asyncio.sleep(0.05)
    return [pid for pid in pids if alive(pid)]


def pids_of(editor: TestEditor, terminal_id: str, count: int) -> list[int]:
    lines = editor.terminal_output[terminal_id].split()
    assert len(lines) >= count, lines
    return [int(x) for x in lines[:count]]


def terminal_id(log: Path, rid: str) -> str:
    return str(answers(log)[rid]["result"]["terminalId"])


# A command that reports its own pid and a background grandchild's, then keeps running.
FAMILY = ("sh", "-c", "sleep 60 & echo $!; echo $$; wait")


@pytest.mark.parametrize("profile", ["visual_studio_code", "neovim"])
async def test_terminal_runs_in_its_cwd_with_its_env(
    tmp_path: Path, workspace: Path, profile: str
) -> None:
    script = 'pwd; printf "%s|%s|%s\\n" "$GREETING" "$HOME" "${ACP_DEMO_DELAY-unset}"; echo err >&2; exit 3'
    steps = [
        create(
            "t", "sh", "-c", script, cwd="{cwd}/src", env=[{"name": "GREETING", "value": "héllo"}]
        ),
        on("exit", "terminal/wait_for_exit", "t"),
        on("out", "terminal/output", "t"),
        on("release", "terminal/release", "t"),
        on("after", "terminal/output", "t"),
        create("default_cwd", "pwd"),
        on("exit2", "terminal/wait_for_exit", "default_cwd"),
        on("out2", "terminal/output", "default_cwd"),
        on("release2", "terminal/release", "default_cwd"),
        create("no_dir", "pwd", cwd="{cwd}/no/such/dir"),
        create("no_cmd", "no-such-command-xyz"),
    ]
    editor, log = await scripted_editor(tmp_path, workspace, profile, steps)
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "run")
    got = answers(log)
    tid = terminal_id(log, "t")
    assert got["exit"]["result"] == {"exitCode": 3, "signal": None}
    # stdout and stderr in one stream; the requested env on top of a small base only
    expected = f"{workspace / 'src'}\nhéllo|{os.environ['HOME']}|unset\nerr\n"
    assert got["out"]["result"] == {
        "output": expected,
        "truncated": False,
        "exitStatus": {"exitCode": 3, "signal": None},
    }
    assert got["release"]["result"] == {}
    assert "unknown" in got["after"]["error"]["message"]  # released: the id is gone
    assert got["out2"]["result"]["output"] == f"{workspace}\n"  # default: the session cwd
    assert "does not exist" in got["no_dir"]["error"]["message"]
    assert "not found" in got["no_cmd"]["error"]["message"]
    # the editor saw the same output live, and the exit status
    await editor.wait_for(lambda: any("exitStatus" in m for m in editor.terminal_messages))
    assert editor.terminal_output[tid] == expected
    final = [m for m in editor.terminal_messages if m["terminalId"] == tid][-1]
    assert final["sessionId"] == sid
    assert final["exitStatus"] == {"exitCode": 3, "signal": None}
    await finish(editor)


async def test_output_is_capped_from_the_start_on_a_character_boundary(
    tmp_path: Path, workspace: Path
) -> None:
    # 9 bytes kept of "ééééé中😀end": the cut falls inside 中, so "😀end" (7 bytes) is kept
    big = "python3 -c \"import sys; [sys.stdout.write('é中😀%d\\n' % i) for i in range(20000)]\""
    steps = [
        create("small", "printf", "ééééé中😀end", outputByteLimit=9),
        on("exit", "terminal/wait_for_exit", "small"),
        on("out", "terminal/output", "small"),
        create("big", "sh", "-c", big, outputByteLimit=1001),
        on("exit_big", "terminal/wait_for_exit", "big"),
        on("out_big", "terminal/output", "big"),
    ]
    editor, log = await scripted_editor(tmp_path, workspace, "neovim", steps)
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "run")
    got = answers(log)
    assert got["out"]["result"] == {
        "output": "😀end",
        "truncated": True,
        "exitStatus": {"exitCode": 0, "signal": None},
    }
    big_out = got["out_big"]["result"]
    assert big_out["truncated"] is True
    assert big_out["output"].endswith("é中😀19999\n")
    kept = len(big_out["output"].encode())
    assert 1001 - 3 <= kept <= 1001  # at most three bytes lost to the character boundary
    assert "é中😀19999\n".encode() in big_out["output"].encode()
    await editor.wait_for(lambda: sum("exitStatus" in m for m in editor.terminal_messages) == 2)
    for rid, output in (("small", "😀end"), ("big", big_out["output"])):
        tid = terminal_id(log, rid)
        # the editor's copy (appends and resets) ends equal to what the terminal kept …
        assert editor.terminal_output[tid] == output
        messages = [m for m in editor.terminal_messages if m["terminalId"] == tid]
        assert messages[-1].get("truncated") is True
        # … and streaming it cost at most twice that, however much the command wrote
        assert sum(len(m["data"].encode()) for m in messages) <= 2 * len(output.encode())
    await finish(editor)


async def test_kill_keeps_the_id_and_release_kills(tmp_path: Path, workspace: Path) -> None:
    steps = [
        create("k", "sh", "-c", "echo $$; exec sleep 60"),
        req("terminal/wait_for_exit", "never", terminalId="{k.terminalId}") | {"wait": False},
        create("r", *FAMILY),
        {
            "request": "session/request_permission",
            "id": "gate",
            "params": {
                "sessionId": "{sessionId}",
                "toolCall": {"toolCallId": "gate", "title": "gate"},
                "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
            },
        },
        on("kill", "terminal/kill", "k"),
        on("exit", "terminal/wait_for_exit", "k"),
        on("out", "terminal/output", "k"),
        on("release", "terminal/release", "r"),
        on("gone", "terminal/output", "r"),
    ]
    editor, log = await scripted_editor(tmp_path, workspace, "neovim", steps)
    pids: dict[str, list[int]] = {}

    async def policy(_params: JsonObject) -> JsonObject:
        # both commands are running and streamed their pids live
        k, r = terminal_id(log, "k"), terminal_id(log, "r")
        await editor.wait_for(lambda: len(editor.terminal_output[k].split()) >= 1)
        await editor.wait_for(lambda: len(editor.terminal_output[r].split()) >= 2)
        pids["k"], pids["r"] = pids_of(editor, k, 1), pids_of(editor, r, 2)
        assert all(alive(pid) for pid in pids["k"] + pids["r"])
        assert not [m for m in editor.terminal_messages if "exitStatus" in m]
        return {"outcome": {"outcome": "selected", "optionId": "ok"}}

    editor.permission_policy = policy
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "run")
    got = answers(log)
    killed = {"exitCode": None, "signal": "SIGKILL"}
    assert got["kill"]["result"] == {} and got["exit"]["result"] == killed
    assert got["never"]["result"] == killed  # a waiter from before the kill is answered too
    assert got["out"]["result"] == {
        "output": f"{pids['k'][0]}\n",
        "truncated": False,
        "exitStatus": killed,
    }
    assert got["release"]["result"] == {}
    assert got["gone"]["error"]["code"] == p.INVALID_PARAMS
    # release killed the whole process group: the command and its background child
    assert await wait_gone(pids["k"] + pids["r"]) == []
    await finish(editor)


async def test_closing_a_session_reaps_its_terminals(tmp_path: Path, workspace: Path) -> None:
    # the agent starts terminals and never releases them
    steps = [create("a", *FAMILY), create("b", "sh", "-c", "echo $$; exec sleep 60")]
    editor, log = await scripted_editor(tmp_path, workspace, "visual_studio_code", steps)
    first = (await editor.new_session())["sessionId"]
    second = (await editor.new_session())["sessionId"]
    await editor.prompt(first, "run")
    mine = [terminal_id(log, "a"), terminal_id(log, "b")]
    await editor.prompt(second, "run")
    theirs = [terminal_id(log, "a"), terminal_id(log, "b")]
    # each terminal prints its pids (two for the family, one for the sleeper), maybe in pieces
    for tid, count in zip(mine + theirs, (2, 1, 2, 1), strict=True):
        await editor.wait_for(
            lambda tid=tid, count=count: len(editor.terminal_output[tid].split()) >= count
        )
    first_pids = pids_of(editor, mine[0], 2) + pids_of(editor, mine[1], 1)
    second_pids = pids_of(editor, theirs[0], 2) + pids_of(editor, theirs[1], 1)
    assert all(alive(pid) for pid in first_pids + second_pids)
    snap = await editor.acp(p.ACP_GET_SESSION, {"sessionId": first})
    assert set(snap["terminals"]) == set(mine)
    await editor.acp(p.ACP_CLOSE_SESSION, {"sessionId": first})
    assert await wait_gone(first_pids) == []
    assert all(alive(pid) for pid in second_pids)  # another session's terminals live on
    await editor.shutdown_session()
    assert await wait_gone(second_pids) == []  # and go with the server
    assert not editor.schema_errors


def agent_pids(marker: str) -> list[int]:
    """Processes whose command line holds ``marker`` (the scripted agent of this test)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline and alive(int(entry)):
                found.append(int(entry))
    return found


@pytest.mark.parametrize("how", ["shutdown", "exit_only"])
async def test_nothing_is_left_behind_when_the_server_goes(
    tmp_path: Path, workspace: Path, how: str
) -> None:
    marker = f"marker-{tmp_path.name}-{how}"
    steps = [create("a", *FAMILY), create("b", "sh", "-c", "echo $$; exec sleep 60")]
    editor, log = await scripted_editor(
        tmp_path, workspace, "neovim", steps, script={"marker": marker}
    )
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "run")
    a, b = terminal_id(log, "a"), terminal_id(log, "b")
    await editor.wait_for(lambda: len(editor.terminal_output[a].split()) >= 2)
    await editor.wait_for(lambda: len(editor.terminal_output[b].split()) >= 1)
    pids = pids_of(editor, a, 2) + pids_of(editor, b, 1)
    agents = agent_pids(marker)
    assert len(agents) == 1 and all(alive(pid) for pid in pids)
    server = editor._server
    assert server is not None
    if how == "shutdown":
        await editor.shutdown_session()
    else:  # the editor vanishes: exit without shutdown
        editor.exit(None)
        await asyncio.wait_for(server.wait(), 30)
    assert server.returncode is not None
    assert await wait_gone(pids + agents) == []
    await editor.stop()
