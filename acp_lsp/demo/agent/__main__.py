"""Entry point: `python -m acp_lsp.demo.agent` speaks ACP on stdin/stdout, logs to stderr."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp_lsp.demo.agent.agent import DemoAgent


def skip_field_docstrings() -> None:
    """The ACP SDK's models ask pydantic for every field's docstring (use_attribute_docstrings),
    which pydantic finds by reading and tokenizing the SDK's source as each model is built: a
    third of this agent's start (0.60 -> 0.42 s of CPU, measured). Only JSON schemas use those
    docstrings, and this agent makes none. Where pydantic has no such step, nothing changes."""
    try:
        from pydantic._internal import _fields
    except ImportError:
        return
    if hasattr(_fields, "_update_fields_from_docstrings"):

        def skip(*_args: Any, **_kwargs: Any) -> None:
            return None

        _fields._update_fields_from_docstrings = skip


async def _serve(agent: DemoAgent) -> None:
    import acp

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
    skip_field_docstrings()  # before the SDK's models are built
    from acp_lsp.demo.agent.agent import DemoAgent
    from acp_lsp.demo.agent.session import SessionStore

    state_dir = os.environ.get("ACP_DEMO_STATE_DIR")
    agent = DemoAgent(SessionStore(Path(state_dir) if state_dir else None))
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(agent))


if __name__ == "__main__":
    main()
