"""Client (b): a direct client on the ACP Python SDK (agent-client-protocol 0.12.1).

What a Python editor plug-in would do without acp-lsp: ``spawn_agent_process`` and a
``session_update`` handler that appends each chunk's text. The SDK runs handlers in their
own tasks, so the text is checked for order too (reference/acp.md §11, quirk 3).

    sdk_client.py flood N SIZE | sustain SECONDS SIZE | paced N MS
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

import acp
from common import agent_argv, digest, emit, paced_figures


class BenchClient:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.t_last = 0.0
        self.received_ns: list[int] = []  # when each chunk reached the handler (paced runs)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        content = getattr(update, "content", None)
        text = getattr(content, "text", None)
        if isinstance(text, str):
            self.parts.append(text)
            self.received_ns.append(time.monotonic_ns())
            self.t_last = time.perf_counter()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("session/request_permission")


async def run(scenario: list[str]) -> dict[str, Any]:
    prebuild = (int(scenario[1]), int(scenario[2])) if scenario[0] == "flood" else None
    argv = agent_argv(prebuild)
    client = BenchClient()
    async with acp.spawn_agent_process(client, argv[0], *argv[1:]) as (conn, _proc):
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        t0 = time.perf_counter()
        response = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block(" ".join(scenario))]
        )
    if scenario[0] == "paced":
        return {"client": "python-sdk", **paced_figures(client.parts, client.received_ns)}
    text = "".join(client.parts)
    meta = getattr(response, "field_meta", None) or {}
    return {
        "client": "python-sdk",
        "frames": len(client.parts),
        "seconds": client.t_last - t0,
        "chars": len(text),
        "sha256": digest(text),
        "chunks": meta.get("chunks", len(client.parts)),
    }


def main() -> None:
    emit(asyncio.run(run(sys.argv[1:])))


if __name__ == "__main__":
    main()
