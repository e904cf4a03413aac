"""A raw NDJSON ACP agent driven by a JSON script (format: tests/agents/README.md).

    python tests/agents/scripted_acp.py SCRIPT.json [--arg VALUE]
    python tests/agents/scripted_acp.py -c '<json>' [--arg VALUE]

Standard library only and no ACP SDK, so it can send exactly the shapes real agents send,
and frames no SDK would: invalid JSON, invalid UTF-8, huge lines, floods, crashes. Every
message it receives is appended to the file named by env SCRIPTED_ACP_LOG (one JSON a line).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

DEFAULT_INITIALIZE: dict[str, Any] = {
    "protocolVersion": 1,
    "agentInfo": {"name": "scripted-acp", "version": "1.0.0"},
    "authMethods": [],
    "agentCapabilities": {
        "loadSession": True,
        "promptCapabilities": {"embeddedContext": True},
        "sessionCapabilities": {"list": {}, "close": {}, "resume": {}},
    },
}
DEFAULT_RESULTS: dict[str, Any] = {
    "authenticate": {},
    "logout": {},
    "session/load": {},
    "session/resume": {},
    "session/close": {},
    "session/delete": {},
    "session/set_mode": {},
    "session/set_config_option": {"configOptions": []},
    "session/prompt": {"stopReason": "end_turn"},
}
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][\w.\-]*)\}")


def substitute(value: Any, env: dict[str, Any]) -> Any:
    """Replace {name} / {name.field.0} in every string; a lone placeholder keeps its type."""
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value)
        if whole is not None:
            found, resolved = _lookup(env, whole.group(1))
            return resolved if found else value

        def one(match: re.Match[str]) -> str:
            found, resolved = _lookup(env, match.group(1))
            if not found:
                return match.group(0)
            return resolved if isinstance(resolved, str) else json.dumps(resolved)

        return _PLACEHOLDER.sub(one, value)
    if isinstance(value, list):
        return [substitute(v, env) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, env) for k, v in value.items()}
    return value


def _lookup(env: dict[str, Any], path: str) -> tuple[bool, Any]:
    head, *rest = path.split(".")
    if head not in env:
        return False, None
    value = env[head]
    for part in rest:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return False, None
    return True, value


def contains(expected: Any, actual: Any) -> bool:
    """`expected` is a subset of `actual` (objects by key, lists item by item)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and contains(v, actual[k]) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(contains(e, a) for e, a in zip(expected, actual, strict=True))
        )
    return bool(expected == actual)


class Stop(Exception):
    """Ends the current handler's steps."""


class Context:
    """One handler run: the message it handles and its template variables."""

    def __init__(self, agent: ScriptedAgent, message: dict[str, Any] | None) -> None:
        self.message = message or {}
        self.responded = message is None or "id" not in message
        self.ignore_cancel = agent.script.get("ignore_cancel", False) is True
        self.failures: list[str] = []
        params = self.message.get("params")
        self.params = params if isinstance(params, dict) else {}
        self.session_id = str(self.params.get("sessionId", agent.last_session or ""))
        self.vars: dict[str, Any] = {
            "arg": agent.arg,
            "cwd": agent.cwd_of(self.session_id),
            "sessionId": self.session_id,
            "requestId": self.message.get("id"),
            "method": self.message.get("method"),
            "params": self.params,
            "prompt": _prompt_text(self.params.get("prompt")),
            **agent.saved,
        }


def _prompt_text(prompt: Any) -> str:
    if not isinstance(prompt, list):
        return ""
    return "".join(b.get("text", "") for b in prompt if isinstance(b, dict))


class ScriptedAgent:
    def __init__(self, script: dict[str, Any], arg: str | None) -> None:
        self.script = script
        self.arg = arg
        self.on: dict[str, Any] = script.get("on", {})
        self.sessions: dict[str, dict[str, Any]] = {
            sid: dict(info) for sid, info in script.get("sessions", {}).items()
        }
        self.cancelled: dict[str, asyncio.Event] = {}
        self.pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.calls: dict[str, int] = {}
        self.saved: dict[str, Any] = {}
        self.last_session: str | None = None
        self.next_id = 0
        self.new_sessions = 0
        self.tasks: set[asyncio.Task[None]] = set()
        self.out = sys.stdout.buffer
        log_path = os.environ.get("SCRIPTED_ACP_LOG")
        self.log = open(log_path, "a", encoding="utf-8") if log_path else None  # noqa: SIM115

    # -- output -------------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        try:
            self.out.write(data)
            self.out.flush()
        except (BrokenPipeError, ValueError):
            self.exit(0)

    def send(self, message: Any) -> None:
        self.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    def exit(self, code: int) -> None:
        for stream in (sys.stdout, sys.stderr, self.log):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)

    def cwd_of(self, session_id: str) -> str:
        return str(self.sessions.get(session_id, {}).get("cwd") or os.getcwd())

    def cancel_event(self, session_id: str) -> asyncio.Event:
        return self.cancelled.setdefault(session_id, asyncio.Event())

    # -- input --------------------------------------------------------------------------------

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 28)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        await self.run(Context(self, None), self.script.get("start", []))
        while line := await reader.readline():
            self.receive(line)
        if self.script.get("on_eof") == "hang":
            await asyncio.Event().wait()
        self.exit(0)

    def receive(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            message = {"_unparsed": line.decode("utf-8", "replace").rstrip("\n")}
        if self.log is not None:
            self.log.write(json.dumps(message) + "\n")
            self.log.flush()
        if not isinstance(message, dict) or "_unparsed" in message:
            return
        method = message.get("method")
        if method is None:
            future = self.pending.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message)
            return
        params = message.get("params")
        sid = str(params.get("sessionId", "")) if isinstance(params, dict) else ""
        if method == "session/prompt":
            # A new turn, reset here and not in its task: a cancel read right after it counts.
            self.cancelled[sid] = asyncio.Event()
        if method == "session/cancel":
            self.cancel_event(sid).set()
        if "id" in message or method in self.on:
            task = asyncio.get_running_loop().create_task(self.handle(message))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def handle(self, message: dict[str, Any]) -> None:
        method = str(message["method"])
        count = self.calls[method] = self.calls.get(method, 0) + 1
        steps = self.on.get(f"{method}#{count}", self.on.get(method))
        ctx = Context(self, message)
        ctx.vars["n"] = count
        if method in ("session/new", "session/fork"):
            self.start_session(ctx)
        elif method in ("session/load", "session/resume") and ctx.session_id:
            info = self.sessions.setdefault(ctx.session_id, {})
            info["cwd"] = ctx.params.get("cwd", info.get("cwd"))
            ctx.vars["cwd"] = self.cwd_of(ctx.session_id)
        if ctx.session_id:
            self.last_session = ctx.session_id
        if steps is None:
            steps = self.default_steps(method, ctx)
        await self.run(ctx, steps)
        if not ctx.responded:
            self.respond_default(method, ctx)

    def start_session(self, ctx: Context) -> None:
        ids = self.script.get("session_ids", [])
        self.new_sessions += 1
        sid = ids[self.new_sessions - 1] if self.new_sessions <= len(ids) else None
        sid = str(sid or f"scripted-{self.new_sessions}")
        self.sessions[sid] = {"cwd": ctx.params.get("cwd")}
        ctx.session_id = self.last_session = sid
        ctx.vars.update(sessionId=sid, cwd=self.cwd_of(sid))

    def default_steps(self, method: str, ctx: Context) -> list[dict[str, Any]]:
        if method == "session/load":
            history = self.sessions.get(ctx.session_id, {}).get("history", [])
            return [{"update": update} for update in history]
        return []

    def respond_default(self, method: str, ctx: Context) -> None:
        if method == "initialize":
            result: Any = self.script.get("initialize", DEFAULT_INITIALIZE)
        elif method in ("session/new", "session/fork"):
            result = {"sessionId": ctx.session_id, **self.script.get("new_session", {})}
        elif method == "session/list":
            result = {"sessions": [self.session_info(sid) for sid in self.sessions]}
        elif ctx.failures:
            self.reply(
                ctx, error={"code": -32603, "message": "expect failed", "data": ctx.failures}
            )
            return
        elif method in DEFAULT_RESULTS:
            result = DEFAULT_RESULTS[method]
        else:
            self.reply(ctx, error={"code": -32601, "message": f"Method not found: {method}"})
            return
        self.reply(ctx, result=substitute(result, ctx.vars))

    def session_info(self, sid: str) -> dict[str, Any]:
        info = self.sessions[sid]
        extra = {k: info[k] for k in ("title", "updatedAt") if info.get(k) is not None}
        return {"sessionId": sid, "cwd": info.get("cwd") or os.getcwd(), **extra}

    def reply(self, ctx: Context, *, result: Any = None, error: Any = None) -> None:
        if ctx.responded:
            return
        ctx.responded = True
        response: dict[str, Any] = {"jsonrpc": "2.0", "id": ctx.message.get("id")}
        if error is not None:
            response["error"] = error
        else:
            response["result"] = result
        self.send(response)

    # -- steps --------------------------------------------------------------------------------

    async def run(self, ctx: Context, steps: list[dict[str, Any]]) -> None:
        try:
            for step in steps:
                await self.step(ctx, step)
        except Stop:
            pass

    async def step(self, ctx: Context, step: dict[str, Any]) -> None:
        env = ctx.vars
        if "update" in step or "updates" in step:
            sid = substitute(step.get("sessionId", ctx.session_id), env)
            for update in step.get("updates", [step.get("update")]):
                params = {"sessionId": sid, "update": substitute(update, env)}
                self.send({"jsonrpc": "2.0", "method": "session/update", "params": params})
        elif "notify" in step:
            params = substitute(step.get("params", {}), env)
            self.send({"jsonrpc": "2.0", "method": step["notify"], "params": params})
        elif "request" in step:
            await self.request(ctx, step)
        elif "respond" in step:
            self.reply(ctx, result=substitute(step["respond"], env))
        elif "error" in step:
            self.reply(ctx, error=substitute(step["error"], env))
        elif "sleep" in step:
            await self.sleep(ctx, float(step["sleep"]))
        elif "raw" in step:
            end = "\n" if step.get("newline", True) else ""
            self.write((substitute(step["raw"], env) + end).encode())
        elif "json" in step:
            self.send(substitute(step["json"], env))
        elif "bytes_b64" in step:
            self.write(base64.b64decode(step["bytes_b64"]))
        elif "stderr" in step:
            text = str(substitute(step["stderr"], env)) * int(step.get("repeat", 1))
            sys.stderr.buffer.write(text.encode())
            sys.stderr.buffer.flush()
        elif "exit" in step:
            self.exit(int(step["exit"]))
        elif "hang" in step:
            await asyncio.Event().wait()
        elif "freeze" in step:
            while True:  # blocks the whole process: no reading, no exit on EOF
                time.sleep(3600)
        elif "flood" in step:
            self.flood(ctx, step["flood"])
        elif "write_file" in step:
            spec = substitute(step["write_file"], env)
            path = Path(env["cwd"]) / spec["path"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(spec["content"], encoding="utf-8")
        elif "delete_file" in step:
            (Path(env["cwd"]) / substitute(step["delete_file"], env)).unlink(missing_ok=True)
        elif "wait_cancel" in step:
            limit = step["wait_cancel"]  # true, or a timeout in seconds
            timeout = None if isinstance(limit, bool) else float(limit)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.cancel_event(ctx.session_id).wait(), timeout)
        elif "ignore_cancel" in step:
            ctx.ignore_cancel = step["ignore_cancel"] is not False
        elif "set" in step:
            values = substitute(step["set"], env)
            self.saved.update(values)
            env.update(values)
        else:
            raise ValueError(f"unknown step: {step}")

    async def request(self, ctx: Context, step: dict[str, Any]) -> None:
        request_id = step.get("id", f"agent-{self.next_id}")
        self.next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        params = substitute(step.get("params", {"sessionId": ctx.session_id}), ctx.vars)
        self.send({"jsonrpc": "2.0", "id": request_id, "method": step["request"], "params": params})
        if step.get("wait", True) is False:
            return
        response = await asyncio.wait_for(future, step.get("timeout"))
        value = response["result"] if "result" in response else {"error": response.get("error")}
        name = step.get("save_as")
        if name:
            self.saved[name] = ctx.vars[name] = value
        ctx.vars["last"] = value
        expected = step.get("expect")
        if expected is not None and not contains(substitute(expected, ctx.vars), response):
            failure = f"{step['request']}: expected {expected}, got {response}"
            ctx.failures.append(failure)
            sys.stderr.write(f"scripted_acp: {failure}\n")

    async def sleep(self, ctx: Context, seconds: float) -> None:
        """Sleep; a cancel ends a prompt turn ("cancelled") unless cancels are ignored."""
        if ctx.ignore_cancel or ctx.message.get("method") != "session/prompt":
            await asyncio.sleep(seconds)
            return
        try:
            await asyncio.wait_for(self.cancel_event(ctx.session_id).wait(), seconds)
        except TimeoutError:
            return
        self.reply(ctx, result={"stopReason": "cancelled"})
        raise Stop

    def flood(self, ctx: Context, spec: dict[str, Any]) -> None:
        """`count` message chunks as fast as the pipe takes them; "{i}" in text numbers them."""
        count = int(spec.get("count", 1))
        text = str(spec.get("text", "x")) * int(spec.get("text_repeat", 1))
        update: dict[str, Any] = {"sessionUpdate": spec.get("kind", "agent_message_chunk")}
        if spec.get("messageId"):
            update["messageId"] = substitute(spec["messageId"], ctx.vars)
        update["content"] = {"type": "text", "text": "\0"}
        params = {"sessionId": spec.get("sessionId", ctx.session_id), "update": update}
        frame = json.dumps(
            {"jsonrpc": "2.0", "method": "session/update", "params": params}, separators=(",", ":")
        )
        head, tail = (part.encode() for part in frame.split('"\\u0000"'))
        numbered = "{i}" in text
        fixed = json.dumps(text).encode()
        batch: list[bytes] = []
        for i in range(count):
            body = json.dumps(text.replace("{i}", str(i))).encode() if numbered else fixed
            batch.append(head + body + tail + b"\n")
            if len(batch) >= 512:
                self.write(b"".join(batch))
                batch.clear()
        if batch:
            self.write(b"".join(batch))


def main() -> None:
    parser = argparse.ArgumentParser(description="Scripted ACP agent (raw NDJSON)")
    parser.add_argument("script", nargs="?", help="path of a JSON script")
    parser.add_argument("-c", dest="inline", help="the JSON script itself")
    parser.add_argument("--arg", default=None, help="value of {arg} in the script")
    args = parser.parse_args()
    if args.inline is not None:
        script = json.loads(args.inline)
    elif args.script:
        script = json.loads(Path(args.script).read_text(encoding="utf-8"))
    else:
        script = {}
    agent = ScriptedAgent(script, args.arg)
    try:
        asyncio.run(agent.serve())
    except KeyboardInterrupt:
        agent.exit(130)


if __name__ == "__main__":
    main()
