"""Client (a): a minimal raw NDJSON reader of the flood agent — the pipe's limit.

Blocking reads of 64 KiB, split on newlines, ``json.loads`` per frame, text appended. No
validation, no event loop: the least a client that parses every frame can do.

    raw_reader.py flood N SIZE | sustain SECONDS SIZE | paced N MS
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from common import agent_argv, digest, emit, percentile


def main() -> None:
    scenario = sys.argv[1:]
    prebuild = (int(scenario[1]), int(scenario[2])) if scenario[0] == "flood" else None
    proc = subprocess.Popen(agent_argv(prebuild), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    fd = proc.stdout.fileno()
    partial = b""

    def send(msg: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(msg).encode() + b"\n")
        proc.stdin.flush()

    def frames() -> list[dict[str, Any]]:
        nonlocal partial
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            raise SystemExit("agent closed its stdout")
        lines = (partial + chunk).split(b"\n")
        partial = lines.pop()
        return [json.loads(line) for line in lines if line]

    def call(rid: int, method: str, params: dict[str, Any]) -> Any:
        send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            for msg in frames():
                if msg.get("id") == rid:
                    return msg["result"]

    call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    sid = call(1, "session/new", {"cwd": os.getcwd(), "mcpServers": []})["sessionId"]
    parts: list[str] = []
    latencies: list[float] = []
    paced = scenario[0] == "paced"
    t0 = time.perf_counter()
    t_last = t0
    send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/prompt",
            "params": {"sessionId": sid, "prompt": [{"type": "text", "text": " ".join(scenario)}]},
        }
    )
    result: Any = None
    while result is None:
        batch = frames()
        now_ns = time.monotonic_ns()
        got_text = False
        for msg in batch:
            if msg.get("method") == "session/update":
                text = msg["params"]["update"]["content"]["text"]
                parts.append(text)
                got_text = True
                if paced:
                    latencies.append((now_ns - int(text[1:-1].split(":")[1])) / 1e6)
            elif msg.get("id") == 2:
                result = msg["result"]
        if got_text:
            t_last = time.perf_counter()
    proc.stdin.close()
    proc.wait()
    text = "".join(parts)
    out: dict[str, Any] = {"client": "raw", "frames": len(parts), "seconds": t_last - t0}
    if paced:
        seqs = [int(p[1:].split(":")[0]) for p in parts]
        out["in_order"] = seqs == list(range(len(seqs)))
        out["p50_ms"] = percentile(latencies, 50)
        out["p99_ms"] = percentile(latencies, 99)
        out["first_ms"] = latencies[0] if latencies else float("nan")
    else:
        out["chars"] = len(text)
        out["sha256"] = digest(text)
        out["chunks"] = (result.get("_meta") or {}).get("chunks", len(parts))
    emit(out)


if __name__ == "__main__":
    main()
