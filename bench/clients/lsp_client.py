"""Client (c): an LSP editor client of the real acp-lsp server (``python -m acp_lsp``).

pygls's ``LanguageClient`` with ``AcpClientProtocol`` (acp/* params stay plain dicts), the
flood agent configured through initializationOptions. It counts what reaches the editor:
the text of ``acp/sessionUpdate`` chunks, notifications, and the exact bytes read from the
server's stdout.

Set BENCH_PROFILE=FILE to record the server with py-spy while it runs (collapsed stacks in
FILE; summarise them with bench/profile_summary.py).

    lsp_client.py flood N SIZE | sustain SECONDS SIZE | paced N MS [FLUSH_MS]
                  | tools N TERM_BYTES LIMIT | memory SESSIONS ITEMS | demo-session
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from common import ROOT, agent_argv, digest, emit, percentile, proc_status
from flood_agent import terminal_output
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.protocol import default_converter

from acp_lsp.lsp_protocol import AcpClientProtocol

JsonObject = dict[str, Any]
_STAMP = re.compile(r"\[(\d+):(\d+)\]")


class BenchEditor(LanguageClient):
    def __init__(self) -> None:
        super().__init__(
            "acp-lsp-bench",
            "1",
            protocol_cls=AcpClientProtocol,
            converter_factory=default_converter,
        )
        self.parts: list[str] = []
        self.t_last = 0.0
        self.notifications = 0
        self.update_bytes = 0  # bytes of acp/sessionUpdate messages (headers included)
        self.bytes_in = 0  # every byte read from the server
        self.stamps: list[tuple[int, float]] = []  # (seq, latency ms) of paced chunks
        self.paced = False
        self.note_times: list[float] = []
        self.tool_sent = 0  # bytes of tool-call content sent (content + contentAppend)
        self.tool_states: dict[str, JsonObject] = {}  # editor-side merge of tool calls
        self.terminal_sent = 0
        self.terminal_copy: dict[str, str] = {}
        self.terminal_limit: int | None = None
        self._last_size = 0
        self.profiler: subprocess.Popen[bytes] | None = None

        @self.feature("acp/sessionUpdate")
        def on_update(client: BenchEditor, params: JsonObject) -> None:
            client.on_update(params)

        @self.feature("acp/terminalOutput")
        def on_terminal(client: BenchEditor, params: JsonObject) -> None:
            client.on_terminal(params)

        for method in ("acp/sessionStatus", types.WINDOW_LOG_MESSAGE, types.WINDOW_SHOW_MESSAGE):
            self.feature(method)(lambda *_args: None)

    def on_update(self, params: JsonObject) -> None:
        self.notifications += 1
        self.update_bytes += self._last_size
        now = time.perf_counter()
        self.note_times.append(now)
        now_ns = time.monotonic_ns()
        for update in params["updates"]:
            kind = update.get("sessionUpdate")
            if kind == "agent_message_chunk":
                text = update["content"]["text"]
                self.parts.append(text)
                self.t_last = now
                if self.paced:
                    for seq, sent in _STAMP.findall(text):
                        self.stamps.append((int(seq), (now_ns - int(sent)) / 1e6))
            elif kind == "tool_call":
                self.on_tool_call(update)

    def on_terminal(self, params: JsonObject) -> None:
        """Apply acp/terminalOutput as an editor does: reset or append, then cap."""
        data = params.get("data", "")
        self.terminal_sent += len(data.encode())
        tid = params["terminalId"]
        copy = data if params.get("reset") else self.terminal_copy.get(tid, "") + data
        raw = copy.encode()
        if self.terminal_limit is not None and len(raw) > self.terminal_limit:
            raw = raw[len(raw) - self.terminal_limit :]
            while raw and raw[0] & 0xC0 == 0x80:  # start on a character boundary
                raw = raw[1:]
            copy = raw.decode()
        self.terminal_copy[tid] = copy

    def on_tool_call(self, update: JsonObject) -> None:
        call = update["toolCall"]
        tid = call["toolCallId"]
        state = self.tool_states.setdefault(tid, {"content": []})
        if "contentAppend" in update:
            items = update["contentAppend"]
            state["content"] = [*state["content"], *items]
        else:
            items = call.get("content", [])
            state["content"] = list(items)
        self.tool_sent += len(json.dumps(items))

    def count_bytes(self, reader: asyncio.StreamReader) -> None:
        """Wrap the reader pygls reads the server with, to count exact bytes."""
        readline, readexactly = reader.readline, reader.readexactly

        async def counted_readline() -> bytes:
            line = await readline()
            self.bytes_in += len(line)
            return line

        async def counted_readexactly(n: int) -> bytes:
            body = await readexactly(n)
            self.bytes_in += n
            self._last_size = n
            return body

        reader.readline = counted_readline  # type: ignore[method-assign]
        reader.readexactly = counted_readexactly  # type: ignore[method-assign]


async def request(editor: BenchEditor, method: str, params: JsonObject) -> Any:
    return await editor.protocol.send_request_async(method, params)


async def start(workspace: Path, init_options: JsonObject) -> tuple[BenchEditor, int, float]:
    editor = BenchEditor()
    env = {**os.environ, "XDG_CONFIG_HOME": str(workspace / ".xdg"), "ACP_DEMO_DELAY": "0"}
    env.setdefault("ACP_LSP_DATA_DIR", str(workspace / ".data"))  # the history of this run
    # BENCH_SERVER_ROOT: run the acp_lsp package found there instead (a before/after run)
    server_root = os.environ.get("BENCH_SERVER_ROOT") or str(ROOT)
    await editor.start_io(sys.executable, "-m", "acp_lsp", env=env, cwd=server_root)
    server = editor._server
    assert server is not None and server.stdout is not None
    profile = os.environ.get("BENCH_PROFILE")  # collapsed stacks of the server, via py-spy
    if profile:
        spy = str(Path(sys.executable).with_name("py-spy"))
        argv = [spy, "record", "--nonblocking", "-r", "400", "-f", "raw", "-o", profile]
        argv += ["-p", str(server.pid)]  # nonblocking: never pauses the server mid-write
        editor.profiler = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    editor.count_bytes(server.stdout)
    t0 = time.perf_counter()
    await editor.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(experimental={"acp": {}}),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            initialization_options=init_options,
        )
    )
    init_s = time.perf_counter() - t0
    editor.initialized(types.InitializedParams())
    return editor, server.pid, init_s


async def stop(editor: BenchEditor) -> None:
    if editor.profiler is not None:
        editor.profiler.send_signal(signal.SIGINT)  # py-spy writes its output on SIGINT
        editor.profiler.wait()
    try:
        await asyncio.wait_for(editor.shutdown_async(None), 10)
        editor.exit(None)
    finally:
        await editor.stop()


def flood_options(prebuild: tuple[int, int] | None, flush_ms: int | None = None) -> JsonObject:
    argv = agent_argv(prebuild)
    options: JsonObject = {
        "agents": {"flood": {"command": argv[0], "args": argv[1:]}},
        "defaultAgent": "flood",
        "followAlong": False,
    }
    if flush_ms is not None:
        options["flushMs"] = flush_ms
    if rate := os.environ.get("BENCH_MAX_RATE"):  # the notification cap, other than 100/s
        options["maxNotificationsPerSecond"] = int(rate)
    if os.environ.get("BENCH_HISTORY") == "off":  # history on (the default) vs off
        options["history"] = {"enabled": False}
    return options


async def streaming(workspace: Path, scenario: list[str]) -> JsonObject:
    kind = scenario[0]
    prebuild = (int(scenario[1]), int(scenario[2])) if kind == "flood" else None
    flush_ms = int(scenario[3]) if kind == "paced" and len(scenario) > 3 else None
    editor, pid, _ = await start(workspace, flood_options(prebuild, flush_ms))
    try:
        snap = await request(editor, "acp/newSession", {})
        editor.paced = kind == "paced"
        editor.notifications = editor.update_bytes = 0
        editor.note_times.clear()
        prompt = " ".join(scenario[:3])
        before = proc_status(pid)
        t0 = time.perf_counter()
        await request(editor, "acp/prompt", {"sessionId": snap["sessionId"], "prompt": prompt})
        after = proc_status(pid)
    finally:
        await stop(editor)
    text = "".join(editor.parts)
    seconds = editor.t_last - t0
    out: JsonObject = {
        "client": "acp-lsp",
        "frames": len(editor.parts),
        "seconds": seconds,
        "notifications": editor.notifications,
        "update_bytes": editor.update_bytes,
        "bridge_cpu_s": after["cpu_s"] - before["cpu_s"],
    }
    if kind == "paced":
        seqs = [seq for seq, _ in editor.stamps]
        out["in_order"] = seqs == list(range(len(seqs)))
        latencies = [ms for _, ms in editor.stamps]
        out["p50_ms"] = percentile(latencies, 50)
        out["first_ms"] = min(editor.stamps)[1] if editor.stamps else float("nan")
        out["p99_ms"] = percentile(latencies, 99)
        out["stamps"] = len(seqs)
    else:
        out["chars"] = len(text)
        out["sha256"] = digest(text)
        out["max_per_s"] = max_in_window(editor.note_times, 1.0)
    return out


def max_in_window(times: list[float], window: float) -> int:
    """The most notifications in any ``window`` seconds."""
    best, lo = 0, 0
    for hi, t in enumerate(times):
        while t - times[lo] > window:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


async def tools(workspace: Path, scenario: list[str]) -> JsonObject:
    editor, pid, _ = await start(workspace, flood_options(None))
    term_bytes, editor.terminal_limit = int(scenario[2]), int(scenario[3])
    try:
        snap = await request(editor, "acp/newSession", {})
        before = proc_status(pid)
        bytes_before = editor.bytes_in
        t0 = time.perf_counter()
        await request(
            editor, "acp/prompt", {"sessionId": snap["sessionId"], "prompt": " ".join(scenario)}
        )
        seconds = time.perf_counter() - t0
        after = proc_status(pid)
        bytes_turn = editor.bytes_in - bytes_before
        final = await request(editor, "acp/getSession", {"sessionId": snap["sessionId"]})
    finally:
        await stop(editor)
    kept_tool = sum(len(json.dumps(c.get("content", []))) for c in final["toolCalls"])
    merged_ok = all(
        editor.tool_states.get(c["toolCallId"], {}).get("content") == c.get("content", [])
        for c in final["toolCalls"]
    )
    # The terminal is released by the end of the turn: what it kept is the tail of its output.
    kept = terminal_output(term_bytes)[-editor.terminal_limit :]
    kept_term = len(kept.encode())
    copies_ok = list(editor.terminal_copy.values()) == [kept]
    return {
        "client": "acp-lsp",
        "seconds": seconds,
        "bridge_cpu_s": after["cpu_s"] - before["cpu_s"],
        "bridge_peak_rss_mb": after["peak_rss_mb"],
        "bytes_to_editor": bytes_turn,
        "tool_calls": len(final["toolCalls"]),
        "tool_content_sent": editor.tool_sent,
        "tool_content_kept": kept_tool,
        "tool_merge_ok": merged_ok,
        "terminal_sent": editor.terminal_sent,
        "terminal_kept": kept_term,
        "terminal_copy_ok": copies_ok,
    }


async def memory(workspace: Path, scenario: list[str]) -> JsonObject:
    sessions, items = int(scenario[1]), int(scenario[2])
    editor, pid, _ = await start(workspace, flood_options(None))
    try:
        base = proc_status(pid)
        for _ in range(sessions):
            snap = await request(editor, "acp/newSession", {})
            await request(
                editor, "acp/prompt", {"sessionId": snap["sessionId"], "prompt": f"history {items}"}
            )
        await asyncio.sleep(0.1)  # let the last batch go out
        after = proc_status(pid)
        last = await request(editor, "acp/getSession", {"sessionId": snap["sessionId"]})
    finally:
        await stop(editor)
    return {
        "client": "acp-lsp",
        "sessions": sessions,
        "items": len(last["timeline"]),
        "base_rss_mb": base["rss_mb"],
        "rss_mb": after["rss_mb"],
        "peak_rss_mb": after["peak_rss_mb"],
    }


async def demo_session(workspace: Path, scenario: list[str]) -> JsonObject:
    editor, _pid, init_s = await start(workspace, {})
    try:
        t0 = time.perf_counter()
        await request(editor, "acp/newSession", {"agent": "demo"})
        new_s = time.perf_counter() - t0
    finally:
        await stop(editor)
    return {"client": "acp-lsp", "initialize_s": init_s, "new_session_s": new_s}


SCENARIOS: dict[str, Callable[[Path, list[str]], Awaitable[JsonObject]]] = {
    "flood": streaming,
    "sustain": streaming,
    "paced": streaming,
    "tools": tools,
    "memory": memory,
    "demo-session": demo_session,
}


def main() -> None:
    scenario = sys.argv[1:]
    with tempfile.TemporaryDirectory(prefix="acp-lsp-bench-") as tmp:
        emit(asyncio.run(SCENARIOS[scenario[0]](Path(tmp), scenario)))


if __name__ == "__main__":
    main()
