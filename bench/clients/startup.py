"""Startup: process start → ``initialize`` answered, for acp-lsp or a bare pygls server.

    startup.py acp | bare

A raw LSP client (no client library to import): the clock starts just before the process
is spawned and stops when the ``initialize`` response has been read. The server's own CPU
time up to then is reported too: on a busy machine it is the steadier of the two.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, emit, proc_status

COMMANDS = {
    "acp": [sys.executable, "-m", "acp_lsp"],
    "bare": [sys.executable, str(Path(__file__).with_name("bare_pygls_server.py"))],
}


def main() -> None:
    which = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="acp-lsp-bench-") as tmp:
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": os.getpid(),
                    "rootUri": Path(tmp).as_uri(),
                    "capabilities": {},
                    "initializationOptions": {},
                },
            }
        ).encode()
        env = {**os.environ, "XDG_CONFIG_HOME": tmp}
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            COMMANDS[which],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=os.environ.get("BENCH_SERVER_ROOT") or ROOT,  # another tree: before/after
            env=env,
        )
        send(proc, body)
        response = answer(proc, 1)
        ms = (time.perf_counter() - t0) * 1000
        cpu_ms = proc_status(proc.pid)["cpu_s"] * 1000  # the server's own CPU time so far
        assert "result" in response, response
        figures = {"client": which, "ms": ms, "cpu_ms": cpu_ms}
        if which == "acp":
            # acp-lsp builds settings, the hub and the params models after answering
            # initialize: the first acp/* answer shows what that moved, not hides it
            send(proc, json.dumps({"jsonrpc": "2.0", "id": 2, "method": "acp/listAgents"}).encode())
            assert "result" in answer(proc, 2)
            figures["first_request_ms"] = (time.perf_counter() - t0) * 1000
        proc.kill()
        proc.wait()
    emit(figures)


def send(proc: subprocess.Popen[bytes], body: bytes) -> None:
    assert proc.stdin is not None
    proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    proc.stdin.flush()


def answer(proc: subprocess.Popen[bytes], msg_id: int) -> dict[str, object]:
    """Read messages until the response to ``msg_id``."""
    assert proc.stdout is not None
    length = 0
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("server closed its stdout")
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
        elif line in (b"\r\n", b"\n"):
            message = json.loads(proc.stdout.read(length))
            if message.get("id") == msg_id and "method" not in message:
                return message  # type: ignore[no-any-return]


if __name__ == "__main__":
    main()
