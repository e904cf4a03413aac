"""Checkpoints and rewind with the production agents, offline (DESIGN §2 "…checkpoints,
rewind…"): Claude Code, Codex and Qwen Code each run a shell command that changes a file and
creates another; the user then edits the changed file; a second turn; restoring the first
message's checkpoint undoes the agent's change and removes the created file while the user's
edit stays. A third prompt is queued while the second turn streams and reaches the agent
once that turn ends. Then the session is rewound to before its second message and asked anew:
the model's request carries the first prompt and the new one, never the rewound ones."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from acp_lsp import protocol as p
from tests.model_server import ModelServer, Say, Script, Tool
from tests.support.lsp_editor import pick
from tests.support.production import TURN, ended, open_session, start_agent

pytestmark = pytest.mark.timeout(240)

GREET = 'import sys\n\n\ndef greet(name):\n    return f"Hello, {name}!"\n'
MODES = {"claude": "acceptEdits", "codex": "full-access", "qwen": None}
FIRST = "Make the greeting friendlier and leave a note."
SECOND = "Second question: what about the name?"
QUEUED = "Queued while you answered: and the date?"
ANEW = "A different second question."


@pytest.mark.parametrize("agent", sorted(MODES))
async def test_restore_the_first_checkpoint_then_rewind(
    tmp_path: Path, model: ModelServer, agent: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    path, made = ws / "greet.py", ws / "made.txt"
    path.write_text(GREET, encoding="utf-8")
    command = f"sed -i 's/Hello/Howdy/' {path} && printf 'made\\n' > {made}"
    model.script = Script(
        "checkpoints",
        [
            [Tool("shell", {"command": command}), Say("Friendlier, and a note.")],
            [Say("The name is fine.", chunks=2, stall_after=1)],
            [Say("The date can wait.")],
            [Say("A different answer.")],
        ],
    )
    editor = await start_agent(tmp_path, ws, agent, model)
    editor.permission_policy = pick("allow_once")
    sid = await open_session(editor, MODES[agent])
    await ended(editor, sid, FIRST)
    assert "Howdy" in path.read_text(encoding="utf-8") and made.exists()
    mine = path.read_text(encoding="utf-8") + "# the user's own line\n"
    path.write_text(mine, encoding="utf-8")  # between the turns, as the user saves a file
    before = len(model.turn_requests())
    second = asyncio.ensure_future(editor.prompt(sid, SECOND, timeout=TURN))
    assert await asyncio.to_thread(model.wait_stalled, TURN), "the second answer never started"
    queued = asyncio.ensure_future(
        editor.acp(p.ACP_PROMPT, {"sessionId": sid, "prompt": QUEUED, "queue": True}, TURN)
    )
    await editor.wait_for(lambda: any(s.get("queued") for s in editor.statuses[sid]))
    # the queued prompt waits for the running turn: the model has heard nothing of it yet
    assert QUEUED not in json.dumps([r.body for r in model.turn_requests()])
    model.release()
    assert (await second)["stopReason"] == "end_turn"
    assert (await queued)["stopReason"] == "end_turn"
    assert QUEUED in json.dumps(model.turn_requests()[-1].body)
    assert QUEUED not in json.dumps(model.turn_requests()[before].body)

    snapshot = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    users = [i for i, m in enumerate(snapshot["messages"]) if m["role"] == "user"]
    assert [snapshot["messages"][i].get("checkpoint") for i in users] == [True, True, True]
    result = await editor.acp(
        p.ACP_RESTORE_CHECKPOINT, {"sessionId": sid, "messageIndex": users[0]}
    )
    statuses = {Path(f["path"]).name: (f["status"], f.get("change")) for f in result["files"]}
    assert statuses == {
        "greet.py": ("restored", "modified"),
        "made.txt": ("restored", "created"),
    }, result
    assert path.read_text(encoding="utf-8") == GREET + "# the user's own line\n"
    assert not made.exists()

    rewound = await editor.acp(p.ACP_REWIND_SESSION, {"sessionId": sid, "messageIndex": users[1]})
    editor.adopt(rewound)
    # Claude forks at the answer before the rewound message, by its own means (its prompt
    # cache kept); Codex and Qwen cannot, and start anew primed with the transcript
    assert rewound.get("forkedFrom") == (sid if agent == "claude" else None), rewound.keys()
    await ended(editor, rewound["sessionId"], ANEW)
    sent = json.dumps(model.turn_requests()[-1].body)
    assert FIRST in sent and ANEW in sent, sent[-3000:]
    assert SECOND not in sent and "The name is fine." not in sent, sent[-3000:]
    assert QUEUED not in sent, sent[-3000:]
    await editor.shutdown_session()
    assert not editor.schema_errors, editor.schema_errors
    assert model.unknown_requests() == [], model.unknown_requests()
