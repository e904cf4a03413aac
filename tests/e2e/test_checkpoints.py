"""Checkpoints and rewind end to end (DESIGN §2 "Review by hunk, checkpoints, rewind…"):
``acp/restoreCheckpoint`` and ``acp/rewindSession`` through the real server, with the
scripted agent changing files on disk as Claude Code and Codex do (their own writes, a shell
command's deletion), and the user editing a file between the turns."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from acp_lsp import protocol as p
from acp_lsp.disk.shadow import shadow_dir
from tests.agents import read_log
from tests.agents.scripted_acp import DEFAULT_INITIALIZE
from tests.e2e.conftest import ScriptedLaunch as Launch
from tests.support.lsp_editor import TestEditor
from tests.support.review_script import read, run_turn, turns, update

pytestmark = pytest.mark.timeout(60)

JsonObject = dict[str, Any]
APP = "src/app.py"


def say(text: str) -> JsonObject:
    return update(sessionUpdate="agent_message_chunk", content={"type": "text", "text": text})


def first_turn(original_app: str) -> list[JsonObject]:
    """The agent's own writes (no fs/*): a created file and a changed greeting."""
    return [
        {"write_file": {"path": "notes.txt", "content": "agent notes\n"}},
        {"write_file": {"path": APP, "content": original_app.replace("Hello, ", "Howdy, ")}},
        say("Changed the greeting."),
    ]


SECOND_TURN: list[JsonObject] = [
    {"write_file": {"path": "README.md", "content": "rewritten by the agent\n"}},
    {"delete_file": "src/util.py"},  # as `rm` in a shell command would
    say("Rewrote the README."),
]


def user_indices(snapshot: JsonObject) -> list[int]:
    return [i for i, m in enumerate(snapshot["messages"]) if m["role"] == "user"]


async def restore(
    editor: TestEditor, sid: str, index: int, dry_run: bool = False
) -> dict[str, JsonObject]:
    params = {"sessionId": sid, "messageIndex": index, "dryRun": dry_run}
    result = await editor.acp(p.ACP_RESTORE_CHECKPOINT, params)
    return {Path(f["path"]).name: f for f in result["files"]}


async def two_turns(editor: TestEditor, workspace: Path) -> tuple[str, list[int]]:
    sid = await run_turn(editor, "first")
    # the user's own change between the turns, far from the agent's line
    app = workspace / APP
    app.write_text(read(workspace, APP) + "# the user's note\n", encoding="utf-8")
    await run_turn(editor, "second", sid)
    snapshot = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    users = user_indices(snapshot)
    assert [snapshot["messages"][i].get("checkpoint") for i in users] == [True, True]
    return sid, users


async def test_restoring_the_first_checkpoint_undoes_both_turns_and_keeps_the_users_edit(
    launch: Launch, workspace: Path
) -> None:
    originals = {rel: read(workspace, rel) for rel in (APP, "README.md", "src/util.py")}
    editor = await launch(turns(first_turn(originals[APP]), SECOND_TURN))
    sid, users = await two_turns(editor, workspace)
    assert not (workspace / "src/util.py").exists()
    # what a front end shows in its confirmation: the same answer, nothing written
    planned = await restore(editor, sid, users[0], dry_run=True)
    assert not (workspace / "src/util.py").exists() and (workspace / "notes.txt").exists()

    files = await restore(editor, sid, users[0])
    assert files == planned

    assert {name: (f["status"], f["change"]) for name, f in files.items()} == {
        "notes.txt": ("restored", "created"),
        "app.py": ("restored", "modified"),
        "README.md": ("restored", "modified"),
        "util.py": ("restored", "deleted"),
    }
    assert not (workspace / "notes.txt").exists()
    # the agent's greeting undone on top of the user's later line, which stays
    assert read(workspace, APP) == originals[APP] + "# the user's note\n"
    assert read(workspace, "README.md") == originals["README.md"]
    assert read(workspace, "src/util.py") == originals["src/util.py"]  # byte for byte back
    # a second restore finds everything as it was then
    again = await restore(editor, sid, users[0])
    assert {f["status"] for f in again.values()} == {"unchanged"}


async def test_restoring_the_second_checkpoint_leaves_the_first_turn(
    launch: Launch, workspace: Path
) -> None:
    original_app = read(workspace, APP)
    editor = await launch(turns(first_turn(original_app), SECOND_TURN))
    sid, users = await two_turns(editor, workspace)

    files = await restore(editor, sid, users[1])

    assert set(files) == {"README.md", "util.py"}
    assert read(workspace, "notes.txt") == "agent notes\n"
    assert "Howdy, " in read(workspace, APP) and read(workspace, APP).endswith("note\n")


async def test_an_overlapping_user_edit_leaves_that_file_and_says_which(
    launch: Launch, workspace: Path
) -> None:
    original_app = read(workspace, APP)
    editor = await launch(turns(first_turn(original_app)))
    sid = await run_turn(editor, "first")
    # the user rewrites the very line the agent changed
    mine = read(workspace, APP).replace("Howdy, ", "Good day, ")
    (workspace / APP).write_text(mine, encoding="utf-8")
    snapshot = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})

    files = await restore(editor, sid, user_indices(snapshot)[0])

    assert files["app.py"]["status"] == "failed"
    assert "overlap the agent's" in files["app.py"]["message"]
    assert APP.split("/")[-1] in files["app.py"]["message"]
    assert read(workspace, APP) == mine  # the user's text, untouched
    assert files["notes.txt"]["status"] == "restored"  # the other file still went back


async def test_bad_requests_are_refused_precisely(launch: Launch, workspace: Path) -> None:
    editor = await launch(turns([say("hi")], [{"sleep": 30}]))
    sid = await run_turn(editor, "first")
    snapshot = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    agent_index = next(i for i, m in enumerate(snapshot["messages"]) if m["role"] == "agent")
    for index, wanted in ((agent_index, "is not a user message"), (99, "is not a user")):
        with pytest.raises(JsonRpcException) as raised:
            await restore(editor, sid, index)
        assert wanted in str(raised.value)
    turn = asyncio.ensure_future(editor.prompt(sid, "second"))
    await editor.wait_for(lambda: editor.status_values(sid)[-1] == "running")
    with pytest.raises(JsonRpcException) as raised:
        await restore(editor, sid, 0)
    assert "a turn is running" in str(raised.value)
    await editor.acp(p.ACP_CANCEL, {"sessionId": sid})
    await turn


async def test_rewind_starts_a_session_that_never_hears_the_rewound_prompt(
    launch: Launch, workspace: Path, tmp_path: Path
) -> None:
    original_app = read(workspace, APP)
    editor = await launch(
        turns(first_turn(original_app), [say("Second answer.")], [say("Third answer.")])
    )
    sid = await run_turn(editor, "the first question")
    await run_turn(editor, "the second question", sid)
    snapshot = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    second = user_indices(snapshot)[1]

    rewound = await editor.acp(p.ACP_REWIND_SESSION, {"sessionId": sid, "messageIndex": second})
    editor.adopt(rewound)

    new = rewound["sessionId"]
    assert new != sid
    assert rewound["rewoundFrom"] == {"sessionId": sid, "messageIndex": second}
    assert rewound["messages"] == snapshot["messages"][:second]
    assert "restoredFiles" not in rewound  # files stay unless asked
    assert "Howdy, " in read(workspace, APP)
    # the original is left as it was
    original = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    assert original["messages"] == snapshot["messages"]

    await run_turn(editor, "the edited second question", new)
    prompts = [
        m["params"] for m in read_log(tmp_path / "agent.log") if m.get("method") == "session/prompt"
    ]
    last = prompts[-1]
    sent = "".join(b.get("text", "") for b in last["prompt"])
    assert last["sessionId"] != prompts[0]["sessionId"]  # a new agent session
    assert "the first question" in sent and "the edited second question" in sent
    assert "the second question" not in sent and "Second answer." not in sent


async def test_rewind_with_files_restores_that_checkpoint(launch: Launch, workspace: Path) -> None:
    originals = {rel: read(workspace, rel) for rel in (APP, "README.md")}
    editor = await launch(turns(first_turn(originals[APP]), SECOND_TURN))
    sid, users = await two_turns(editor, workspace)

    rewound = await editor.acp(
        p.ACP_REWIND_SESSION, {"sessionId": sid, "messageIndex": users[1], "restoreFiles": True}
    )

    assert {Path(f["path"]).name for f in rewound["restoredFiles"]} == {"README.md", "util.py"}
    assert read(workspace, "README.md") == originals["README.md"]
    # the rewound session keeps the first message's checkpoint
    assert rewound["messages"][users[0]]["checkpoint"] is True


async def test_checkpoints_survive_a_restart(launch: Launch, workspace: Path) -> None:
    original_app = read(workspace, APP)
    editor = await launch(turns(first_turn(original_app)))
    sid = await run_turn(editor, "first")
    await editor.shutdown_session()

    editor = await launch(turns([say("later")]))
    stored = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    assert stored["status"] == "stored"
    [first] = user_indices(stored)
    assert stored["messages"][first]["checkpoint"] is True
    with pytest.raises(JsonRpcException, match="acp/loadSession"):  # stored, not live yet
        await restore(editor, sid, first)
    await editor.acp(p.ACP_LOAD_SESSION, {"sessionId": sid})

    files = await restore(editor, sid, first)

    assert files["notes.txt"]["status"] == "restored"
    assert read(workspace, APP) == original_app


async def test_deleting_the_session_drops_its_checkpoints(
    launch: Launch, workspace: Path, tmp_path: Path
) -> None:
    script = turns(first_turn(read(workspace, APP)), SECOND_TURN)
    script["initialize"] = {  # an agent that can delete its sessions
        **DEFAULT_INITIALIZE,
        "agentCapabilities": {
            **DEFAULT_INITIALIZE["agentCapabilities"],
            "sessionCapabilities": {"list": {}, "close": {}, "resume": {}, "delete": {}},
        },
    }
    editor = await launch(script)
    sid, _users = await two_turns(editor, workspace)
    shadow = shadow_dir(tmp_path / "data", str(workspace))

    def refs() -> list[str]:
        out = subprocess.run(
            ["git", "--git-dir", str(shadow), "for-each-ref", "--format=%(refname)"],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.split()

    # before and after each of the two turns, kept from pruning (written just after the turn)
    wanted = sorted(
        f"refs/checkpoints/{sid}/{n}/{side}" for n in (0, 1) for side in ("before", "after")
    )
    for _ in range(100):
        if sorted(refs()) == wanted:
            break
        await asyncio.sleep(0.05)
    assert sorted(refs()) == wanted
    await editor.acp(p.ACP_DELETE_SESSION, {"sessionId": sid})
    assert refs() == []
