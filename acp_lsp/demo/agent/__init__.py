"""The built-in offline demo agent (`demo`): run it as `python -m acp_lsp.demo.agent`.

An ACP agent on the agent side of the Python SDK that plays a deterministic turn through
every feature acp-lsp supports. Environment: `ACP_DEMO_DELAY` (seconds between streamed
steps, default 0.03), `ACP_DEMO_STATE_DIR` (keep sessions there across restarts),
`ACP_DEMO_LOG_LEVEL` (stderr logging, default WARNING).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

# Kept light on purpose: importing this package for the workspace path must not load the
# SDK's models (about a second). The agent itself is `acp_lsp.demo.agent.agent.DemoAgent`.
__all__ = ["DEMO_WORKSPACE", "copy_demo_workspace", "demo_agent_command", "main"]

DEMO_WORKSPACE = Path(__file__).resolve().parent.parent / "workspace"


def demo_agent_command() -> list[str]:
    """argv that starts the demo agent with this interpreter."""
    return [sys.executable, "-m", "acp_lsp.demo.agent"]


def copy_demo_workspace(dest: Path) -> Path:
    """Copy the sample project to `dest` (the demo edits files: never run it in place)."""
    shutil.copytree(
        DEMO_WORKSPACE, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
    )
    return dest


def main() -> None:
    from acp_lsp.demo.agent.__main__ import main as run_main

    run_main()
