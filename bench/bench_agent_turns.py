"""Benchmark section "agent_turns": a real agent's turn through the bridge vs driven directly.

Issue 25 item 6. The production agent (claude-agent-acp, optionally codex-acp) runs from its
pinned install (scripts/fetch-agents.sh) against the scripted model server
(tests/model_server) with the settings of tests/support/production.py. The same turn is
driven two ways, alternately, on the same model server and script:

- ``direct``: a minimal ACP client — plain asyncio NDJSON JSON-RPC over the agent's stdio
  (initialize with the capabilities the bridge advertises, session/new, session/prompt;
  permission requests answered allow, fs/* from disk);
- ``bridge``: the real acp-lsp server (``python -m acp_lsp``) driven as an LSP editor over
  stdio (initialize with the agent in initializationOptions, acp/newSession, acp/prompt),
  with disk tracking on (the default) and, beside it, ``trackDisk: false``.

Every run is a fresh agent (and server) with a fresh HOME: a short warm-up turn, then the
measured turn in the same session. Timestamps are taken in the client: prompt written, first
agent_message_chunk text read, prompt response read. The model server (a thread of the
runner) stamps each request the agent makes, on the same monotonic clock, so a turn splits
into lead (prompt → first model request), body, and tail (last model request → response).

    ./run bench --only agent_turns                 # the section, 5 rounds (a few minutes)
    BENCH_AGENT_TURNS_AGENTS=claude,codex ./run bench --only agent_turns
    BENCH_AGENT_TURNS_ROUNDS=7 BENCH_AGENT_TURNS_SCENARIOS=stream ./run bench --only agent_turns
    python bench/bench_agent_turns.py run SPEC.json  # one client run (what the section calls)
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

JsonObject = dict[str, Any]
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# What acp-lsp advertises to agents (acp_lsp/backends/acp_start.py CLIENT_CAPABILITIES),
# copied so the direct client asks the agent for exactly the same behaviour.
CLIENT_CAPABILITIES: JsonObject = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
    "auth": {"terminal": True},
    "elicitation": {"form": {}, "url": {}},
}
WARMUP_PROMPT = "Say you are ready."
PROMPT = "Go ahead."
READ_FILE = "notes.txt"
PATHS = ("direct", "bridge", "bridge_nodisk")
LABELS = {
    "direct": "direct (minimal ACP client)",
    "bridge": "through acp-lsp (LSP editor)",
    "bridge_nodisk": "through acp-lsp, trackDisk off",
}
TURN_TIMEOUT_S = 300.0
# Session modes that ask nothing and let the tools run, the same in both paths: Claude's
# default asks nothing for reads; Codex's read-only and auto fail every command where its
# sandbox cannot start (tests/e2e/test_production_turns.py), so it runs in full-access.
MODES = {"codex": "full-access"}
PAUSE_S = 1.0  # before each prompt, in both paths
LINE_LIMIT = 64 * 1024 * 1024  # one NDJSON frame may carry a whole file


def now_ms() -> float:
    """CLOCK_MONOTONIC in ms: the same clock in every process of the run."""
    return time.monotonic_ns() / 1e6


# -- a JSON-RPC peer over a child's stdio, NDJSON (ACP) or Content-Length (LSP) framing ------


class Peer:
    """Requests out with futures, requests in answered by ``answer``, notifications to
    ``on_note`` with the time each frame was read (stamped before any handling)."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        lsp: bool,
        on_note: Callable[[str, Any, float], None],
        answer: Callable[[str, Any], Awaitable[Any]],
    ) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc = proc
        self.lsp = lsp
        self._out = proc.stdin
        self._in = proc.stdout
        self._on_note = on_note
        self._answer = answer
        self._next = 0
        self._pending: dict[int, tuple[asyncio.Future[Any], list[float]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.requests_in: dict[str, int] = {}
        self.last_sent = self.last_answered = 0.0
        self._reader = asyncio.create_task(self._read())

    def _write(self, message: JsonObject) -> float:
        body = json.dumps(message, separators=(",", ":")).encode()
        stamp = now_ms()
        if self.lsp:
            self._out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        else:
            self._out.write(body + b"\n")
        return stamp

    async def request(self, method: str, params: Any, timeout: float | None = 120) -> Any:
        """The result; ``self.last_sent`` / ``self.last_answered`` are the two stamps (ms)."""
        self._next += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        stamps: list[float] = []
        self._pending[self._next] = (future, stamps)
        sent = self._write({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        await self._out.drain()
        result = await asyncio.wait_for(future, timeout)
        self.last_sent, self.last_answered = sent, stamps[0]
        return result

    def notify(self, method: str, params: Any) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def _frame(self) -> bytes | None:
        if not self.lsp:
            line = await self._in.readline()
            return line or None
        length = 0
        while True:
            header = await self._in.readline()
            if not header:
                return None
            if header in (b"\r\n", b"\n"):
                break
            name, _, value = header.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        return await self._in.readexactly(length)

    async def _read(self) -> None:
        while True:
            raw = await self._frame()
            if raw is None:
                break
            stamp = now_ms()
            if not raw.strip():
                continue
            message = json.loads(raw)
            if "method" not in message:
                entry = self._pending.pop(message.get("id"), None)
                if entry is not None and not entry[0].done():
                    entry[1].append(stamp)
                    if "error" in message:
                        entry[0].set_exception(RuntimeError(json.dumps(message["error"])))
                    else:
                        entry[0].set_result(message.get("result"))
            elif "id" in message:
                method = message["method"]
                self.requests_in[method] = self.requests_in.get(method, 0) + 1
                task = asyncio.create_task(self._reply(message))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            else:
                self._on_note(message["method"], message.get("params"), stamp)
        for future, _ in self._pending.values():
            if not future.done():
                future.set_exception(RuntimeError("the peer closed its stdout"))

    async def _reply(self, message: JsonObject) -> None:
        try:
            result = await self._answer(message["method"], message.get("params"))
            reply: JsonObject = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        except Exception as exc:  # the peer gets the error; the run goes on
            reply = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": -32601, "message": str(exc)},
            }
        self._write(reply)
        await self._out.drain()


async def spawn(argv: list[str], env: dict[str, str], cwd: str, log: Path) -> Any:
    """A child in its own process group (killed whole at the end), stderr to ``log``."""
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=log.open("ab"),
        env=env,
        cwd=cwd,
        limit=LINE_LIMIT,
        start_new_session=True,
    )


async def end_process(proc: asyncio.subprocess.Process, grace: float = 10.0) -> None:
    """Close stdin, wait ``grace`` s, then kill the process group (the agent's children)."""
    if proc.stdin is not None and not proc.stdin.is_closing():
        proc.stdin.close()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), grace)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    await proc.wait()


def proc_cpu(pid: int) -> tuple[float, float]:
    """(own user+system s, waited-for children's user+system s) of a live process."""
    with open(f"/proc/{pid}/stat") as fh:
        stat = fh.read()
    fields = stat[stat.rfind(")") + 2 :].split()
    ticks = os.sysconf("SC_CLK_TCK")
    own = (int(fields[11]) + int(fields[12])) / ticks
    children = (int(fields[13]) + int(fields[14])) / ticks
    return own, children


# -- one client run ---------------------------------------------------------------------------


@dataclass
class Turn:
    """What a client saw of one turn (ms on the shared monotonic clock)."""

    sent: float = 0.0
    first_text: float | None = None
    answered: float = 0.0
    chunks: int = 0
    tool_calls: int = 0
    stop: str = ""

    def __post_init__(self) -> None:
        self.text: list[str] = []
        self.tool_ids: set[str] = set()

    def on_text(self, text: str, stamp: float) -> None:
        if not text:
            return
        if self.first_text is None:
            self.first_text = stamp
        self.chunks += 1
        self.text.append(text)

    def figures(self) -> JsonObject:
        joined = "".join(self.text)
        first = self.first_text if self.first_text is not None else float("nan")
        return {
            "sent": self.sent,
            "first_text": self.first_text,
            "first_text_ms": first - self.sent,
            "end_ms": self.answered - self.sent,
            "answered": self.answered,
            "messages_with_text": self.chunks,
            "text_chars": len(joined),
            "text_sha": hashlib.sha256(joined.encode()).hexdigest()[:16],
            "tool_calls": len(self.tool_ids),
            "stop": self.stop,
        }


def read_text(params: JsonObject) -> JsonObject:
    """fs/read_text_file from disk: ``line`` (1-based) and ``limit`` as ACP defines them."""
    text = Path(params["path"]).read_text(encoding="utf-8")
    line, limit = params.get("line"), params.get("limit")
    if line is None and limit is None:
        return {"content": text}
    lines = text.splitlines(keepends=True)
    start = max(int(line or 1) - 1, 0)
    end = len(lines) if limit is None else start + int(limit)
    return {"content": "".join(lines[start:end])}


def allow(params: JsonObject) -> JsonObject:
    """The first allow option of a permission request (else its first option)."""
    options = params.get("options") or []
    pick = next((o for o in options if str(o.get("kind", "")).startswith("allow")), None)
    pick = pick or (options[0] if options else {"optionId": "allow"})
    return {"outcome": {"outcome": "selected", "optionId": pick["optionId"]}}


async def run_direct(spec: JsonObject, log: Path) -> JsonObject:
    from acp_lsp.config import AgentConfig, agent_environment

    config = AgentConfig.model_validate(spec["agent"])
    # exactly the environment the bridge would give the agent (its own function)
    env = agent_environment(config, spec["server_env"])
    turns: list[Turn] = []

    def on_note(method: str, params: Any, stamp: float) -> None:
        if method != "session/update" or not turns:
            return
        update = params.get("update") or {}
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            content = update.get("content") or {}
            if content.get("type") == "text":
                turns[-1].on_text(content.get("text", ""), stamp)
        elif kind in ("tool_call", "tool_call_update") and update.get("toolCallId"):
            turns[-1].tool_ids.add(update["toolCallId"])

    async def answer(method: str, params: Any) -> Any:
        if method == "session/request_permission":
            return allow(params)
        if method == "fs/read_text_file":
            return read_text(params)
        if method == "fs/write_text_file":
            Path(params["path"]).write_text(params["content"], encoding="utf-8")
            return None
        raise RuntimeError(f"not implemented by the bench client: {method}")

    started = now_ms()
    proc = await spawn([config.command or "", *config.args], env, spec["ws"], log)
    peer = Peer(proc, lsp=False, on_note=on_note, answer=answer)
    try:
        await peer.request(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": CLIENT_CAPABILITIES,
                "clientInfo": {"name": "bench-direct", "version": "1"},
            },
        )
        result = await peer.request("session/new", {"cwd": spec["ws"], "mcpServers": []})
        sid = result["sessionId"]
        if spec.get("mode"):
            await peer.request("session/set_mode", {"sessionId": sid, "modeId": spec["mode"]})
        session_ms = now_ms() - started
        for text in spec["prompts"]:
            await asyncio.sleep(spec["pause_s"])  # a user types: the agent's side work settles
            turn = Turn()
            turns.append(turn)
            reply = await peer.request(
                "session/prompt",
                {"sessionId": sid, "prompt": [{"type": "text", "text": text}]},
                timeout=TURN_TIMEOUT_S,
            )
            turn.sent, turn.answered = peer.last_sent, peer.last_answered
            turn.stop = str((reply or {}).get("stopReason"))
    finally:
        await end_process(proc)
    return {
        "session_ms": session_ms,
        "turns": [t.figures() for t in turns],
        "requests_in": peer.requests_in,
    }


async def run_bridge(spec: JsonObject, log: Path, track_disk: bool) -> JsonObject:
    ws = spec["ws"]
    options: JsonObject = {
        "agents": {spec["name"]: spec["agent"]},
        "defaultAgent": spec["name"],
    }
    if not track_disk:
        options["trackDisk"] = False
    turns: list[Turn] = []

    def on_note(method: str, params: Any, stamp: float) -> None:
        if method != "acp/sessionUpdate" or not turns:
            return
        for update in params.get("updates") or []:
            kind = update.get("sessionUpdate")
            if kind == "agent_message_chunk":
                content = update.get("content") or {}
                if content.get("type") == "text":
                    turns[-1].on_text(content.get("text", ""), stamp)
            elif kind == "tool_call":
                turns[-1].tool_ids.add(update["toolCall"]["toolCallId"])

    async def answer(method: str, params: Any) -> Any:
        # what an editor answers at once: allow, shown, applied, no settings
        if method == "acp/requestPermission":
            return allow(params)
        if method == "window/showDocument":
            return {"success": True}
        if method == "workspace/applyEdit":
            return {"applied": True}
        if method == "workspace/configuration":
            return [None for _ in params.get("items") or []]
        return None

    started = now_ms()
    argv = [sys.executable, "-m", "acp_lsp"]
    proc = await spawn(argv, spec["server_env"], ws, log)
    peer = Peer(proc, lsp=True, on_note=on_note, answer=answer)
    cpu: list[tuple[float, float]] = []
    spy: subprocess.Popen[bytes] | None = None
    try:
        uri = Path(ws).as_uri()
        await peer.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": "ws"}],
                "capabilities": spec["capabilities"],
                "initializationOptions": options,
            },
        )
        peer.notify("initialized", {})
        result = await peer.request("acp/newSession", {"cwd": ws}, timeout=180)
        sid = result["sessionId"]
        if spec.get("mode"):
            await peer.request("acp/setMode", {"sessionId": sid, "modeId": spec["mode"]})
        session_ms = now_ms() - started
        for i, text in enumerate(spec["prompts"]):
            if spec.get("profile") and i == len(spec["prompts"]) - 1:
                spy = start_profile(proc.pid, spec["profile"])
            await asyncio.sleep(spec["pause_s"])  # a user types: the agent's side work settles
            turn = Turn()
            turns.append(turn)
            cpu.append(proc_cpu(proc.pid))
            reply = await peer.request(
                "acp/prompt",
                {"sessionId": sid, "prompt": [{"type": "text", "text": text}]},
                timeout=TURN_TIMEOUT_S,
            )
            turn.sent, turn.answered = peer.last_sent, peer.last_answered
            turn.stop = str((reply or {}).get("stopReason"))
            cpu.append(proc_cpu(proc.pid))
        if spy is not None:
            spy.send_signal(signal.SIGINT)  # py-spy writes its output on SIGINT
            spy.wait()
        try:
            await peer.request("shutdown", None, timeout=15)
            peer.notify("exit", None)
        except (TimeoutError, RuntimeError):
            pass
    finally:
        await end_process(proc, grace=15)
    figures = [t.figures() for t in turns]
    for i, fig in enumerate(figures):  # the bridge's CPU over each turn: itself, its git runs
        (own0, kids0), (own1, kids1) = cpu[2 * i], cpu[2 * i + 1]
        fig["bridge_cpu_ms"] = (own1 - own0) * 1000
        fig["children_cpu_ms"] = (kids1 - kids0) * 1000
    return {"session_ms": session_ms, "turns": figures, "requests_in": peer.requests_in}


def start_profile(pid: int, out: str) -> subprocess.Popen[bytes]:
    """py-spy on the server for the measured turn (collapsed stacks for
    bench/profile_summary.py); --nonblocking never pauses it mid-write."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    argv = [spy, "record", "--nonblocking", "-r", "400", "-f", "raw", "-o", out, "-p", str(pid)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def run_client(spec: JsonObject) -> JsonObject:
    log = Path(spec["log"])
    if spec["path"] == "direct":
        result = await run_direct(spec, log)
    else:
        result = await run_bridge(spec, log, track_disk=spec["path"] == "bridge")
    for turn, agent in zip(result["turns"], agent_stamps(Path(spec["stamps"])), strict=False):
        # the path's own share: prompt to the agent, the agent's first text and its
        # response back to the client (the agent's time in between is not the path's)
        turn["agent_turn_ms"] = agent["end"] - agent["prompt"] if "end" in agent else None
        turn["to_agent_ms"] = agent["prompt"] - turn["sent"]
        if "first" in agent and turn["first_text"] is not None:
            turn["first_back_ms"] = turn["first_text"] - agent["first"]
        if "end" in agent:
            turn["end_back_ms"] = turn["answered"] - agent["end"]
            turn["agent_blocked_ms"] = agent.get("blocked")
            turn["agent_cpu_ms"] = agent.get("agent_cpu")
    return {"path": spec["path"], **result}


# -- the section (imported by bench/run.py) ---------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    build: Callable[[str], list[Any]]  # the measured turn's steps, from the workspace root


def _stream_steps(ws: str) -> list[Any]:
    from tests.model_server import Say

    # ~200 KB of prose in 2,000 pieces of ~100 characters (one SSE text_delta each)
    words = " ".join(f"word{i}" for i in range(34_000))
    return [Say(words[:200_000], chunks=2_000)]


def _tools_steps(ws: str) -> list[Any]:
    from tests.model_server import Say, Tool

    path = str(Path(ws) / READ_FILE)
    return [Tool("read", {"path": path}) for _ in range(200)] + [Say("Read it 200 times.")]


SCENARIOS = (
    Scenario("stream", "a long streamed answer (200 KB in 2,000 deltas, no tools)", _stream_steps),
    Scenario("tools", "200 Read tool calls of a small file, then a short answer", _tools_steps),
)
QUICK_SCENARIOS = (
    Scenario("stream", "a streamed answer (20 KB in 200 deltas)", lambda ws: _small_stream()),
    Scenario("tools", "10 Read tool calls, then a short answer", lambda ws: _few_tools(ws)),
)


def _small_stream() -> list[Any]:
    from tests.model_server import Say

    return [Say(" ".join(f"word{i}" for i in range(3_400))[:20_000], chunks=200)]


def _few_tools(ws: str) -> list[Any]:
    from tests.model_server import Say, Tool

    path = str(Path(ws) / READ_FILE)
    return [Tool("read", {"path": path}) for _ in range(10)] + [Say("Read it 10 times.")]


def _installed(name: str) -> str | None:
    """None when production agent ``name`` is installed, else why not."""
    from acp_lsp.presets import PRODUCTION_AGENTS

    agent = next((a for a in PRODUCTION_AGENTS if a.name == name), None)
    if agent is None:
        return f"{name}: no such production agent"
    package = ROOT / ".cache" / "agents" / name / "node_modules" / agent.package / "package.json"
    if not package.is_file():
        return f"{agent.spec} is not installed: run scripts/fetch-agents.sh"
    return None


def _workspace(base: Path) -> Path:
    """A small project: the file the tool scenario reads and a few others beside it."""
    ws = base / "ws"
    ws.mkdir(parents=True)
    (ws / READ_FILE).write_text("".join(f"note {i}: keep it short\n" for i in range(20)))
    (ws / "greet.py").write_text('def greet(name):\n    return f"Hello, {name}!"\n')
    for i in range(10):
        (ws / f"mod{i}.py").write_text(f"VALUE = {i}\n")
    return ws


class _Stamps:
    """Monotonic ms of every request the model server receives and of every text piece it
    streams, stamped in the model server's own thread (the agent's side of the turn)."""

    def __init__(self, state: Any) -> None:
        self.requests: list[tuple[float, str]] = []
        self.pieces: list[float] = []
        record, pieces = state.record, state.pieces

        def stamped(entry: Any) -> Any:
            self.requests.append((now_ms(), entry.kind))
            return record(entry)

        async def stamped_pieces(say: Any) -> Any:
            # only the script's answers: side requests (titles, suggestions) stream too
            ours = any(say is step for turn in state.script.turns for step in turn)
            async for piece in pieces(say):
                if ours:
                    self.pieces.append(now_ms())  # just before the SSE event is written
                yield piece

        state.record, state.pieces = stamped, stamped_pieces

    def split(self, turn: JsonObject) -> None:
        """Add lead / delivery / tail (ms) to a client's turn figures: prompt written → the
        agent's first model request; the turn's first text piece streamed → the client read
        its first text; the last piece (or model request) → the prompt response."""
        start, end = turn["sent"], turn["answered"]
        asked = [t for t, kind in self.requests if kind == "turn" and start <= t <= end]
        if not asked:
            return
        turn["model_requests"] = len(asked)
        turn["lead_ms"] = asked[0] - start
        # the answer is the last model response: its pieces come after the last request
        streamed = [t for t in self.pieces if asked[-1] <= t <= end]
        if streamed and turn.get("first_text") is not None:
            turn["delivery_ms"] = turn["first_text"] - streamed[0]
        turn["tail_ms"] = end - (streamed[-1] if streamed else asked[-1])


def _one_run(
    r: Any, agent: str, path: str, scenario: Scenario, model: Any, base: Path, extra: JsonObject
) -> JsonObject:
    from tests.model_server import Say, Script
    from tests.support import production

    run_dir = Path(tempfile.mkdtemp(prefix=f"{path}-", dir=base))
    ws = _workspace(run_dir)
    home = run_dir / "home"
    home.mkdir()
    model.script = Script(scenario.key, [[Say("Ready.", chunks=2)], scenario.build(str(ws))])
    config = production.agent_config(agent, model, home)
    stamps = run_dir / "agent-stamps.txt"
    # the agent behind the tap in both paths (same command line, same environment)
    tap_args = [str(Path(__file__).resolve()), "tap", str(stamps), "--", config["command"]]
    config["args"] = [*tap_args, *config["args"]]
    config["command"] = r.python
    spec = {
        "path": path,
        "name": agent,
        "agent": config,
        "server_env": production.server_env(home),
        "ws": str(ws),
        "prompts": [WARMUP_PROMPT, PROMPT],
        "mode": MODES.get(agent),
        "pause_s": PAUSE_S,
        "stamps": str(stamps),
        "log": str(r.log_dir / f"agent_turns-{agent}-{scenario.key}-{path}-{run_dir.name}.log"),
        **extra,
    }
    spec_file = run_dir / "spec.json"
    spec_file.write_text(json.dumps(spec))
    result: JsonObject = r.client(
        [r.python, str(Path(__file__).resolve()), "run", str(spec_file)], timeout=900
    )
    unknown = model.unknown_requests()
    if unknown:
        result.setdefault("error", f"the agent called unknown routes: {unknown[0].path}")
    return result


def run(r: Any, section: Any, median: Callable[[list[float]], float], fmt: Any) -> Any:
    """The "agent turns" section: per agent and scenario, direct / bridge / bridge without
    disk tracking alternately (who goes first rotating), medians and spreads."""
    agents = [a for a in os.environ.get("BENCH_AGENT_TURNS_AGENTS", "claude").split(",") if a]
    rounds = 1 if r.p.quick else int(os.environ.get("BENCH_AGENT_TURNS_ROUNDS", "5"))
    scenarios: tuple[Scenario, ...] = QUICK_SCENARIOS if r.p.quick else SCENARIOS
    if only := os.environ.get("BENCH_AGENT_TURNS_SCENARIOS"):  # e.g. "stream"
        scenarios = tuple(s for s in scenarios if s.key in only.split(","))
    sec = section(
        "Agent turns — a real agent through the bridge vs driven directly (issue 25)",
        [
            "agent",
            "turn",
            "path",
            "first text ms",
            "end of turn ms",
            "agent's turn ms (its CPU ms; blocked writing ms)",
            "path: prompt to agent / first text back / response back ms",
            "added to first text ms",
            "added to the turn ms",
            "end-to-end turn ratio",
            "bridge CPU ms (git)",
        ],
        data={"rounds": rounds, "runs": {}},
    )
    missing = {a: why for a in agents if (why := _installed(a)) is not None}
    for agent, why in missing.items():
        sec.notes.append(f"{agent}: not measured — {why}")
    agents = [a for a in agents if a not in missing]
    if not agents:
        sec.rows.append(["–", "–", "agent not installed", *["–"] * 8])
        return sec
    from pygls.protocol import default_converter

    from tests.model_server import ModelServer
    from tests.support.lsp_editor import capabilities

    # a killed agent's open stream makes uvicorn's transport warn on every later write
    logging.getLogger("asyncio").setLevel(logging.ERROR)
    converter = default_converter()  # type: ignore[no-untyped-call]
    caps = converter.unstructure(capabilities("visual_studio_code"))
    base = Path(tempfile.mkdtemp(prefix="bench-agent-turns-"))  # workspaces, HOMEs, specs
    with ModelServer() as model:
        stamps = _Stamps(model.state)
        for agent in agents:
            for scenario in scenarios:
                runs: dict[str, list[JsonObject]] = {p: [] for p in PATHS}
                for rnd in range(rounds):
                    order = PATHS[rnd % len(PATHS) :] + PATHS[: rnd % len(PATHS)]
                    for path in order:
                        model.state.reset()
                        x = _one_run(r, agent, path, scenario, model, base, {"capabilities": caps})
                        if "error" not in x:
                            stamps.split(x["turns"][-1])
                        runs[path].append(x)
                sec.data["runs"][f"{agent}/{scenario.key}"] = runs
                _rows(sec, agent, scenario, runs, median, fmt)
    shutil.rmtree(base, ignore_errors=True)  # the logs stay in the run's log dir
    sec.notes.append(
        f"Medians of {rounds} alternating rounds (direct, bridge, bridge with trackDisk off; "
        "who goes first rotating); min–max in brackets. Each round starts a fresh agent (and "
        "server) with an empty HOME, plays a short warm-up turn, then, 1 s later, the measured "
        "turn in the same session. 'first text' / 'end' = prompt written → first "
        "agent_message_chunk text / prompt response read by the client. The agent runs behind "
        "a stdio tap in both paths (the same command), which stamps on the same clock when "
        "the prompt reaches it and its first text and response leave it: 'agent's turn' is the "
        "time in between (in brackets: the CPU the agent's processes used in it, and how "
        "long the tap's writes of the agent's output waited for the client to read them; "
        "the agent waits too, as Node writes to a full pipe synchronously), 'path' the rest "
        "(client → agent, agent → client). 'added' = "
        "the bridge's path time minus the direct client's (medians); '%' of the direct "
        "turn. The end-to-end ratio (median of per-round ratios) also holds what the agent "
        "itself took, which varies far more than the path between runs on this shared machine. "
        "'bridge CPU' is the server's own CPU over the turn, in brackets that of the processes "
        "it waited for (git snapshots)."
    )
    return sec


def _med(median: Callable[[list[float]], float], turns: list[JsonObject], key: str) -> float:
    return median([t[key] for t in turns if t.get(key) is not None])


def _spread(values: list[float], fmt: Any) -> str:
    return f"{fmt(min(values))}–{fmt(max(values))}" if values else "–"


def _share(turn: JsonObject, back: str) -> float | None:
    """The path's own time in a turn: the prompt to the agent plus ``back`` (the first text or
    the response from the agent to the client)."""
    if turn.get(back) is None:
        return None
    return float(turn["to_agent_ms"] + turn[back])


def _rows(
    sec: Any,
    agent: str,
    scenario: Scenario,
    runs: dict[str, list[JsonObject]],
    median: Callable[[list[float]], float],
    fmt: Any,
) -> None:
    def turns(path: str) -> list[JsonObject | None]:
        return [x["turns"][-1] if "error" not in x else None for x in runs[path]]

    direct = [t for t in turns("direct") if t is not None]
    base_first = median([v for t in direct if (v := _share(t, "first_back_ms")) is not None])
    base_end = median([v for t in direct if (v := _share(t, "end_back_ms")) is not None])
    base_turn = _med(median, direct, "end_ms")
    summary: JsonObject = {}
    for path in PATHS:
        good = [t for t in turns(path) if t is not None]
        firsts = [t["first_text_ms"] for t in good]
        ends = [t["end_ms"] for t in good]
        share_first = median([v for t in good if (v := _share(t, "first_back_ms")) is not None])
        share_end = median([v for t in good if (v := _share(t, "end_back_ms")) is not None])
        pairs = [(t, d) for t, d in zip(turns(path), turns("direct"), strict=False) if t and d]
        ratio = median([t["end_ms"] / d["end_ms"] for t, d in pairs])
        fig = {
            "first_ms": median(firsts),
            "end_ms": median(ends),
            "agent_turn_ms": _med(median, good, "agent_turn_ms"),
            "agent_blocked_ms": _med(median, good, "agent_blocked_ms"),
            "agent_cpu_ms": _med(median, good, "agent_cpu_ms"),
            "to_agent_ms": _med(median, good, "to_agent_ms"),
            "first_back_ms": _med(median, good, "first_back_ms"),
            "end_back_ms": _med(median, good, "end_back_ms"),
            "share_first_ms": share_first,
            "share_end_ms": share_end,
            "added_first_ms": share_first - base_first,
            "added_end_ms": share_end - base_end,
            "added_end_pct": 100 * (share_end - base_end) / base_turn,
            "e2e_first_added_ms": median(
                [t["first_text_ms"] - d["first_text_ms"] for t, d in pairs]
            ),
            "e2e_ratio": ratio,
            "lead_ms": _med(median, good, "lead_ms"),
            "delivery_ms": _med(median, good, "delivery_ms"),
            "tail_ms": _med(median, good, "tail_ms"),
            "cpu_ms": _med(median, good, "bridge_cpu_ms"),
            "git_cpu_ms": _med(median, good, "children_cpu_ms"),
            "ok": len(good),
            "tool_calls": sorted({t["tool_calls"] for t in good}),
            "messages_with_text": _med(median, good, "messages_with_text"),
        }
        summary[path] = fig
        is_direct = path == "direct"
        sec.rows.append(
            [
                agent,
                scenario.key,
                LABELS[path],
                f"{fmt(fig['first_ms'], 1)} ({_spread(firsts, fmt)})",
                f"{fmt(fig['end_ms'])} ({_spread(ends, fmt)})",
                f"{fmt(fig['agent_turn_ms'])} ({fmt(fig['agent_cpu_ms'])}; "
                f"{fmt(fig['agent_blocked_ms'])})",
                f"{fmt(fig['to_agent_ms'], 1)} / {fmt(fig['first_back_ms'], 1)} / "
                f"{fmt(fig['end_back_ms'], 1)}",
                "–" if is_direct else f"{fig['added_first_ms']:+.1f}",
                "–" if is_direct else f"{fig['added_end_ms']:+.1f} ({fig['added_end_pct']:+.2f} %)",
                "–" if is_direct else f"{ratio:.3f}×",
                "–" if is_direct else f"{fmt(fig['cpu_ms'])} ({fmt(fig['git_cpu_ms'])})",
            ]
        )
        for x in runs[path]:
            if "error" in x:
                sec.notes.append(f"{agent} {scenario.key} {path}: {x['error']}")
    sec.data[f"{agent}/{scenario.key}"] = summary
    shas = {t["text_sha"] for p in PATHS for t in turns(p) if t}
    calls = {t["tool_calls"] for p in PATHS for t in turns(p) if t}
    if len(shas) > 1 or len(calls) > 1:
        sec.notes.append(
            f"{agent} {scenario.key}: the paths received different turns "
            f"(text {sorted(shas)}, tool calls {sorted(calls)})"
        )
    bridge, nodisk = summary["bridge"], summary["bridge_nodisk"]
    if not (bridge["ok"] and summary["direct"]["ok"]):
        return
    pct = bridge["added_end_pct"]
    sec.goal(
        f"agent turns, {agent}, {scenario.key}: bridge adds ≤ 5 % to the turn",
        f"{bridge['added_end_ms']:+.1f} ms = {pct:+.2f} % on the path (trackDisk off: "
        f"{nodisk['added_end_pct']:+.2f} %); end to end {bridge['e2e_ratio']:.3f}× "
        f"(off {nodisk['e2e_ratio']:.3f}×), within the noise",
        "≤ 5 %",
        pct <= 5,
    )
    added = bridge["added_first_ms"]
    sec.goal(
        f"agent turns, {agent}, {scenario.key}: bridge adds ≤ 2 ms to first text",
        f"{added:+.1f} ms on the path (trackDisk off: {nodisk['added_first_ms']:+.1f} ms); "
        f"end to end {bridge['e2e_first_added_ms']:+.1f} ms, within the noise",
        "≤ 2 ms",
        added <= 2,
    )


# -- the tap: the agent's own side of each turn ------------------------------------------------


def tree_cpu_ms(root: int) -> float:
    """User + system CPU (ms) of ``root`` and its live descendants, with what they reaped:
    Claude Code's turn runs in a second process under the ACP adapter."""
    ticks = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    cpu: dict[int, float] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rfind(")") + 2 :].split()
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        cpu[pid] = sum(int(f) for f in fields[11:15]) * 1000 / ticks  # utime..cstime
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0.0)
        todo += children.get(pid, [])
    return total


def tap(stamps_path: str, command: list[str]) -> int:
    """Relay stdio to ``command`` (the agent) line by line, stamping in ``stamps_path`` when a
    session/prompt reaches it, when its first agent_message_chunk after that leaves it and
    when the prompt's response leaves it. Both paths run the agent behind this relay, so what
    the agent itself takes is told apart from what the client or the bridge adds."""
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    agent_in, agent_out = child.stdin, child.stdout
    out = open(stamps_path, "a", encoding="utf-8")  # noqa: SIM115 - both relays write it
    lock = threading.Lock()
    prompts: set[Any] = set()
    waiting_text = threading.Event()
    cpu_at_prompt = [0.0]

    def stamp(kind: str, value: float | None = None) -> None:
        with lock:
            out.write(f"{kind} {now_ms() if value is None else value:.3f}\n")
            out.flush()

    def to_agent() -> None:
        for line in sys.stdin.buffer:
            prompt = False
            if b"session/prompt" in line:
                message = json.loads(line)
                if message.get("method") == "session/prompt":
                    stamp("prompt")
                    prompts.add(message.get("id"))
                    waiting_text.set()
                    prompt = True
            agent_in.write(line)
            agent_in.flush()
            if prompt:  # after passing it on: the walk of /proc takes a few ms
                cpu_at_prompt[0] = tree_cpu_ms(child.pid)
        agent_in.close()

    threading.Thread(target=to_agent, daemon=True).start()
    blocked = 0.0  # ms spent writing to the client: a slow reader blocks the relay, and so
    # the agent too (Node writes to a pipe synchronously on Linux once it is full)
    for line in agent_out:
        ended = False
        if waiting_text.is_set() and b"agent_message_chunk" in line and b'"text"' in line:
            waiting_text.clear()
            stamp("first")
        elif prompts and b"stopReason" in line:
            message = json.loads(line)
            if "method" not in message and message.get("id") in prompts:
                prompts.discard(message.get("id"))
                stamp("blocked", blocked)
                stamp("end")
                blocked, ended = 0.0, True
        start = now_ms()
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
        blocked += now_ms() - start
        if ended:
            stamp("agent_cpu", tree_cpu_ms(child.pid) - cpu_at_prompt[0])
    return child.wait()


def agent_stamps(path: Path) -> list[JsonObject]:
    """Per turn, the tap's stamps: {prompt, first?, end} in ms, and ``blocked``: the ms the
    relay spent writing to the client during the turn."""
    turns: list[JsonObject] = []
    if not path.exists():
        return turns
    for line in path.read_text(encoding="utf-8").splitlines():
        kind, value = line.split()
        if kind == "prompt":
            turns.append({"prompt": float(value)})
        elif turns and kind not in turns[-1]:
            turns[-1][kind] = float(value)
    return turns


def main(argv: list[str]) -> int:
    if len(argv) >= 4 and argv[0] == "tap" and argv[2] == "--":
        return tap(argv[1], argv[3:])
    if len(argv) != 2 or argv[0] != "run":
        sys.stderr.write(__doc__ or "")
        return 2
    spec = json.loads(Path(argv[1]).read_text())
    result = asyncio.run(run_client(spec))
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
