"""Real third-party ACP agents (installed by scripts/fetch-test-peers.sh) behind a tap."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.schema import ConversationValidator

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / ".cache" / "peers"
PY_EXAMPLES = PEERS / "acp-python-examples"
TS_SDK = PEERS / "ts-sdk" / "node_modules" / "@agentclientprotocol" / "sdk"
TS_AGENT = TS_SDK / "dist" / "examples" / "agent.js"
TAP = ROOT / "tests" / "support" / "agent_tap.py"


def require(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} missing: run scripts/fetch-test-peers.sh (./run tests does)")
    return path


def tapped(log: Path, *command: str) -> dict[str, Any]:
    """An agent config that runs ``command`` behind the logging tap."""
    return {"command": sys.executable, "args": [str(TAP), str(log), "--", *command]}


def python_example(name: str, log: Path) -> dict[str, Any]:
    return tapped(log, sys.executable, str(require(PY_EXAMPLES / name)))


def ts_agent(log: Path) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    return tapped(log, node, str(require(TS_AGENT)))


def validate_log(log: Path) -> int:
    """Validate every frame of a tapped conversation; returns how many the client sent."""
    validator = ConversationValidator()
    sent = 0
    for raw in log.read_text(encoding="utf-8").splitlines():
        entry = json.loads(raw)
        msg = json.loads(entry["line"])
        if entry["from"] == "client":
            validator.from_client(msg)
            sent += 1
        else:
            try:
                validator.from_agent(msg)
            except AssertionError:
                pass  # third-party agents answer null where the schema wants objects; not ours
    return sent


def sent_by_client(log: Path) -> list[dict[str, Any]]:
    """The messages the bridge sent the agent, parsed, in order."""
    out = []
    for raw in log.read_text(encoding="utf-8").splitlines():
        entry = json.loads(raw)
        if entry["from"] == "client":
            out.append(json.loads(entry["line"]))
    return out


def permission_answers(log: Path) -> list[dict[str, Any]]:
    """The outcomes the bridge answered permission requests with."""
    return [
        m["result"]["outcome"]
        for m in sent_by_client(log)
        if isinstance(m.get("result"), dict) and "outcome" in m["result"]
    ]
