"""The soak with a real agent: concurrent sessions of one production agent through the real
server, round after round of long turns, and what must hold all along.

Each session works in its own folder under one workspace, with its files open in the editor
and an unsaved line of the user's in some of them; the scripted model (tests/model_server/
soak.py) makes the agent read, edit and write those files on disk. After every round (each
session one turn, all at once) and at the end this checks, and counts as ``problems``:

- every turn ended ``end_turn``; each session's answers are whole and in order; its tool
  calls are the model's, once each, in the model's order, each completed;
- ``seq`` rose by one per notification of each session; the editor's model equals
  ``acp/getSession`` (view and ``seq``) once the sessions are idle;
- every file on disk is what the model asked for, and every open buffer equals the disk with
  the user's unsaved line kept;
- the bridge's children settle to the agent alone (no git run left over), no zombie;
- after ``shutdown``/``exit`` no process of the run is left.

Figures go in :class:`SoakResult`. Used by tests/e2e/test_production_soak.py (1 minute) and
bench/bench_soak.py (10 minutes).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from acp_lsp import protocol as p
from tests.model_server.script import Tool
from tests.model_server.soak import SoakPlan, SoakServer, answer, prompt
from tests.support.editor_model import view_of
from tests.support.lsp_editor import TestEditor
from tests.support.production import processes_of, start_agent, texts

JsonObject = dict[str, Any]
USER_LINE = "# an unsaved note of the user's\n"
DIRTY = ("mod0.py", "mod1.py")  # files the user typed in; the others stay clean
TURN_TIMEOUT = 900.0  # a turn on a loaded 2-core machine: generous, never asserted on
SETTLE_S = 30.0


@dataclass
class Sample:  # the bridge process at one moment
    at_s: float
    rss_mb: float
    fds: int
    children: list[str]
    agent_children: int
    agent_rss_mb: float
    snapshots_kb: float  # acp/getSession of every session, as JSON: what the bridge must hold


@dataclass
class SoakResult:
    sessions: int
    seconds: float = 0.0
    rounds: int = 0
    turns: int = 0
    tool_calls: int = 0
    disk_calls: int = 0  # "Files changed on disk" calls the bridge added
    notifications: int = 0
    updates: int = 0
    documents_synced: int = 0
    divergences: int = 0
    zombies: int = 0
    leftovers: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    turn_s: list[float] = field(default_factory=list)
    load_avg: list[float] = field(default_factory=list)
    closed_rss_mb: float = 0.0  # once every session is closed (acp/closeSession)
    reuse_rss_mb: list[float] = field(default_factory=list)  # after each round of new ones

    def as_json(self) -> JsonObject:
        return asdict(self)


def _status(pid: int) -> dict[str, str]:
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return {}  # gone meanwhile
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}


def _rss_mb(pid: int) -> float:
    return int(_status(pid).get("VmRSS", "0 kB").split()[0]) / 1024


def _children() -> dict[int, list[int]]:
    """ppid → pids, over every live process."""
    out: dict[int, list[int]] = {}
    for pid in (int(e) for e in os.listdir("/proc") if e.isdigit()):
        if (ppid := _status(pid).get("PPid")) is not None:
            out.setdefault(int(ppid), []).append(pid)
    return out


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


def _is_git(cmdline: str) -> bool:
    return os.path.basename(cmdline.split(" ")[0]) == "git"


def _descendants(pid: int, tree: dict[int, list[int]]) -> list[int]:
    out, todo = [], list(tree.get(pid, []))
    while todo:
        child = todo.pop()
        out.append(child)
        todo += tree.get(child, [])
    return out


def _same_call(call: JsonObject, tool: Tool) -> bool:
    """Claude's tool call is the model's: its rawInput is the model's input."""
    raw, a = call.get("rawInput") or {}, tool.args
    if raw.get("file_path") != a["path"]:
        return False
    if tool.action == "edit":
        return (raw.get("old_string"), raw.get("new_string")) == (a["old"], a["new"])
    if tool.action == "write":
        return bool(raw.get("content") == a["content"])
    return call.get("kind") == "read"


class Soak:
    """One run: ``sessions`` sessions of ``agent``, turns of ``tool_calls`` calls, rounds until
    ``seconds`` have passed (at least ``min_rounds``)."""

    def __init__(
        self,
        base: Path,
        sessions: int,
        seconds: float,
        tool_calls: int = 50,
        agent: str = "claude",
        max_turns: int = 100,
        min_rounds: int = 1,
        mode: str | None = "acceptEdits",
        reuse_rounds: int = 0,
    ) -> None:
        self.base = base
        self.root = base / "ws"
        self.seconds = seconds
        self.agent = agent
        self.min_rounds = min_rounds
        self.mode = mode
        self.names = [f"s{i}" for i in range(sessions)]
        # then, with reuse_rounds: close them all and run as many new ones, to see whether
        # the memory the closed sessions held is used again (growth was what they held)
        self.reuse_rounds = reuse_rounds
        self.reuse_names = [f"r{i}" for i in range(sessions)] if reuse_rounds else []
        self.plans = {
            n: SoakPlan(self.root / n, n, tool_calls=tool_calls)
            for n in self.names + self.reuse_names
        }
        self.max_turns = max_turns
        self.result = SoakResult(sessions=sessions)
        self.live, self.sids, self.turns_done = list[str](), dict[str, str](), 0
        self.bridge = 0
        self.agent_pid = 0
        self.started = 0.0
        self.snapshot_bytes = 0

    def problem(self, text: str) -> None:
        if len(self.result.problems) < 50:  # the first ones tell; a flood would not
            self.result.problems.append(text)

    async def run(self) -> SoakResult:
        for plan in self.plans.values():
            plan.write_initial()
        scripts = {n: plan.script(self.max_turns) for n, plan in self.plans.items()}
        self.result.load_avg = list(os.getloadavg())
        with SoakServer(scripts) as model:
            editor = await start_agent(self.base, self.root, self.agent, model)
            assert editor._server is not None
            self.bridge = editor._server.pid
            try:
                await self._start(editor, self.names)
                while self.result.rounds < self.min_rounds or (
                    time.monotonic() - self.started < self.seconds
                ):
                    await self._round(editor)
                    self.result.samples.append(self.sample())
                    if self.turns_done >= self.max_turns:
                        break
                self.result.seconds = time.monotonic() - self.started
                await self._final(editor)
                if self.reuse_names:
                    await self._start(editor, self.reuse_names)
                    for _ in range(self.reuse_rounds):
                        await self._round(editor)
                        self.result.reuse_rss_mb.append(self.sample().rss_mb)
                    await self._final(editor)
            finally:
                await self._end(editor)
            unknown = model.unknown_requests()
            if unknown:
                self.problem(f"the agent called routes the model does not serve: {unknown[0].path}")
        self.result.load_avg += list(os.getloadavg())
        return self.result

    async def _start(self, editor: TestEditor, names: list[str]) -> None:
        """Sessions ``names`` open, their files open in the editor; the first sample."""
        self.live, self.sids, self.turns_done = names, {}, 0
        await self._sessions(editor)
        await self.check_models(editor)
        await self.settle()  # the first snapshots of the folders are git runs too
        if not self.started:
            self.started = time.monotonic()
            self.result.samples.append(self.sample())

    async def _sessions(self, editor: TestEditor) -> None:
        for name in self.live:
            snapshot = await editor.new_session(cwd=str(self.root / name))
            self.sids[name] = snapshot["sessionId"]
            if self.mode is not None:
                await editor.acp(
                    p.ACP_SET_MODE, {"sessionId": self.sids[name], "modeId": self.mode}
                )
            for file in self.plans[name].initial():
                path = self.root / name / file
                editor.open(path)
                if file in DIRTY:
                    editor.type_text(path, USER_LINE + path.read_text(encoding="utf-8"))

    async def _turn(self, editor: TestEditor, name: str, turn: int) -> None:
        started = time.monotonic()
        try:
            result = await editor.prompt(self.sids[name], prompt(name, turn), timeout=TURN_TIMEOUT)
        except Exception as exc:  # counted, and the run goes on
            self.problem(f"{name} turn {turn}: {type(exc).__name__}: {exc}")
            return
        self.result.turn_s.append(time.monotonic() - started)
        if result.get("stopReason") != "end_turn":
            self.problem(f"{name} turn {turn}: stopReason {result.get('stopReason')}")

    async def _round(self, editor: TestEditor) -> None:
        turn = self.turns_done + 1
        await asyncio.gather(*(self._turn(editor, name, turn) for name in self.live))
        self.turns_done = turn
        self.result.rounds += 1
        self.result.turns += len(self.live)
        self.check_files(editor)
        await self.check_models(editor)
        await self.settle()

    # -- checks ----------------------------------------------------------------------------

    def check_files(self, editor: TestEditor) -> None:
        """Disk = what the model asked for; each buffer = disk (+ the user's line)."""
        for name in self.live:
            want = self.plans[name].files_after(self.turns_done)
            for file, text in want.items():
                path = self.root / name / file
                disk = path.read_text(encoding="utf-8")
                if disk != text:
                    self.problem(f"{name}/{file}: disk is not what the model wrote")
                buffer = editor.doc(path).text
                expected = (USER_LINE if file in DIRTY else "") + disk
                if buffer != expected:
                    self.result.divergences += 1
                    self.problem(f"{name}/{file} after turn {self.turns_done}: buffer != disk")

    async def check_models(self, editor: TestEditor) -> None:
        """Each idle session's model in the editor = acp/getSession (view and seq)."""
        self.snapshot_bytes = 0
        for name, sid in self.sids.items():
            snapshot = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
            self.snapshot_bytes += len(json.dumps(snapshot))
            model = editor.sessions[sid]
            if model.seq != snapshot["seq"] or model.view() != view_of(snapshot):
                self.problem(
                    f"{name} after turn {self.turns_done}: the editor's model differs from "
                    f"acp/getSession (seq {model.seq} vs {snapshot['seq']})"
                )

    async def settle(self) -> None:
        """Wait for the bridge's children to be the agent alone; count zombies."""
        deadline = time.monotonic() + SETTLE_S
        while True:
            tree = _children()
            self._find_agent(tree)
            others = [k for k in tree.get(self.bridge, []) if k != self.agent_pid]
            zombies = [
                d
                for d in _descendants(self.bridge, tree)
                if _status(d).get("State", "").startswith("Z")
            ]
            if not others and not zombies:
                return
            if time.monotonic() > deadline:
                self.result.zombies += len(zombies)
                left = [f"{k}: {_cmdline(k)[:120]}" for k in others]
                self.problem(f"after turn {self.turns_done}: children {left}, zombies {zombies}")
                return
            await asyncio.sleep(0.2)

    def _find_agent(self, tree: dict[int, list[int]]) -> None:
        """The agent: the bridge's child that is not one of its git runs."""
        if not self.agent_pid:
            kids = [k for k in tree.get(self.bridge, []) if not _is_git(_cmdline(k))]
            self.agent_pid = kids[0] if len(kids) == 1 else 0

    def sample(self) -> Sample:
        tree = _children()
        self._find_agent(tree)
        try:
            fds = len(os.listdir(f"/proc/{self.bridge}/fd"))
        except OSError:
            fds = -1
        agent_kids = _descendants(self.agent_pid, tree) if self.agent_pid else []
        return Sample(
            at_s=round(time.monotonic() - self.started, 1),
            rss_mb=round(_rss_mb(self.bridge), 1),
            fds=fds,
            children=[_cmdline(k)[:80] for k in tree.get(self.bridge, [])],
            agent_children=len(agent_kids),
            agent_rss_mb=round(sum(map(_rss_mb, [self.agent_pid, *agent_kids])), 1)
            if self.agent_pid
            else 0.0,
            snapshots_kb=round(self.snapshot_bytes / 1024, 1),
        )

    async def _final(self, editor: TestEditor) -> None:
        """Per session: answers, tool calls, seq, the model against acp/getSession."""
        r = self.result
        r.documents_synced = sum(1 for m, _ in editor.notifications if m == p.ACP_DOCUMENTS_SYNCED)
        for name, sid in self.sids.items():
            answers = [answer(name, t + 1) for t in range(self.turns_done)]
            got = texts(editor, sid)
            if got != answers:
                self.problem(f"{name}: answers differ: {got[:3]!r}, asked {answers[:2]!r}")
            self.check_tools(editor, name, sid)
            seqs = [
                params["seq"]
                for method, params in editor.notifications
                if method == p.ACP_SESSION_UPDATE and params["sessionId"] == sid
            ]
            r.notifications += len(seqs)
            r.updates += sum(
                len(params["updates"])
                for method, params in editor.notifications
                if method == p.ACP_SESSION_UPDATE and params["sessionId"] == sid
            )
            gaps = [(a, b) for a, b in itertools.pairwise(seqs) if b != a + 1]
            if gaps:
                self.problem(f"{name}: seq not contiguous, e.g. {gaps[:3]}")
        await self.check_models(editor)
        for sid in self.sids.values():  # what the sessions held can go
            await editor.acp(p.ACP_CLOSE_SESSION, {"sessionId": sid})
        await asyncio.sleep(1)
        r.closed_rss_mb = r.closed_rss_mb or round(_rss_mb(self.bridge), 1)
        if editor.schema_errors:
            self.problem(f"schema errors: {editor.schema_errors[:3]}")

    def check_tools(self, editor: TestEditor, name: str, sid: str) -> None:
        """The session's tool calls, in the editor's order, are the model's, once each."""
        model = editor.sessions[sid]
        calls = [model.tool_calls[e["toolCall"]] for e in model.timeline if "toolCall" in e]
        ours = [c for c in calls if not c["toolCallId"].startswith("acp-lsp-disk-")]
        self.result.disk_calls += len(calls) - len(ours)
        self.result.tool_calls += len(ours)
        want = [t for turn in range(self.turns_done) for t in self.plans[name].tools(turn)]
        if len(ours) != len(want):
            self.problem(f"{name}: {len(ours)} tool calls shown, the model made {len(want)}")
        for i, (call, tool) in enumerate(zip(ours, want, strict=False)):
            if not _same_call(call, tool) or call.get("status") != "completed":
                self.problem(
                    f"{name}: tool call {i} is {call.get('title')!r} {call.get('status')}, "
                    f"the model's was {tool.action} {tool.args['path']}"
                )
                break

    async def _end(self, editor: TestEditor) -> None:
        """shutdown/exit; then no process of this run may be left."""
        home = self.base / "home"
        try:
            await asyncio.wait_for(editor.shutdown_session(), 60)
        except Exception as exc:
            self.problem(f"shutdown: {type(exc).__name__}: {exc}")
        deadline = time.monotonic() + 30
        while processes_of(home) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        self.result.leftovers = processes_of(home)
        if self.result.leftovers:
            self.problem(f"left behind: {self.result.leftovers[:3]}")
