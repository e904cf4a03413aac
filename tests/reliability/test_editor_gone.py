"""The editor disappears: stdin closes, ``exit`` without ``shutdown``, or a kill signal.

Set up the worst case first: two agents (one ignores SIGTERM and stdin EOF), a turn running,
a permission prompt open in the editor, and an agent terminal whose command left a background
grandchild. Then the editor goes; every one of those processes must be gone within 10 s,
checked by pid.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.conftest import (
    CANCEL_GRACE_S,
    alive,
    read_pids,
    scripted,
    server_env,
    wait_gone,
)
from tests.reliability.raw_lsp import RawLspClient

pytestmark = pytest.mark.timeout(60)

TERMINAL_COMMAND = "sleep 300 & echo $! > bg.pid; echo $$ > term.pid; exec sleep 300"
BOUND_S = 10.0


def terminal_agent() -> dict[str, Any]:
    return {
        "on": {
            "session/prompt": [
                {
                    "request": "terminal/create",
                    "params": {
                        "sessionId": "{sessionId}",
                        "command": "/bin/sh",
                        "args": ["-c", TERMINAL_COMMAND],
                    },
                    "save_as": "t",
                },
                {
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": "running"},
                    }
                },
                {"sleep": 300},
            ]
        }
    }


def asking_agent() -> dict[str, Any]:
    return {
        "on_eof": "hang",  # does not exit when its stdin closes
        "ignore_cancel": True,
        "on": {
            "session/prompt": [
                {
                    "request": "session/request_permission",
                    "params": {
                        "sessionId": "{sessionId}",
                        "toolCall": {"toolCallId": "t1", "title": "deploy"},
                        "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
                    },
                },
                {"sleep": 300},
            ]
        },
    }


class Scene:
    def __init__(self, client: RawLspClient, workspace: Path, pid_files: list[Path]) -> None:
        self.client = client
        self.workspace = workspace
        self.pid_files = pid_files

    def pids(self) -> list[int]:
        found = [pid for f in self.pid_files for pid in read_pids(f)]
        found += [int((self.workspace / n).read_text()) for n in ("term.pid", "bg.pid")]
        return found


@pytest.fixture
async def scene(tmp_path: Path, workspace: Path) -> AsyncIterator[Scene]:
    runner, asker = tmp_path / "runner.pids", tmp_path / "asker.pids"
    client = await RawLspClient.start(server_env(tmp_path), tmp_path / "server.log")
    options = {
        "agents": {
            "runner": scripted(terminal_agent(), pids=runner),
            "asker": scripted(asking_agent(), pids=asker, ignore_term=True),
        },
        "cancelGraceS": CANCEL_GRACE_S,
    }
    try:
        await client.initialize(workspace, options)
        run_sid = (await client.call("acp/newSession", {"agent": "runner"}))["sessionId"]
        ask_sid = (await client.call("acp/newSession", {"agent": "asker"}))["sessionId"]
        client.request("acp/prompt", {"sessionId": run_sid, "prompt": "build"})
        client.request("acp/prompt", {"sessionId": ask_sid, "prompt": "deploy"})
        await client.wait_for(
            lambda: (
                (workspace / "bg.pid").exists()
                and (workspace / "term.pid").exists()
                and any(r["method"] == "acp/requestPermission" for r in client.server_requests)
            )
        )
        await asyncio.sleep(0.1)  # let the terminal's pid files be complete
        built = Scene(client, workspace, [runner, asker])
        assert len(built.pids()) == 4 and all(alive(pid) for pid in built.pids())
        yield built
    finally:
        await client.aclose()


async def test_stdin_closes(scene: Scene) -> None:
    pids = scene.pids()
    scene.client.close_stdin()
    await scene.client.wait_exit()
    assert not await wait_gone(pids, BOUND_S)


async def test_exit_without_shutdown(scene: Scene) -> None:
    pids = scene.pids()
    scene.client.notify("exit")
    await scene.client.wait_exit()
    assert not await wait_gone(pids, BOUND_S)


async def test_shutdown_then_exit(scene: Scene) -> None:
    pids = scene.pids()
    assert await scene.client.call("shutdown") is None
    # shutdown already stopped everything, before it answered
    assert not [pid for pid in pids if alive(pid)]
    scene.client.notify("exit")
    assert await scene.client.wait_exit() == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
async def test_editor_kills_the_server(scene: Scene, sig: signal.Signals) -> None:
    """Editors that time out a shutdown kill the server; it still takes its children along."""
    pids = scene.pids()
    scene.client.proc.send_signal(sig)
    await scene.client.wait_exit()
    assert not await wait_gone(pids, BOUND_S)
