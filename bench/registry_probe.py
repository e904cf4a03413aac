"""Every npx / uvx agent of the ACP Registry, probed through the real acp-lsp server.

The ACP Registry publishes a daily "protocol adaptation matrix": each agent launched bare,
``initialize``, its auth methods, ``session/new`` and probes of ``session/list``, ``fork``,
``resume``, ``close`` and ``set_model``. This runs the same probes *through acp-lsp*, as an
editor does: ``acp/listAgents``, ``acp/newSession {agent: "registry:<id>"}`` (the server
installs the agent on first use), then ``acp/listSessions``, ``acp/forkSession``,
``acp/closeSession``, ``acp/loadSession`` (the agent's ``session/load`` or ``resume``) and
``acp/setConfigOption`` on a model option, wherever the agent offers them.

Each agent gets its own server, an empty HOME and data dir (no credentials, no login) and a
time limit; the server stops the agent at shutdown and the probe checks that no process of
the run is left (any that is gets killed and counted). One agent at a time: installs are
heavy and the machine is shared. Binary-only agents are listed but not probed (their
downloads are GitHub releases and vendor CDNs, which package-registry-only machines do not
reach). When the registry's own version of a package is not on the npm / PyPI this machine
reaches, that failure is recorded as the editor saw it and the agent is probed again pinned
(``{registry: id, version}``) to the newest version that is there.

    .venv/bin/python bench/registry_probe.py [--agents a,b] [--timeout 300] [--budget 5400]
    ./run bench registry [same arguments]

Writes bench/results/registry_probe.{md,json}; docs/agents.md keeps the table. Not part of
the test suite (it needs the package registries and takes about an hour).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

from acp_lsp.registry.entries import RegistryEntry, package_name, parse_index  # noqa: E402
from acp_lsp.registry.source import SNAPSHOT  # noqa: E402

JsonObject = dict[str, Any]
RESULTS = BENCH / "results"
# what the server may pass on to npm / pip: certificates and proxies, never credentials
_PASS_ENV = re.compile(r"(CERT|CA_BUNDLE|SSL|PROXY|^PIP_|^LANG$|^LC_|^TERM$|^PATH$)", re.I)
REQUEST_S = 60.0  # a control request; the bridge's own limit is 30 s


def short(text: str, limit: int = 220) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- a plain stdio LSP client ----------------------------------------------------------------
@dataclass
class Shown:
    """What reached the editor besides responses."""

    messages: list[str] = field(default_factory=list)  # window/showMessage(Request)
    progress: list[str] = field(default_factory=list)  # $/progress titles and messages
    statuses: list[JsonObject] = field(default_factory=list)  # acp/sessionStatus
    updates: int = 0


class RpcError(Exception):
    def __init__(self, error: JsonObject) -> None:
        super().__init__(error.get("message", ""))
        self.code = int(error.get("code", 0))
        self.message = str(error.get("message", ""))
        self.data = error.get("data")


class Lsp:
    """Content-Length framed JSON-RPC over the server's stdio, answering what a minimal
    editor answers (progress tokens, prompts declined, no edits applied)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.shown = Shown()
        self._next = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._reader = asyncio.create_task(self._read())

    def _send(self, message: JsonObject) -> None:
        assert self.proc.stdin is not None
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def request(self, method: str, params: Any, timeout: float = REQUEST_S) -> Any:
        self._next += 1
        rid = self._next
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(rid, None)

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def _read(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        while True:
            length = 0
            while True:
                line = await stdout.readline()
                if not line:
                    for future in self._pending.values():
                        if not future.done():
                            future.set_exception(ConnectionError("the server closed its stdout"))
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            self._dispatch(json.loads(await stdout.readexactly(length)))

    def _dispatch(self, message: JsonObject) -> None:
        method = message.get("method")
        if method is None:
            future = self._pending.get(message.get("id", -1))
            if future is not None and not future.done():
                if "error" in message:
                    future.set_exception(RpcError(message["error"]))
                else:
                    future.set_result(message.get("result"))
            return
        params = message.get("params") or {}
        if "id" in message:
            self._send({"jsonrpc": "2.0", "id": message["id"], **self._answer(method, params)})
            return
        if method == "window/showMessage":
            self.shown.messages.append(str(params.get("message", "")))
        elif method == "$/progress":
            value = params.get("value", {})
            for key in ("title", "message"):
                if value.get(key):
                    self.shown.progress.append(str(value[key]))
        elif method == "acp/sessionStatus":
            self.shown.statuses.append(params)
        elif method == "acp/sessionUpdate":
            self.shown.updates += 1

    def _answer(self, method: str, params: JsonObject) -> JsonObject:
        if method == "window/showMessageRequest":
            self.shown.messages.append(str(params.get("message", "")))
            return {"result": None}
        if method == "workspace/configuration":
            return {"result": [None] * len(params.get("items", []))}
        if method == "acp/requestPermission":
            return {"result": {"outcome": {"outcome": "cancelled"}}}
        if method == "workspace/applyEdit":
            return {"result": {"applied": False, "failureReason": "probe"}}
        if method == "window/showDocument":
            return {"result": {"success": False}}
        if method == "acp/elicitation":
            return {"result": {"action": "decline"}}
        if method in ("window/workDoneProgress/create", "client/registerCapability"):
            return {"result": None}
        return {"error": {"code": -32601, "message": f"not handled by the probe: {method}"}}

    async def close(self) -> None:
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader


# -- which version the reachable package registry has -----------------------------------------
async def _run(*argv: str, timeout: float = 60) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return -1, "timed out"
    return proc.returncode or 0, out.decode("utf-8", "replace").strip()


async def reachable_version(kind: str, name: str, wanted: str) -> tuple[bool, str | None]:
    """(is ``wanted`` there, the newest version there) on npm / PyPI as this machine sees it."""
    if kind == "npx":
        code, out = await _run("npm", "view", f"{name}@{wanted}", "version")
        if code == 0 and out.splitlines() and out.splitlines()[-1].strip() == wanted:
            return True, wanted
        code, out = await _run("npm", "view", name, "version")
        return False, out.splitlines()[-1].strip() if code == 0 and out else None
    code, out = await _run(sys.executable, "-m", "pip", "index", "versions", name)
    match = re.search(r"Available versions: (.*)", out) if code == 0 else None
    versions = [v.strip() for v in match.group(1).split(",")] if match else []
    return wanted in versions, versions[0] if versions else None


# -- one agent ----------------------------------------------------------------------------------
def server_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if _PASS_ENV.search(k)}
    home = tmp / "home"
    home.mkdir()
    return env | {
        "HOME": str(home),  # empty: no logins, no config, no credentials
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "ACP_LSP_DATA_DIR": str(tmp / "data"),
        "PYTHONUNBUFFERED": "1",
    }


def processes_of(marker: str) -> list[int]:
    """Processes whose environment or command line names this run's temporary dir."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            blob = (entry / "environ").read_bytes() + (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in blob:
            found.append(int(entry.name))
    return found


def classify(error: RpcError | str | None) -> tuple[str, str]:
    """(session outcome, what the editor was shown) from acp/newSession's answer."""
    if error is None:
        return "ok", ""
    if isinstance(error, str):
        return "timeout" if "timed out" in error else "error", error
    if error.code == -32000:
        return "auth required", error.message
    if error.code == -32005 and "could not be installed" in error.message:
        return "install failed", error.message
    if error.code == -32005:
        return "start failed", error.message
    return f"error {error.code}", error.message


def model_option(snapshot: JsonObject) -> tuple[str, str] | None:
    """A model config option and a value to set it to (another choice if there is one)."""
    for option in snapshot.get("configOptions") or []:
        if option.get("category") != "model" and option.get("id") not in ("model", "models"):
            continue
        values: list[str] = []
        for item in option.get("options") or []:
            group = item.get("options") if isinstance(item, dict) else None
            for choice in group if isinstance(group, list) else [item]:
                if isinstance(choice, dict) and isinstance(choice.get("value"), str):
                    values.append(choice["value"])
        current = option.get("currentValue")
        others = [v for v in values if v != current] or values
        if others:
            return str(option["id"]), others[0]
    return None


async def attempt(lsp: Lsp, name: str, open_timeout: float) -> JsonObject:
    """acp/newSession on ``name`` and every session probe it allows."""
    out: JsonObject = {"agent": name}
    t0 = time.monotonic()
    error: RpcError | str | None = None
    snapshot: JsonObject = {}
    try:
        snapshot = await lsp.request("acp/newSession", {"agent": name}, timeout=open_timeout)
    except RpcError as exc:
        error = exc
        out["error"] = {"code": exc.code, "message": exc.message, "data": exc.data}
    except TimeoutError:
        error = f"acp/newSession timed out after {open_timeout:.0f} s"
    out["seconds"] = round(time.monotonic() - t0, 1)
    out["session"], out["shown"] = classify(error)
    listed = await lsp.request("acp/listAgents", {"includeRegistry": True})
    me: JsonObject = next((a for a in listed.get("agents", []) if a.get("name") == name), {})
    out["listed"] = {
        k: me.get(k)
        for k in ("version", "authMethods", "agentCapabilities", "error", "installed", "running")
    }
    # agentCapabilities appear once the agent answered initialize (a registry listing alone
    # carries the registry's version, not the agent's)
    ran = me.get("agentCapabilities") is not None or out["session"] in ("ok", "auth required")
    out["initialize"] = "ok" if ran else "-"
    if out["session"] == "ok":
        out["shown"] = "session opened, no login asked"
    probes: JsonObject = {}
    out["probes"] = probes
    if out["session"] not in ("ok", "auth required"):
        return out
    probes["list"] = await probe(lsp, "acp/listSessions", {"agent": name})
    if out["session"] != "ok":
        return out
    sid = snapshot["sessionId"]
    out["sessionId"] = sid
    out["models"] = [o.get("id") for o in snapshot.get("configOptions") or []]
    caps = me.get("agentCapabilities") or {}
    session_caps = caps.get("sessionCapabilities") or {}
    if "fork" in session_caps:
        forked = await probe(lsp, "acp/forkSession", {"sessionId": sid})
        probes["fork"] = forked
        if forked.get("result", {}).get("sessionId"):
            await probe(lsp, "acp/closeSession", {"sessionId": forked["result"]["sessionId"]})
    else:
        probes["fork"] = {"status": "not offered"}
    choice = model_option(snapshot)
    if choice is not None:
        config_id, value = choice
        probes["setModel"] = await probe(
            lsp, "acp/setConfigOption", {"sessionId": sid, "configId": config_id, "value": value}
        ) | {"configId": config_id, "value": value}
    else:
        probes["setModel"] = {"status": "no model option"}
    probes["close"] = await probe(lsp, "acp/closeSession", {"sessionId": sid})
    # the closed session is stored: loading it goes through session/load or session/resume
    loaded = await probe(lsp, "acp/loadSession", {"sessionId": sid, "agent": name})
    probes["load"] = loaded
    if loaded.get("status") == "ok":
        await probe(lsp, "acp/closeSession", {"sessionId": sid})
    return out


async def probe(lsp: Lsp, method: str, params: JsonObject) -> JsonObject:
    try:
        result = await lsp.request(method, params)
    except RpcError as exc:
        data = short(json.dumps(exc.data), 300) if exc.data is not None else None
        return {"status": f"error {exc.code}", "message": short(exc.message), "data": data}
    except TimeoutError:
        return {"status": "timeout"}
    summary: JsonObject = {"status": "ok"}
    if method == "acp/listSessions":
        sessions = result.get("sessions", [])
        summary["fromAgent"] = sum(1 for s in sessions if not s.get("stored"))
        summary["count"] = len(sessions)
    elif method in ("acp/forkSession", "acp/loadSession"):
        summary["result"] = {k: result.get(k) for k in ("sessionId", "resumedFrom", "forkedFrom")}
    return summary


async def probe_agent(entry: RegistryEntry, index_url: str, timeout: float) -> JsonObject:
    dist = entry.distribution()
    assert dist is not None and dist.kind in ("npx", "uvx")
    name, pinned = package_name(dist.package, dist.kind)
    wanted = pinned or entry.version
    row: JsonObject = {
        "id": entry.id,
        "name": entry.name,
        "registryVersion": entry.version,
        "distribution": dist.kind,
        "package": f"{name}@{wanted}",
    }
    there, newest = await reachable_version(dist.kind, name, wanted)
    row["reachable"] = {"registryVersion": there, "newest": newest}
    tmp = Path(tempfile.mkdtemp(prefix=f"acp-probe-{entry.id}-"))
    ws = tmp / "workspace"
    ws.mkdir()
    (ws / "README.md").write_text("# probe workspace\n", encoding="utf-8")
    agents: JsonObject = {}
    fallback = f"pinned-{entry.id}"
    if not there and newest:
        agents[fallback] = {"registry": entry.id, "version": newest, "startTimeout": timeout}
    options = {
        "registry": {"url": index_url},
        "agents": agents,
        "followAlong": False,
    }
    log = (tmp / "server.log").open("wb")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "acp_lsp",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=log,
        env=server_env(tmp),
        cwd=ws,
        start_new_session=True,  # its own process group: killable as a whole at the end
    )
    lsp = Lsp(proc)
    t0 = time.monotonic()
    try:
        await asyncio.wait_for(run_probes(lsp, ws, options, row, fallback in agents), timeout)
    except TimeoutError:
        row["timeout"] = f"no verdict within {timeout:.0f} s"
    except (ConnectionError, RpcError) as exc:
        row["serverError"] = short(str(exc))
    row["seconds"] = round(time.monotonic() - t0, 1)
    row["shownMessages"] = list(dict.fromkeys(short(m, 300) for m in lsp.shown.messages))
    row["progress"] = list(dict.fromkeys(short(m, 160) for m in lsp.shown.progress))[-8:]
    row["sessionStatuses"] = [
        {k: s.get(k) for k in ("status", "error") if k in s} for s in lsp.shown.statuses
    ][-4:]
    row["agentProcessesSeen"] = len(processes_of(str(tmp))) - 1  # less the server itself
    await stop_server(lsp, proc)
    log.close()
    left = processes_of(str(tmp))
    for pid in left:  # the server should have stopped these: count, then end them
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    row["leftProcesses"] = len(left)
    row["serverLogTail"] = short((tmp / "server.log").read_text("utf-8", "replace")[-600:], 600)
    shutil.rmtree(tmp, ignore_errors=True)
    return row


async def run_probes(
    lsp: Lsp, ws: Path, options: JsonObject, row: JsonObject, with_fallback: bool
) -> None:
    await lsp.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": ws.as_uri(),
            "workspaceFolders": [{"uri": ws.as_uri(), "name": "workspace"}],
            "capabilities": {
                "window": {"workDoneProgress": True, "showDocument": {"support": True}},
                "workspace": {"applyEdit": True, "configuration": True},
                "experimental": {"acp": {}},
            },
            "initializationOptions": options,
        },
    )
    lsp.notify("initialized", {})
    listed = await lsp.request("acp/listAgents", {"includeRegistry": True})
    # the picker's entry: registry:<id>, or the pinned agent standing for it
    mine = next((a for a in listed.get("agents", []) if a.get("registryId") == row["id"]), None)
    row["pickerEntry"] = mine and {k: mine.get(k) for k in ("title", "version", "installed")}
    # as a user picking it: the registry's own version
    row["attempts"] = [await attempt(lsp, f"registry:{row['id']}", 240)]
    if with_fallback and row["attempts"][0]["session"] == "install failed":
        row["attempts"].append(await attempt(lsp, f"pinned-{row['id']}", 240))


async def stop_server(lsp: Lsp, proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(Exception):
        await lsp.request("shutdown", None, timeout=20)
        lsp.notify("exit", None)
    try:
        await asyncio.wait_for(proc.wait(), 15)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
    await lsp.close()


# -- the table -----------------------------------------------------------------------------------
def verdict(row: JsonObject) -> JsonObject:
    """The attempt that tells most: the pinned retry when the registry's version failed."""
    attempts = row.get("attempts") or []
    return attempts[-1] if attempts else {}


def auth_cell(last: JsonObject) -> str:
    methods = (last.get("listed") or {}).get("authMethods") or []
    if not methods and last.get("error"):
        methods = ((last["error"].get("data") or {}) or {}).get("authMethods") or []
    if not methods:
        return "none" if last.get("initialize") == "ok" else "-"
    cells = []
    for method in methods:
        meta = method.get("_meta") if isinstance(method.get("_meta"), dict) else {}
        kind = method.get("type") or meta.get("type") or "agent"  # ACP's default type
        cells.append(f"{method.get('name') or method.get('id')} ({kind})")
    return "; ".join(cells)


def probes_cell(last: JsonObject) -> str:
    probes = last.get("probes") or {}
    if not probes:
        return "-"
    parts = []
    for key in ("list", "fork", "load", "close", "setModel"):
        if key in probes:
            status = probes[key].get("status", "-")
            if key == "load" and status == "ok":
                status = f"ok ({(probes[key].get('result') or {}).get('resumedFrom') or 'live'})"
            if key == "list" and status == "ok":
                # the bridge merges the agent's list with its own: say how many came from it
                status = f"ok, {probes[key].get('fromAgent', 0)} from the agent"
            parts.append(f"{key} {status}")
    return "; ".join(parts)


def md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(rows: list[JsonObject], info: JsonObject) -> str:
    lines = [
        f"Probed {info['date']} with the shipped snapshot dated {info['snapshotDate']}; "
        f"{info['summary']}. Rerun: `./run bench registry` "
        "(or `.venv/bin/python bench/registry_probe.py --agents ID,…`).",
        "",
        "| agent | version | distribution | initialize | auth | session | what the editor was "
        "shown | session probes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if row.get("skipped"):
            lines.append(
                f"| {row['id']} | {row['registryVersion']} | {row['distribution']} | - | - | "
                f"not probed | {md_escape(row['skipped'])} | - |"
            )
            continue
        last = verdict(row)
        first = (row.get("attempts") or [{}])[0]
        version = row["registryVersion"]
        listed = last.get("listed") or {}
        ran = listed.get("agentCapabilities") is not None
        listed_version = listed.get("version") if ran else None
        if len(row.get("attempts") or []) > 1:
            version += f" (not on npm here) → {row['reachable']['newest']}"
        if listed_version and listed_version not in version:
            version += f" (agent says {listed_version})"
        shown = last.get("shown") or ""
        if len(row.get("attempts") or []) > 1:
            first_shown = short(first.get("shown") or "", 150)
            shown = f"registry version: {first_shown} — pinned: {shown or 'session opened'}"
        if row.get("timeout"):
            shown = f"{shown} {row['timeout']}".strip()
        if row.get("leftProcesses"):
            shown += f" ({row['leftProcesses']} processes left after shutdown)"
        session = last.get("session") or ("timeout" if row.get("timeout") else "-")
        lines.append(
            "| "
            + " | ".join(
                [
                    row["id"],
                    md_escape(version),
                    row["distribution"],
                    last.get("initialize") or "-",
                    md_escape(auth_cell(last)),
                    session,
                    md_escape(short(shown or "-", 400)),
                    md_escape(probes_cell(last)),
                ]
            )
            + " |"
        )
    return "\n".join(lines) + "\n"


def summarize(rows: list[JsonObject]) -> str:
    counts: dict[str, int] = {}
    for row in rows:
        key = "not probed" if row.get("skipped") else verdict(row).get("session") or "timeout"
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: -kv[1]))


async def main_async(args: argparse.Namespace) -> int:
    index_path: Path = args.index
    data = json.loads(index_path.read_text(encoding="utf-8"))
    entries, problems = parse_index(data)
    chosen = [a.strip() for a in args.agents.split(",") if a.strip()] or sorted(entries)
    unknown = [a for a in chosen if a not in entries]
    if unknown:
        raise SystemExit(f"not in {index_path}: {', '.join(unknown)}")
    started = time.monotonic()
    rows: list[JsonObject] = []
    for rid in chosen:
        entry = entries[rid]
        dist = entry.distribution()
        base = {"id": rid, "name": entry.name, "registryVersion": entry.version}
        if dist is None or dist.kind == "binary":
            kinds = "/".join(d.kind for d in entry.distributions) or "none for this platform"
            rows.append(
                base
                | {
                    "distribution": kinds,
                    "skipped": "binary only: downloads from GitHub releases / vendor CDNs, "
                    "not a package registry",
                }
            )
            continue
        if time.monotonic() - started > args.budget:
            used_up = f"run budget ({args.budget:.0f} s) used up"
            rows.append(base | {"distribution": dist.kind, "skipped": used_up})
            continue
        print(f"[registry] {rid} …", file=sys.stderr, flush=True)
        row = await probe_agent(entry, index_path.resolve().as_uri(), args.timeout)
        rows.append(row)
        last = verdict(row)
        print(
            f"[registry] {rid}: {last.get('session') or row.get('timeout')} in {row['seconds']} s",
            file=sys.stderr,
            flush=True,
        )
    info = {
        "date": time.strftime("%Y-%m-%d"),
        "snapshotDate": data.get("snapshotDate", "?"),
        "index": str(index_path),
        "seconds": round(time.monotonic() - started),
        "indexProblems": problems,
        "summary": summarize(rows),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "registry_probe.json").write_text(
        json.dumps({"run": info, "agents": rows}, indent=1, default=str) + "\n"
    )
    report = markdown(rows, info)
    (args.out / "registry_probe.md").write_text(report)
    print(report)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="", help="comma-separated registry ids (default all)")
    parser.add_argument("--index", type=Path, default=SNAPSHOT, help="a registry index file")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per agent")
    parser.add_argument("--budget", type=float, default=5400, help="seconds for the whole run")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where the results go")
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
