"""A raw NDJSON ACP agent for the benchmarks: standard library only, blocking stdio.

It must be far faster than every client, so that the clients are what is measured: the
frames of a flood are built before the turn starts and written in one go (the pipe then
paces the agent to the reader's speed). The prompt's text is the scenario to play:

  flood N SIZE            N agent_message_chunks of SIZE characters (chunk i is ``text(i)``)
  sustain SECONDS SIZE    chunks of SIZE characters, as fast as the reader takes them, for
                          about SECONDS; answers ``_meta.chunks`` with the count
  paced N MS              N chunks, one every MS milliseconds, each ``[seq:monotonic_ns]``
                          stamped just before it is written
  tools N TERM LIMIT      N tool calls (created, 4 progress updates that resend the whole
                          growing content array as v1 agents do, completed), then a terminal
                          that writes TERM bytes with outputByteLimit LIMIT, shown in a tool
                          call, waited for, read and released
  history N               N timeline items: alternately an agent message (4 chunks) and a
                          tool call (created, then completed with a text result)

``--prebuild N SIZE`` builds the first session's ``flood N SIZE`` at startup, so that no
client's timing includes it. ``chunk_text`` is imported by the clients to check that every
byte arrived in order.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

out = sys.stdout.buffer
inp = sys.stdin.buffer
_next_request = 0
_sessions = 0


def chunk_text(i: int, size: int) -> str:
    """Chunk ``i`` of a flood: its number, then filler up to ``size`` characters."""
    head = f"{i:08d}|"
    return (head + "lorem ipsum dolor sit amet " * (size // 27 + 1))[: max(size, len(head))]


TERMINAL_LINE = "terminal output line of text for the benchmark, about eighty bytes long......"


def terminal_output(nbytes: int) -> str:
    """Everything the ``tools`` scenario's terminal command writes."""
    line = TERMINAL_LINE + "\n"
    return (line * (nbytes // len(line) + 1))[:nbytes]


def frame(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def update_frame(session_id: str, update: dict[str, Any]) -> bytes:
    return frame(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": update},
        }
    )


def text_chunk(session_id: str, text: str) -> bytes:
    return update_frame(
        session_id,
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
    )


def write(data: bytes) -> None:
    out.write(data)
    out.flush()


def answer(rid: Any, result: Any) -> None:
    write(frame({"jsonrpc": "2.0", "id": rid, "result": result}))


def call(method: str, params: dict[str, Any]) -> Any:
    """A request to the client; blocks until its answer (other input is ignored meanwhile)."""
    global _next_request
    _next_request += 1
    rid = f"bench-{_next_request}"
    write(frame({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))
    while True:
        line = inp.readline()
        if not line:
            raise SystemExit(0)
        msg = json.loads(line)
        if msg.get("id") == rid and "method" not in msg:
            if "error" in msg:
                raise RuntimeError(f"{method}: {msg['error']}")
            return msg.get("result")


# -- scenarios -----------------------------------------------------------------------------


def chunk_frames(sid: str, start: int, stop: int, size: int) -> bytes:
    """Frames of chunks ``start..stop``: a template with the number spliced in (cheap)."""
    marker = "#" * 8  # no "#" in the filler
    template = text_chunk(sid, marker + chunk_text(0, size)[8:])
    head, tail = template.split(marker.encode())
    return b"".join(b"%s%08d%s" % (head, i, tail) for i in range(start, stop))


_prebuilt: dict[tuple[str, int, int], bytes] = {}


def flood(sid: str, n: int, size: int) -> dict[str, Any]:
    data = _prebuilt.pop((sid, n, size), None)
    write(data if data is not None else chunk_frames(sid, 0, n, size))
    return {}


def sustain(sid: str, seconds: float, size: int) -> dict[str, Any]:
    block = 1000
    deadline = time.monotonic() + seconds
    sent = 0
    while time.monotonic() < deadline:
        write(chunk_frames(sid, sent, sent + block, size))
        sent += block
    return {"_meta": {"chunks": sent}}


def paced(sid: str, n: int, interval_ms: float) -> dict[str, Any]:
    step = interval_ms / 1000
    start = time.monotonic()
    for i in range(n):
        delay = start + i * step - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        write(text_chunk(sid, f"[{i}:{time.monotonic_ns()}]"))
    return {}


def _tool(tool_call_id: str, **fields: Any) -> dict[str, Any]:
    return {"toolCallId": tool_call_id, **fields}


def _output_item(i: int, k: int) -> dict[str, Any]:
    line = f"tool {i} output line {k}: " + "x" * 160 + "\n"
    return {"type": "content", "content": {"type": "text", "text": line}}


def tools(sid: str, cwd: str, n: int, term_bytes: int, limit: int) -> dict[str, Any]:
    for i in range(n):
        tid = f"call-{i}"
        frames = [
            update_frame(
                sid,
                {
                    "sessionUpdate": "tool_call",
                    **_tool(
                        tid,
                        title=f"Run check {i}",
                        kind="execute",
                        status="pending",
                        rawInput={"command": f"check --item {i}"},
                    ),
                },
            )
        ]
        content: list[dict[str, Any]] = []
        for k in range(4):
            content.append(_output_item(i, k))
            frames.append(
                update_frame(
                    sid,
                    {
                        "sessionUpdate": "tool_call_update",
                        **_tool(tid, status="in_progress", content=list(content)),
                    },
                )
            )
        frames.append(
            update_frame(
                sid, {"sessionUpdate": "tool_call_update", **_tool(tid, status="completed")}
            )
        )
        write(b"".join(frames))
    script = f"yes '{TERMINAL_LINE}' | head -c {term_bytes}"
    created = call(
        "terminal/create",
        {
            "sessionId": sid,
            "command": "sh",
            "args": ["-c", script],
            "cwd": cwd,
            "outputByteLimit": limit,
        },
    )
    term = created["terminalId"]
    write(
        update_frame(
            sid,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "call-terminal",
                "title": "Build log",
                "kind": "execute",
                "status": "in_progress",
                "content": [{"type": "terminal", "terminalId": term}],
            },
        )
    )
    status = call("terminal/wait_for_exit", {"sessionId": sid, "terminalId": term})
    output = call("terminal/output", {"sessionId": sid, "terminalId": term})
    call("terminal/release", {"sessionId": sid, "terminalId": term})
    write(
        update_frame(
            sid,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call-terminal",
                "status": "completed",
            },
        )
    )
    kept = len(output.get("output", "").encode())
    return {"_meta": {"exit": status, "terminalKept": kept, "truncated": output.get("truncated")}}


def history(sid: str, n: int) -> dict[str, Any]:
    frames: list[bytes] = []
    for i in range(n):
        if i % 2 == 0:
            for k in range(4):
                text = f"Message {i}, part {k}: the agent explains what it will do next. "
                frames.append(text_chunk(sid, text))
        else:
            tid = f"hist-{i}"
            frames.append(
                update_frame(
                    sid,
                    {
                        "sessionUpdate": "tool_call",
                        "toolCallId": tid,
                        "title": f"Read src/module_{i}.py",
                        "kind": "read",
                        "status": "pending",
                        "rawInput": {"path": f"src/module_{i}.py"},
                    },
                )
            )
            frames.append(
                update_frame(
                    sid,
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": tid,
                        "status": "completed",
                        "content": [_output_item(i, 0)],
                    },
                )
            )
        if len(frames) >= 512:
            write(b"".join(frames))
            frames = []
    write(b"".join(frames))
    return {}


def prompt(params: dict[str, Any], cwd: str) -> dict[str, Any]:
    sid = params["sessionId"]
    blocks = params.get("prompt") or []
    text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict))
    words = text.split()
    kind, args = (words[0], words[1:]) if words else ("", [])
    meta: dict[str, Any] = {}
    if kind == "flood":
        meta = flood(sid, int(args[0]), int(args[1]))
    elif kind == "sustain":
        meta = sustain(sid, float(args[0]), int(args[1]))
    elif kind == "paced":
        meta = paced(sid, int(args[0]), float(args[1]))
    elif kind == "tools":
        meta = tools(sid, cwd, int(args[0]), int(args[1]), int(args[2]))
    elif kind == "history":
        meta = history(sid, int(args[0]))
    else:
        write(text_chunk(sid, f"unknown scenario {text!r}"))
    return {"stopReason": "end_turn", **meta}


def main() -> None:
    global _sessions
    if len(sys.argv) == 4 and sys.argv[1] == "--prebuild":
        # Build the first session's flood before any client is waiting for it.
        n, size = int(sys.argv[2]), int(sys.argv[3])
        _prebuilt["bench-1", n, size] = chunk_frames("bench-1", 0, n, size)
    cwds: dict[str, str] = {}
    while True:
        line = inp.readline()
        if not line:
            return
        msg = json.loads(line)
        method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if method is None or "id" not in msg:
            continue  # responses we no longer wait for, session/cancel, …
        if method == "initialize":
            answer(
                rid,
                {
                    "protocolVersion": 1,
                    "agentCapabilities": {"loadSession": False},
                    "authMethods": [],
                    "agentInfo": {"name": "bench-flood", "version": "1"},
                },
            )
        elif method == "session/new":
            _sessions += 1
            sid = f"bench-{_sessions}"
            cwds[sid] = params.get("cwd", ".")
            answer(rid, {"sessionId": sid})
        elif method == "session/prompt":
            answer(rid, prompt(params, cwds.get(params.get("sessionId", ""), ".")))
        else:
            write(
                frame(
                    {
                        "jsonrpc": "2.0",
                        "id": rid,
                        "error": {"code": -32601, "message": f"method not found: {method}"},
                    }
                )
            )


if __name__ == "__main__":
    main()
