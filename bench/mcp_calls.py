"""Timed MCP ``tools/call`` requests over raw HTTP, for the editor tools benches: the whole
call as an agent's HTTP client sees it, without a client library's own time."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

JsonObject = dict[str, Any]


def cpu_ms(pid: int) -> float:
    """CPU time (user + system, all threads) the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


async def raw_calls(
    url: str, arguments: JsonObject, items: int, calls: int, server: int
) -> JsonObject:
    """``diagnostics`` calls over one keep-alive connection, one write per request: the
    whole call as an agent's HTTP client sees it (request out, full answer parsed), without a
    client library's own time. Also the CPU time per call of the server (the bridge) and of
    this process (the editor's answer written, the agent's read): wall time on a busy machine
    includes waiting for a core, CPU time does not."""
    host_port, path = url.removeprefix("http://").split("/", 1)
    host, port = host_port.split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    out: list[float] = []
    size = 0
    cpu: tuple[float, float] = (0.0, 0.0)
    try:
        for i in range(calls + 1):
            if i == 1:
                cpu = (cpu_ms(server), time.process_time() * 1000)
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "diagnostics", "arguments": arguments},
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
            size = length
            text = answer["result"]["content"][0]["text"]
            assert json.loads(text)["total"] == items, text[:200]
        server_cpu = (cpu_ms(server) - cpu[0]) / calls
        own_cpu = (time.process_time() * 1000 - cpu[1]) / calls
    finally:
        writer.close()
    return {"ms": out, "bytes": size, "bridge_cpu_ms": server_cpu, "editor_agent_cpu_ms": own_cpu}
