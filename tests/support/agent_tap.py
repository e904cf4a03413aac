"""A transparent stdio proxy in front of an agent, logging what the bridge sends it.

    python tests/support/agent_tap.py LOGFILE -- COMMAND [ARGS...]

Every line in either direction is forwarded unchanged and logged to LOGFILE as
``{"from": "client"|"agent", "line": <the raw line>}``; stderr passes through. Tests validate
the conversation against the official ACP schema.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading


def main() -> int:
    sep = sys.argv.index("--")
    log_path = sys.argv[1]
    command = sys.argv[sep + 1 :]
    child = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sys.stderr
    )
    assert child.stdin is not None and child.stdout is not None
    log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - shared by both pumps
    lock = threading.Lock()

    def record(side: str, line: bytes) -> None:
        with lock:
            log.write(json.dumps({"from": side, "line": line.decode("utf-8", "replace")}) + "\n")
            log.flush()

    def to_agent() -> None:
        for line in sys.stdin.buffer:
            record("client", line)
            try:
                child.stdin.write(line)  # type: ignore[union-attr]
                child.stdin.flush()  # type: ignore[union-attr]
            except BrokenPipeError:
                break
        try:
            child.stdin.close()  # type: ignore[union-attr]
        except BrokenPipeError:
            pass

    def to_client() -> None:
        out = sys.stdout.buffer
        for line in child.stdout:  # type: ignore[union-attr]
            record("agent", line)
            out.write(line)
            out.flush()

    threading.Thread(target=to_agent, daemon=True).start()
    reader = threading.Thread(target=to_client, daemon=True)
    reader.start()

    def forward(signum: int, _frame: object) -> None:
        child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    code = child.wait()
    reader.join(timeout=2)
    os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    sys.exit(main())
