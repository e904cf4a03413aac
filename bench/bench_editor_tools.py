"""Benchmark section "editor_tools" (issue 27): what the editor tools cost and how fast they answer.

Through the real server (a subprocess) with the scripted ACP agent declaring HTTP MCP servers:
- acp/newSession with editor tools on vs off (alternating servers, same run): the on side
  adds the MCP server to session/new (the endpoint starts in the background once settings
  enable it; each side's first session, which starts the agent, is reported apart);
- one MCP tool call (``diagnostics``) from an MCP SDK client through the bridge to an editor
  that answers ``acp/editorTool`` at once, and back (the client session kept open).

Run alone: ``.venv/bin/python bench/bench_editor_tools.py [--quick]``; bench/run.py can call
``run(r, Section, median, fmt)``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from lsprotocol import types  # noqa: E402
from mcp import Client  # noqa: E402
from pytest_lsp import ClientServerConfig  # noqa: E402

from tests.agents import read_log, scripted_command  # noqa: E402
from tests.agents.scripted_acp import DEFAULT_INITIALIZE  # noqa: E402
from tests.e2e.conftest import server_env, with_fast_demo  # noqa: E402
from tests.support.lsp_editor import SERVER_COMMAND, TestEditor, capabilities  # noqa: E402

JsonObject = dict[str, Any]
HTTP_MCP = {
    **DEFAULT_INITIALIZE,
    "agentCapabilities": {
        **DEFAULT_INITIALIZE["agentCapabilities"],
        "mcpCapabilities": {"http": True},
    },
}
ANSWER = {
    "diagnostics": [
        {
            "uri": "file:///ws/a.py",
            "range": {"start": {"line": i, "character": 0}, "end": {"line": i, "character": 4}},
            "severity": 1,
            "message": f"problem {i}",
        }
        for i in range(20)
    ]
}


async def _editor(tmp: Path, enabled: bool) -> tuple[TestEditor, Path]:
    ws = tmp / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    log = tmp / "agent.log"
    argv = scripted_command({"initialize": HTTP_MCP}, tmp_dir=tmp)
    agent = {"command": argv[0], "args": argv[1:], "env": {"SCRIPTED_ACP_LOG": str(log)}}
    options = {
        "editorTools": {"enabled": enabled},
        "agents": {"scripted": agent},
        "defaultAgent": "scripted",
        "history": {"enabled": False},
        "trackDisk": False,
    }
    config = ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=TestEditor, server_env=server_env(tmp)
    )
    editor = await config.start()
    assert isinstance(editor, TestEditor)

    @editor.feature("acp/editorTool")
    def answer(_client: TestEditor, _params: JsonObject) -> JsonObject:
        return ANSWER

    caps = capabilities("neovim")
    caps.experimental["acp"]["editorTools"] = ["diagnostics"]
    await editor.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=ws.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
            initialization_options=with_fast_demo(options),
        )
    )
    await editor.acp("acp/listAgents", {})
    return editor, log


async def _new_session_ms(editor: TestEditor) -> float:
    start = time.perf_counter()
    await editor.acp("acp/newSession", {})
    return (time.perf_counter() - start) * 1000


async def _raw_calls(url: str, calls: int) -> list[float]:
    """Tool calls over one keep-alive connection, one write per request: the bridge's own
    time, without a client library's."""
    host_port, path = url.removeprefix("http://").split("/", 1)
    host, port = host_port.split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    out: list[float] = []
    try:
        for i in range(calls + 1):
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "diagnostics", "arguments": {}},
                }
            ).encode()
            head = (
                f"POST /{path} HTTP/1.1\r\nHost: {host_port}\r\n"
                "Content-Type: application/json\r\n"
                "Accept: application/json, text/event-stream\r\n"
                "Mcp-Protocol-Version: 2025-06-18\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            ).encode()
            start = time.perf_counter()
            writer.write(head + body)
            headers = (await reader.readuntil(b"\r\n\r\n")).decode().lower()
            length = int(headers.split("content-length:")[1].split("\r\n")[0])
            answer = json.loads(await reader.readexactly(length))
            if i:  # the first call warms the connection
                out.append((time.perf_counter() - start) * 1000)
            assert len(json.loads(answer["result"]["content"][0]["text"])) == 20, answer
    finally:
        writer.close()
    return out


async def measure(sessions: int, calls: int) -> JsonObject:
    tmp = Path(tempfile.mkdtemp(prefix="bench-editor-tools-"))
    try:
        on_editor, on_log = await _editor(tmp / "on", True)
        off_editor, _ = await _editor(tmp / "off", False)
        # the agent process starts on the first session of each: not part of the comparison
        first_off = await _new_session_ms(off_editor)
        first_on = await _new_session_ms(on_editor)
        on: list[float] = []
        off: list[float] = []
        for i in range(sessions):
            pair = (on_editor, off_editor) if i % 2 == 0 else (off_editor, on_editor)
            for editor in pair:
                (on if editor is on_editor else off).append(await _new_session_ms(editor))
        new = [m for m in read_log(on_log) if m.get("method") == "session/new"]
        url = next(s["url"] for s in new[-1]["params"]["mcpServers"] if s["name"] == "editor")
        round_trips = await _raw_calls(url, calls)
        sdk: list[float] = []
        async with Client(url) as client:
            await client.call_tool("diagnostics", {})
            for _ in range(max(10, calls // 10)):
                start = time.perf_counter()
                result = await client.call_tool("diagnostics", {})
                sdk.append((time.perf_counter() - start) * 1000)
                assert not result.is_error
        connect: list[float] = []
        for _ in range(max(3, calls // 20)):
            start = time.perf_counter()
            async with Client(url) as client:
                await client.call_tool("diagnostics", {})
            connect.append((time.perf_counter() - start) * 1000)
        for editor in (on_editor, off_editor):
            await editor.shutdown_session()
        return {
            "first_on_ms": first_on,
            "first_off_ms": first_off,
            "on_ms": on,
            "off_ms": off,
            "call_ms": round_trips,
            "sdk_call_ms": sdk,
            "connect_and_call_ms": connect,
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(r: Any, section: Any, median: Any, fmt: Any) -> Any:
    quick = bool(getattr(r.p, "quick", False))
    data = asyncio.run(measure(10 if quick else 40, 50 if quick else 300))
    return _section(data, section, median)


def _section(data: JsonObject, section: Any, median: Any) -> Any:
    on, off = median(data["on_ms"]), median(data["off_ms"])
    ratio = on / off
    call, connect = median(data["call_ms"]), median(data["connect_and_call_ms"])
    sdk = median(data["sdk_call_ms"])
    p95 = sorted(data["call_ms"])[int(len(data["call_ms"]) * 0.95) - 1]
    sec = section(
        "Editor tools — session/new with vs without the MCP server, one tool call's round trip",
        ["measure", "value"],
        data=data,
    )
    sec.rows += [
        [f"acp/newSession, editor tools on (median of {len(data['on_ms'])})", f"{on:.1f} ms"],
        [f"acp/newSession, editor tools off (median of {len(data['off_ms'])})", f"{off:.1f} ms"],
        ["on ÷ off", f"{ratio:.2f}×"],
        [
            "first session, on / off (starts the agent; on: the endpoint warmed up meanwhile)",
            f"{data['first_on_ms']:.0f} / {data['first_off_ms']:.0f} ms",
        ],
        [
            f"diagnostics call → acp/editorTool → 20 items back ({len(data['call_ms'])} calls)",
            f"{call:.1f} ms (p95 {p95:.1f} ms)",
        ],
        ["the same through the Python MCP SDK client", f"{sdk:.1f} ms"],
        ["a new Python MCP SDK client: connect + one call", f"{connect:.1f} ms"],
    ]
    sec.goal("editor tools: session/new on ÷ off", f"{ratio:.2f}×", "≤ 1.20×", ratio <= 1.2)
    sec.goal("editor tools: one tool call round trip", f"{call:.1f} ms", "< 20 ms", call < 20)
    return sec


def main() -> None:
    from dataclasses import dataclass, field

    @dataclass
    class Section:
        title: str
        headers: list[str]
        rows: list[list[str]] = field(default_factory=list)
        goals: list[JsonObject] = field(default_factory=list)
        data: JsonObject = field(default_factory=dict)

        def goal(self, name: str, measured: str, target: str, met: bool | None) -> None:
            self.goals.append({"goal": name, "measured": measured, "target": target, "met": met})

    quick = "--quick" in sys.argv
    data = asyncio.run(measure(10 if quick else 40, 50 if quick else 300))
    sec = _section(data, Section, statistics.median)
    print(f"## {sec.title}\n\n| measure | value |\n|---|---|")
    for row in sec.rows:
        print(f"| {row[0]} | {row[1]} |")
    print()
    for goal in sec.goals:
        state = "met" if goal["met"] else "missed"
        print(f"- {goal['goal']}: {goal['measured']} (target {goal['target']}): {state}")


if __name__ == "__main__":
    main()
