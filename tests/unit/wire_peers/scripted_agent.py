"""A tiny NDJSON JSON-RPC peer for the wire tests; its methods are test actions.

Blocking stdio, standard library only. It exits when stdin closes. Methods:
  echo                    answer with the params
  hold / release          'hold' is not answered until 'release'; then every held request is
                          answered, newest first (out of order), and 'release' last
  spam {count}            send `count` notifications 'n/seq' {i}, then answer
  raw {hex: [...]}        write each hex-encoded byte string as-is, then answer
  big {text, repeat}      answer with text * repeat (one huge line)
  stderr {size}           write `size` bytes of numbered lines to stderr, then answer
  ask {id, method, params, cancel}
                          send that request to the client (and at once a $/cancel_request
                          for it when `cancel`); answer with the client's response object
  send_cancel {requestId} send $/cancel_request, then answer
  responses               answer with the ids of every response the client sent us
  seen                    answer with the methods of every notification the client sent us
  env / cwd               answer with os.environ / os.getcwd()
  grandchild              start a sleeping child (same process group); answer with its pid
  die {code, stderr}      write stderr, exit without answering
  never                   never answered
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

out = sys.stdout.buffer
held: list[dict[str, Any]] = []
asks: dict[Any, Any] = {}  # id of our request to the client -> id of the 'ask' to answer
responses: list[Any] = []
seen: list[str] = []


def write(*msgs: dict[str, Any]) -> None:
    out.write(b"".join(json.dumps(m, ensure_ascii=False).encode() + b"\n" for m in msgs))
    out.flush()


def answer(rid: Any, result: Any) -> None:
    write({"jsonrpc": "2.0", "id": rid, "result": result})


def handle(msg: dict[str, Any]) -> None:
    method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    if method is None:  # a response from the client
        responses.append(rid)
        if rid in asks:
            answer(asks.pop(rid), msg)
        return
    if "id" not in msg:
        seen.append(method)
        return
    if method == "echo":
        answer(rid, params)
    elif method == "hold":
        held.append(msg)
    elif method == "release":
        for h in reversed(held):
            answer(h["id"], h["params"])
        held.clear()
        answer(rid, "released")
    elif method == "spam":
        for start in range(0, params["count"], 1000):
            stop = min(start + 1000, params["count"])
            write(
                *(
                    {"jsonrpc": "2.0", "method": "n/seq", "params": {"i": i}}
                    for i in range(start, stop)
                )
            )
        answer(rid, params["count"])
    elif method == "raw":
        out.write(b"".join(bytes.fromhex(h) for h in params["hex"]))
        out.flush()
        answer(rid, "raw done")
    elif method == "big":
        answer(rid, params["text"] * params["repeat"])
    elif method == "stderr":
        written, n = 0, 0
        while written < params["size"]:
            line = f"stderr line {n} " + "x" * 80 + "\n"
            sys.stderr.write(line)
            written, n = written + len(line), n + 1
        sys.stderr.write("stderr flood done\n")
        sys.stderr.flush()
        answer(rid, n)
    elif method == "ask":
        asks[params["id"]] = rid
        request = {"jsonrpc": "2.0", "id": params["id"], "method": params["method"]}
        request["params"] = params.get("params", {})
        if params.get("cancel"):
            write(request, cancel(params["id"]))
        else:
            write(request)
    elif method == "send_cancel":
        write(cancel(params["requestId"]))
        answer(rid, "sent")
    elif method == "responses":
        answer(rid, responses)
    elif method == "seen":
        answer(rid, seen)
    elif method == "env":
        answer(rid, dict(os.environ))
    elif method == "cwd":
        answer(rid, os.getcwd())
    elif method == "grandchild":
        sleeper = [sys.executable, "-c", "import time; time.sleep(100)"]
        child = subprocess.Popen(sleeper, stdin=subprocess.DEVNULL)
        answer(rid, child.pid)
    elif method == "die":
        sys.stderr.write(params.get("stderr", ""))
        sys.stderr.flush()
        os._exit(params.get("code", 1))
    elif method == "never":
        pass
    else:
        write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": method}})


def cancel(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": request_id}}


for raw_line in sys.stdin.buffer:
    if raw_line.strip():
        handle(json.loads(raw_line))
