"""Entry point: `python -m acp_lsp.demo_agent` speaks ACP on stdin/stdout, logs to stderr."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from pathlib import Path

import acp

from acp_lsp.demo_agent.agent import DemoAgent
from acp_lsp.demo_agent.session import SessionStore


async def _serve(agent: DemoAgent) -> None:
    try:
        # close and resume are still "unstable" routes in SDK 0.12.1 (reference/acp.md §11).
        await acp.run_agent(agent, use_unstable_protocol=True)
    finally:
        await agent.close()


def main() -> None:
    level = logging.getLevelName(os.environ.get("ACP_DEMO_LOG_LEVEL", "WARNING").upper())
    logging.basicConfig(
        stream=sys.stderr,
        level=level if isinstance(level, int) else logging.WARNING,
        format="acp-lsp-demo %(levelname)s %(name)s: %(message)s",
    )
    state_dir = os.environ.get("ACP_DEMO_STATE_DIR")
    agent = DemoAgent(SessionStore(Path(state_dir) if state_dir else None))
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(agent))


if __name__ == "__main__":
    main()
