"""Bad bytes from an agent: malformed frames, 10 MB lines, invalid UTF-8, unknown methods,
responses to unknown ids, stderr floods.

Each bad frame is logged and skipped; every good frame around it arrives, in order, intact;
the turn ends normally and the session goes on.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.conftest import Bridge, read_pids, responses, scripted

pytestmark = pytest.mark.timeout(90)

TEN_MB = 10 * 1024 * 1024


def chunk(text: str) -> dict[str, Any]:
    return {
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        }
    }


# (label, step, what the server log says about it)
BAD_FRAMES: list[tuple[str, dict[str, Any], str]] = [
    ("not JSON", {"raw": "this is not json {"}, "not JSON"),
    (
        "truncated frame",
        {"raw": '{"jsonrpc":"2.0","method":"session/update","params":'},
        "not JSON",
    ),
    ("batch", {"json": [{"jsonrpc": "2.0", "method": "session/update"}]}, "JSON-RPC batch"),
    ("bare number", {"json": 42}, "not a JSON object"),
    (
        "invalid UTF-8",
        {"bytes_b64": base64.b64encode(b'{"x": "\xc3\x28\xff"}\n').decode()},
        "not UTF-8",
    ),
    (
        "unknown id",
        {"json": {"jsonrpc": "2.0", "id": "nobody-asked", "result": {}}},
        "unknown or abandoned id",
    ),
    (
        "unknown int id",
        {"json": {"jsonrpc": "2.0", "id": 987654, "error": {"code": 1, "message": "?"}}},
        "unknown or abandoned id",
    ),
    (
        "non-string method",
        {"json": {"jsonrpc": "2.0", "method": 7, "params": {}}},
        "non-string method",
    ),
    ("unknown notification", {"notify": "_vendor/telemetry", "params": {"x": 1}}, ""),
    (
        "update without update",
        {"notify": "session/update", "params": {"sessionId": "{sessionId}"}},
        "without an update object",
    ),
    (
        "update for unknown session",
        {
            "notify": "session/update",
            "params": {"sessionId": "ghost", "update": {"sessionUpdate": "plan", "entries": []}},
        },
        "",
    ),
    (
        "unknown update variant",
        {"update": {"sessionUpdate": "_vendor_widget", "payload": [1, 2]}},
        "",
    ),
    ("empty line", {"raw": ""}, ""),
    ("whitespace", {"raw": "   \t  "}, ""),
    ("10 MB garbage line", {"raw": "g" * TEN_MB}, "not JSON"),
]


@pytest.mark.heavy
async def test_bad_frames_are_skipped_and_nothing_else_is_lost(
    bridge: Bridge, tmp_path: Path
) -> None:
    log = tmp_path / "agent.log"
    steps: list[dict[str, Any]] = []
    expected: list[str] = []
    for index, (_label, step, _logged) in enumerate(BAD_FRAMES):
        steps += [chunk(f"<{index}>"), step]
        expected.append(f"<{index}>")
    # an unknown method the agent asks the client: answered "method not found"
    steps.append({"request": "_vendor/do_something", "id": "unknown-method", "params": {}})
    # a 10 MB valid frame: one chunk of 10 MiB, delivered whole
    steps.append({"flood": {"count": 1, "text": "x", "text_repeat": TEN_MB}})
    steps.append(chunk("<end>"))
    script_file = tmp_path / "bad-frames.json"
    script_file.write_text(json.dumps({"on": {"session/prompt#1": steps}}), encoding="utf-8")
    agent = scripted({}, pids=tmp_path / "p", log=log)
    agent["args"][-1] = str(script_file)  # 10 MB of script: from a file, not argv
    editor = await bridge.start({"agent": agent})
    sid = (await editor.new_session())["sessionId"]

    assert (await editor.prompt(sid, "go", timeout=60))["stopReason"] == "end_turn"
    texts = editor.sessions[sid].message_texts()
    assert texts[0] == "go"
    assert texts[1] == "".join(expected) + "x" * TEN_MB + "<end>"  # in order, 0 bytes lost
    unknown = [u for u in editor.sessions[sid].unknown if u["sessionUpdate"] == "_vendor_widget"]
    assert unknown == [{"sessionUpdate": "_vendor_widget", "payload": [1, 2]}]
    answer = responses(log)["unknown-method"]
    assert answer["error"]["code"] == -32601
    server_log = bridge.server_log()
    for label, _step, logged in BAD_FRAMES:
        if logged:
            assert logged in server_log, f"{label}: not logged"
    # the editor's view equals the bridge's, and the session goes on
    snapshot = await editor.acp("acp/getSession", {"sessionId": sid})
    assert snapshot["messages"][1]["content"][0]["text"] == texts[1]
    assert (await editor.prompt(sid, "again"))["stopReason"] == "end_turn"
    assert len(read_pids(tmp_path / "p")) == 1  # never restarted


@pytest.mark.heavy
async def test_stderr_flood_does_not_block(bridge: Bridge, tmp_path: Path) -> None:
    flood = {
        "on": {
            "session/prompt": [
                {"stderr": "E" * 199 + "\n", "repeat": 50_000},  # 10 MB of short lines
                {"stderr": "L", "repeat": TEN_MB},  # one 10 MB line
                {"stderr": "\nlast words\n"},
                chunk("still here"),
            ]
        }
    }
    editor = await bridge.start({"agent": scripted(flood, pids=tmp_path / "p")})
    sid = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(sid, "go", timeout=60))["stopReason"] == "end_turn"
    assert editor.sessions[sid].message_texts()[-1] == "still here"
    logs = [m.message for m in editor.log_messages]
    # forwarded, but rate-limited: the editor is not flooded with 50 000 lines
    assert any("EEEE" in m for m in logs)
    assert len(logs) < 2_000, len(logs)
    assert (await editor.prompt(sid, "again"))["stopReason"] == "end_turn"
