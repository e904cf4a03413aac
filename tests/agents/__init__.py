"""ACP agents for tests: the scripted raw-NDJSON agent and the third-party peers.

`scripted_command(script)` gives the argv of tests/agents/scripted_acp.py for a script (a
dict, or the path of a JSON file); `read_log(path)` reads what it received. The real peers
are fetched by scripts/fetch-test-peers.sh into .cache/peers (see `Peers`).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPTED_ACP = Path(__file__).resolve().parent / "scripted_acp.py"
PEERS_DIR = REPO_ROOT / ".cache" / "peers"
# One argument may not exceed 128 KiB on Linux: bigger scripts go through a file.
_INLINE_LIMIT = 100_000


def scripted_command(
    script: dict[str, Any] | Path, *, arg: str | None = None, tmp_dir: Path | None = None
) -> list[str]:
    """argv that runs the scripted agent on `script` with this interpreter."""
    argv = [sys.executable, str(SCRIPTED_ACP)]
    if isinstance(script, Path):
        argv.append(str(script))
    else:
        text = json.dumps(script)
        if len(text) > _INLINE_LIMIT:
            if tmp_dir is None:
                raise ValueError("a script this large needs tmp_dir to be written to")
            path = tmp_dir / f"script-{abs(hash(text))}.json"
            path.write_text(text, encoding="utf-8")
            argv.append(str(path))
        else:
            argv += ["-c", text]
    if arg is not None:
        argv += ["--arg", arg]
    return argv


def read_log(path: Path) -> list[dict[str, Any]]:
    """The messages the scripted agent received (SCRIPTED_ACP_LOG), in order."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@dataclass(frozen=True)
class Peers:
    """Paths of the real third-party ACP peers fetched by scripts/fetch-test-peers.sh."""

    root: Path = PEERS_DIR

    @property
    def echo_agent(self) -> Path:
        """Python SDK 0.12.1 sdist `examples/echo_agent.py` (run with the venv's python)."""
        return self.root / "acp-python-examples" / "echo_agent.py"

    @property
    def example_agent(self) -> Path:
        """Python SDK 0.12.1 sdist `examples/agent.py`."""
        return self.root / "acp-python-examples" / "agent.py"

    @property
    def ts_sdk(self) -> Path:
        return self.root / "ts-sdk" / "node_modules" / "@agentclientprotocol" / "sdk"

    @property
    def ts_agent(self) -> Path:
        """TypeScript SDK 1.9.0 `dist/examples/agent.js` (run with node)."""
        return self.ts_sdk / "dist" / "examples" / "agent.js"

    @property
    def schema(self) -> Path:
        """The ACP v1 JSON Schema shipped in the TypeScript SDK package."""
        return self.ts_sdk / "schema" / "schema.json"

    def missing(self) -> list[Path]:
        paths = [self.echo_agent, self.example_agent, self.ts_agent, self.schema]
        return [p for p in paths if not p.is_file()]
