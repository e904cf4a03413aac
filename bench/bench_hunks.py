"""Review by hunk: the time from rejecting one hunk of an open buffer to the buffer showing it.

Through the real server (``python -m acp_lsp``) and the tests' LSP editor (it applies
``workspace/applyEdit`` to its open documents as an editor does), with the scripted agent
changing two distant lines of an open 2,000-line file on disk, as Claude Code or Codex would.
Side by side in one run, alternating: ``acp/reviewEdit`` rejecting one hunk (the other hunk
and the rest stay) and rejecting the whole change, each timed from the request until the
editor's document reads the undone text.

    .venv/bin/python bench/bench_hunks.py [--rounds R] [--lines N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lsprotocol import types
from pytest_lsp import ClientServerConfig

from tests.agents import scripted_command
from tests.support.lsp_editor import SERVER_COMMAND, TestEditor, capabilities

JsonObject = dict[str, Any]


async def measure(rounds: int, lines: int) -> JsonObject:
    with tempfile.TemporaryDirectory(prefix="acp-lsp-bench-hunks-") as tmp_name:
        tmp = Path(tmp_name)
        ws = tmp / "ws"
        ws.mkdir()
        path = ws / "big.py"
        original = "".join(f"value_{n} = {n}\n" for n in range(lines))
        changed = original.replace("value_10 = 10\n", "value_10 = 'ten'\n").replace(
            f"value_{lines - 10} = {lines - 10}\n", f"value_{lines - 10} = 'late'\n"
        )
        path.write_text(original)
        write = [
            {"sleep": 0.2},  # a model round trip: the folder's snapshot before it is taken
            {
                "update": {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "sh {prompt}",  # one tool call per turn
                    "title": "sed -i …",
                    "kind": "execute",
                    "status": "in_progress",
                }
            },
            {"write_file": {"path": "big.py", "content": changed}},
            {
                "update": {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "sh {prompt}",  # one tool call per turn
                    "status": "completed",
                }
            },
        ]
        argv = scripted_command({"on": {"session/prompt": write}}, tmp_dir=tmp)
        env = {"ACP_LSP_DATA_DIR": str(tmp / "data"), "XDG_CONFIG_HOME": str(tmp / "xdg")}
        config = ClientServerConfig(
            server_command=SERVER_COMMAND,
            client_factory=TestEditor,
            server_env={**os.environ, **env},
        )
        editor = await config.start()
        assert isinstance(editor, TestEditor)
        await editor.initialize_session(
            types.InitializeParams(
                capabilities=capabilities("visual_studio_code"),
                root_uri=ws.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
                initialization_options={
                    "agents": {"scripted": {"command": argv[0], "args": argv[1:]}},
                    "defaultAgent": "scripted",
                    "followAlong": False,
                },
            )
        )
        try:
            editor.open(path)
            sid = (await editor.new_session())["sessionId"]
            times: dict[str, list[float]] = {"hunk": [], "whole": []}
            for n in range(rounds * 2):
                kind = "hunk" if n % 2 == 0 else "whole"
                await editor.prompt(sid, f"change it ({n})")
                assert editor.doc(path).text == changed
                call = next(
                    c
                    for c in reversed(list(editor.sessions[sid].tool_calls.values()))
                    if (c.get("review") or {}).get("status") == "pending"
                )
                target: JsonObject = {
                    "sessionId": sid,
                    "action": "reject",
                    "toolCallId": call["toolCallId"],
                    "path": str(path),
                }
                wanted = original
                if kind == "hunk":
                    target["hunk"] = 1  # the late line alone
                    wanted = changed.replace(
                        f"value_{lines - 10} = 'late'\n", f"value_{lines - 10} = {lines - 10}\n"
                    )
                started = time.perf_counter()
                result = await editor.acp("acp/reviewEdit", target)
                deadline = time.monotonic() + 30
                while editor.doc(path).text != wanted:
                    if time.monotonic() > deadline:
                        raise AssertionError(f"{kind}: the buffer never showed it: {result}")
                    await asyncio.sleep(0.0005)
                times[kind].append((time.perf_counter() - started) * 1000)
                path.write_text(original)  # the next turn starts from the original again
        finally:
            await editor.shutdown_session()
    hunk, whole = statistics.median(times["hunk"]), statistics.median(times["whole"])
    return {
        "rounds": rounds,
        "lines": lines,
        "hunk_ms": hunk,
        "whole_ms": whole,
        "hunk_vs_whole": hunk / whole,
    }


def run(rounds: int = 7, lines: int = 2000) -> JsonObject:
    return asyncio.run(measure(rounds, lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--lines", type=int, default=2000)
    args = parser.parse_args()
    print(json.dumps(run(args.rounds, args.lines), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
