"""Agent terminals: real processes, exact environment, capped output, nothing left behind."""

from __future__ import annotations

import asyncio
import os
import sys
import tracemalloc
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from acp_lsp.terminals import OutputBuffer, TerminalError, TerminalManager
from tests.support.procs import running

pytestmark = pytest.mark.timeout(20)

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
PY = sys.executable
# The commands below are POSIX programs (sh, echo, sleep, env, pwd, yes, head), and kill and
# release end a terminal with SIGKILL: Windows has neither. The terminals that run Python
# and the output buffer run everywhere.
posix_commands = pytest.mark.skipif(
    sys.platform == "win32", reason="POSIX commands (sh, echo, sleep, env, pwd) and SIGKILL"
)


async def eventually(condition: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    """Wait (bounded) for a condition the OS makes true asynchronously."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        if loop.time() > end:
            pytest.fail(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


class Recorder:
    def __init__(self) -> None:
        self.output: dict[str, list[str]] = {}
        self.exits: list[tuple[str, str, dict[str, Any]]] = []

    def on_output(self, owner: str, terminal_id: str, text: str) -> None:
        self.output.setdefault(terminal_id, []).append(text)

    def on_exit(self, owner: str, terminal_id: str, status: dict[str, Any]) -> None:
        self.exits.append((owner, terminal_id, status))

    def text(self, terminal_id: str) -> str:
        return "".join(self.output.get(terminal_id, []))


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
async def manager(recorder: Recorder) -> AsyncIterator[TerminalManager]:
    mgr = TerminalManager(recorder.on_output, recorder.on_exit, drain_grace=0.3)
    yield mgr
    await mgr.close()


@posix_commands
async def test_echo_output_and_exit(
    manager: TerminalManager, recorder: Recorder, tmp_path: Path
) -> None:
    tid = await manager.create("s1", "echo", ["hello", "world"], ENV, str(tmp_path))
    assert await manager.wait_for_exit(tid) == {"exitCode": 0, "signal": None}
    assert manager.output(tid) == {
        "output": "hello world\n",
        "truncated": False,
        "exitStatus": {"exitCode": 0, "signal": None},
    }
    assert recorder.text(tid) == "hello world\n"
    assert recorder.exits == [("s1", tid, {"exitCode": 0, "signal": None})]
    assert manager.owner_of(tid) == "s1"


@posix_commands
async def test_create_returns_while_the_command_runs(
    manager: TerminalManager, tmp_path: Path
) -> None:
    tid = await manager.create("s1", "sleep", ["100"], ENV, str(tmp_path))
    assert "exitStatus" not in manager.output(tid)
    assert len(manager.pids()) == 1
    assert running(manager.pids()[0])


@posix_commands
async def test_stdout_and_stderr_are_merged_in_order(
    manager: TerminalManager, tmp_path: Path
) -> None:
    tid = await manager.create(
        "s1", "sh", ["-c", "echo one; echo two >&2; echo three"], ENV, str(tmp_path)
    )
    await manager.wait_for_exit(tid)
    assert manager.output(tid)["output"] == "one\ntwo\nthree\n"


@posix_commands
async def test_cwd_is_honoured(manager: TerminalManager, tmp_path: Path) -> None:
    sub = tmp_path / "sub dir"
    sub.mkdir()
    tid = await manager.create("s1", "pwd", None, ENV, str(sub))
    await manager.wait_for_exit(tid)
    assert manager.output(tid)["output"] == f"{sub.resolve()}\n"


@posix_commands
async def test_environment_is_exactly_the_given_one(
    manager: TerminalManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACP_LSP_SHOULD_NOT_LEAK", "secret")
    env = {**ENV, "ONLY_ME": "a b=c"}
    tid = await manager.create("s1", "env", None, env, str(tmp_path))
    await manager.wait_for_exit(tid)
    lines = manager.output(tid)["output"].splitlines()
    assert sorted(lines) == sorted(f"{k}={v}" for k, v in env.items())


@posix_commands
async def test_command_is_looked_up_on_the_given_path(
    manager: TerminalManager, tmp_path: Path
) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tool = bindir / "mytool"
    tool.write_text("#!/bin/sh\necho from mytool\n")
    tool.chmod(0o755)
    tid = await manager.create(
        "s1", "mytool", [], {"PATH": f"{bindir}:/usr/bin:/bin"}, str(tmp_path)
    )
    await manager.wait_for_exit(tid)
    assert manager.output(tid)["output"] == "from mytool\n"


async def test_command_not_found(manager: TerminalManager, tmp_path: Path) -> None:
    with pytest.raises(TerminalError, match="command not found: no-such-command-xyz"):
        await manager.create("s1", "no-such-command-xyz", [], ENV, str(tmp_path))
    assert manager.pids() == []


async def test_missing_cwd(manager: TerminalManager, tmp_path: Path) -> None:
    with pytest.raises(TerminalError, match="does not exist"):
        await manager.create("s1", "echo", [], ENV, str(tmp_path / "nope"))


@pytest.mark.parametrize(
    ("text", "limit", "kept"),
    [
        ("é" * 100, 11, "é" * 5),  # limit falls in the middle of a 2-byte character
        ("😀" * 10, 10, "😀" * 2),  # ... of a 4-byte character: keeps 8 bytes
        ("😀" * 10, 3, ""),  # no whole character fits
        ("ab€" * 30, 7, "ab€"),  # the last 7 bytes start inside a '€': 5 are kept
        ("short", 100, "short"),
    ],
    ids=["e-acute", "emoji", "nothing-fits", "euro", "short"],
)
async def test_output_limit_truncates_from_the_start_on_a_character_boundary(
    manager: TerminalManager, tmp_path: Path, text: str, limit: int, kept: str
) -> None:
    tid = await manager.create(
        "s1",
        PY,
        ["-c", f"import sys; sys.stdout.write({text!r})"],
        {**ENV, "PYTHONIOENCODING": "utf-8"},  # (a pipe on Windows is the ANSI code page)
        str(tmp_path),
        limit,
    )
    await manager.wait_for_exit(tid)
    out = manager.output(tid)
    assert out["output"] == kept
    assert out["truncated"] is (kept != text)
    assert len(out["output"].encode()) <= limit


async def test_character_split_across_reads_is_not_corrupted(
    manager: TerminalManager, recorder: Recorder, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    script = (
        "import os, sys, time\n"
        "sys.stdout.buffer.write(b'A\\xc3'); sys.stdout.flush()\n"
        f"while not os.path.exists({str(gate)!r}): time.sleep(0.005)\n"
        "sys.stdout.buffer.write(b'\\xa9B'); sys.stdout.flush()\n"
    )
    tid = await manager.create("s1", PY, ["-c", script], ENV, str(tmp_path))
    await eventually(lambda: recorder.text(tid) == "A", "the first half")
    gate.touch()  # the second byte of 'é' is written only after the first was read
    await manager.wait_for_exit(tid)
    assert manager.output(tid)["output"] == "AéB"
    assert recorder.output[tid] == ["A", "éB"]


async def test_invalid_utf8_is_replaced(manager: TerminalManager, tmp_path: Path) -> None:
    tid = await manager.create(
        "s1", PY, ["-c", "import sys; sys.stdout.buffer.write(b'a\\xffb\\xc3')"], ENV, str(tmp_path)
    )
    await manager.wait_for_exit(tid)
    assert manager.output(tid)["output"] == "a\ufffdb\ufffd"


@posix_commands
async def test_exit_codes_and_signals(manager: TerminalManager, tmp_path: Path) -> None:
    code = await manager.create("s1", "sh", ["-c", "exit 3"], ENV, str(tmp_path))
    term = await manager.create("s1", "sh", ["-c", "kill -TERM $$"], ENV, str(tmp_path))
    assert await manager.wait_for_exit(code) == {"exitCode": 3, "signal": None}
    assert await manager.wait_for_exit(term) == {"exitCode": None, "signal": "SIGTERM"}
    assert manager.output(term)["exitStatus"] == {"exitCode": None, "signal": "SIGTERM"}


@posix_commands
async def test_kill_ends_the_command_and_keeps_the_id(
    manager: TerminalManager, recorder: Recorder, tmp_path: Path
) -> None:
    tid = await manager.create(
        "s1", "sh", ["-c", "echo started; exec sleep 100"], ENV, str(tmp_path)
    )
    await eventually(lambda: recorder.text(tid) == "started\n", "output")
    pid = manager.pids()[0]
    await manager.kill(tid)
    assert not running(pid)
    assert await manager.wait_for_exit(tid) == {"exitCode": None, "signal": "SIGKILL"}
    assert manager.output(tid) == {
        "output": "started\n",
        "truncated": False,
        "exitStatus": {"exitCode": None, "signal": "SIGKILL"},
    }
    assert manager.pids() == []
    await manager.kill(tid)  # killing an exited terminal is harmless


@posix_commands
async def test_release_kills_and_invalidates(manager: TerminalManager, tmp_path: Path) -> None:
    tid = await manager.create("s1", "sleep", ["100"], ENV, str(tmp_path))
    pid = manager.pids()[0]
    await manager.release(tid)
    assert not running(pid)
    for call in (manager.output, manager.owner_of):
        with pytest.raises(TerminalError, match="unknown terminal"):
            call(tid)
    with pytest.raises(TerminalError):
        await manager.wait_for_exit(tid)
    with pytest.raises(TerminalError):
        await manager.kill(tid)
    with pytest.raises(TerminalError):
        await manager.release(tid)


@posix_commands
async def test_wait_for_exit_returns_when_killed_meanwhile(
    manager: TerminalManager, tmp_path: Path
) -> None:
    tid = await manager.create("s1", "sleep", ["100"], ENV, str(tmp_path))
    waiter = asyncio.create_task(manager.wait_for_exit(tid))
    await asyncio.sleep(0)
    assert not waiter.done()
    await manager.kill(tid)
    assert await waiter == {"exitCode": None, "signal": "SIGKILL"}


@posix_commands
async def test_release_owner_only_touches_that_session(
    manager: TerminalManager, tmp_path: Path
) -> None:
    a1 = await manager.create("a", "sleep", ["100"], ENV, str(tmp_path))
    a2 = await manager.create("a", "sleep", ["100"], ENV, str(tmp_path))
    b1 = await manager.create("b", "sleep", ["100"], ENV, str(tmp_path))
    b_pid = manager.pids()[2]
    await manager.release_owner("a")
    for tid in (a1, a2):
        with pytest.raises(TerminalError):
            manager.output(tid)
    assert manager.pids() == [b_pid]
    assert "exitStatus" not in manager.output(b1)


@posix_commands
async def test_grandchild_holding_the_pipe_does_not_block_the_exit(
    manager: TerminalManager, tmp_path: Path
) -> None:
    tid = await manager.create("s1", "sh", ["-c", "sleep 100 & echo $!"], ENV, str(tmp_path))
    assert await manager.wait_for_exit(tid) == {"exitCode": 0, "signal": None}
    grandchild = int(manager.output(tid)["output"])
    assert running(grandchild)  # a background process outlives its command …
    await manager.release(tid)
    await eventually(lambda: not running(grandchild), "the grandchild to die")  # … not its release


@posix_commands
async def test_close_kills_grandchildren(recorder: Recorder, tmp_path: Path) -> None:
    manager = TerminalManager(recorder.on_output, recorder.on_exit)
    tid = await manager.create(
        "s1", "sh", ["-c", "sleep 100 & echo $!; sleep 100"], ENV, str(tmp_path)
    )
    other = await manager.create("s2", "sleep", ["100"], ENV, str(tmp_path))
    await eventually(lambda: recorder.text(tid).endswith("\n"), "the grandchild's pid")
    grandchild = int(recorder.text(tid))
    leaders = manager.pids()
    assert len(leaders) == 2
    assert all(running(p) for p in [*leaders, grandchild])
    await manager.close()
    await eventually(lambda: not any(running(p) for p in [*leaders, grandchild]), "all to die")
    assert manager.pids() == []
    with pytest.raises(TerminalError):
        manager.output(other)
    await manager.close()  # idempotent
    with pytest.raises(TerminalError, match="shut down"):
        await manager.create("s1", "echo", [], ENV, str(tmp_path))


@posix_commands
async def test_fifty_megabytes_with_a_one_megabyte_limit(tmp_path: Path) -> None:
    limit = 1 << 20
    total = 50 * (1 << 20)
    received = 0

    def count(owner: str, terminal_id: str, text: str) -> None:
        nonlocal received
        received += len(text.encode())

    manager = TerminalManager(count)
    tracemalloc.start()
    try:
        tid = await manager.create(
            "s1", "sh", ["-c", f"yes 0123456789abcdé | head -c {total}"], ENV, str(tmp_path), limit
        )
        assert await manager.wait_for_exit(tid) == {"exitCode": 0, "signal": None}
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        await manager.close()
    assert received >= total - 3  # every byte went through (a cut last char becomes U+FFFD)
    assert peak < 4 * limit, f"peak traced memory {peak} bytes"


@posix_commands
async def test_retained_output_after_a_big_run(tmp_path: Path) -> None:
    limit = 1 << 20
    manager = TerminalManager()
    try:
        tid = await manager.create(
            "s1",
            "sh",
            ["-c", "yes 0123456789abcdé | head -n 400000; echo END"],
            ENV,
            str(tmp_path),
            limit,
        )
        await manager.wait_for_exit(tid)
        out = manager.output(tid)
    finally:
        await manager.close()
    data = out["output"].encode()
    assert out["truncated"] is True
    assert limit - 3 <= len(data) <= limit
    assert out["output"].endswith("0123456789abcdé\nEND\n")


# OutputBuffer directly: the retention rule everything else relies on.


def reference_cap(data: bytes, limit: int) -> bytes:
    if len(data) <= limit:
        return data
    data = data[len(data) - limit :]
    while data and data[0] & 0xC0 == 0x80:
        data = data[1:]
    return data


@pytest.mark.parametrize("limit", [0, 1, 3, 4, 5, 7, 100, 5000])
def test_output_buffer_matches_a_single_cut_whatever_the_pieces(limit: int) -> None:
    pieces = ["a", "é" * 3, "😀", "x" * 5000, "€b", "", "y" * 10, "😀é" * 700, "z"]
    buf = OutputBuffer(limit)
    for piece in pieces:
        buf.append(piece)
    expected = reference_cap("".join(pieces).encode(), limit)
    assert buf.text().encode() == expected
    assert buf.nbytes == len(expected)
    assert buf.truncated
    assert buf.tail(6).encode() == reference_cap(expected, 6)


def test_output_buffer_many_tiny_appends() -> None:
    buf = OutputBuffer(1000)
    for i in range(100_000):
        buf.append("é" if i % 3 else "a")
    assert buf.nbytes <= 1000
    assert len(buf._chunks) < 10  # small appends are gathered, not one entry each
    assert buf.text().encode() == reference_cap(
        "".join("é" if i % 3 else "a" for i in range(100_000)).encode(), 1000
    )


def test_output_buffer_without_limit_keeps_everything() -> None:
    buf = OutputBuffer(None)
    buf.append("x" * 10_000)
    buf.append("é")
    assert buf.text() == "x" * 10_000 + "é"
    assert not buf.truncated
