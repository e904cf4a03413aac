"""The agent sandbox beyond Linux: the Seatbelt profile macOS runs an agent under (generated
here; only a Mac runs it), and Windows refusing ``sandbox = "workspace"`` with -32005."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_lsp import protocol as p
from acp_lsp.backends.acp_start import StartFailed, spawn
from acp_lsp.backends.agent_sandbox import AgentSandbox, SandboxUnavailable, describe
from acp_lsp.config import AgentConfig
from acp_lsp.platform import seatbelt
from acp_lsp.secret_store import SecretStore


def agent(**fields: Any) -> AgentConfig:
    return AgentConfig.model_validate({"command": "claude", "sandbox": "workspace", **fields})


def test_the_profile_denies_every_write_then_allows_the_roots() -> None:
    text = seatbelt.profile(["/Users/a/ws", "/Users/a/.claude", "/Users/a/ws"])
    lines = text.splitlines()
    assert lines[:4] == [
        "(version 1)",
        "(allow default)",
        "(deny file-write*)",
        "(allow file-write*",
    ]
    assert text.count('(subpath "/Users/a/ws")') == 1  # once, however often given
    assert '(subpath "/Users/a/.claude")' in text
    assert '(literal "/dev/null")' in text
    assert '(subpath "/")' not in text  # never the whole disk
    assert text.count("(") == text.count(")")


def test_quotes_and_backslashes_in_a_root_cannot_end_its_string() -> None:
    text = seatbelt.profile(['/Users/a/we"ird\\ws'])
    assert '(subpath "/Users/a/we\\"ird\\\\ws")' in text
    assert "(allow default)\n" in text  # nothing injected before the rules


def make_sandbox(tmp_path: Path, system: str) -> AgentSandbox:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    environ = {"HOME": str(tmp_path / "home"), "ACP_LSP_DATA_DIR": str(tmp_path / "data")}
    return AgentSandbox("claude", agent(), lambda: [str(ws)], environ, system=system)


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script stands in for sandbox-exec")
def test_macos_runs_the_agent_under_sandbox_exec_writing_only_its_roots(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "sandbox-exec"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    sandbox = make_sandbox(tmp_path, "darwin")
    env = {"PATH": str(fake.parent), "HOME": str(tmp_path / "home")}
    argv = asyncio.run(sandbox.wrap("claude", ["--acp"], env))
    assert argv[:2] == [str(fake), "-p"] and argv[3:] == ["claude", "--acp"]
    tmp = Path(env["TMPDIR"])
    assert tmp == (tmp_path / "data" / "agent-tmp" / "claude").resolve() and tmp.is_dir()
    writable = {line.strip()[10:-2] for line in argv[2].splitlines() if "(subpath" in line}
    assert writable == {
        str((tmp_path / "ws").resolve()),
        str((tmp_path / "home" / ".claude").resolve()),  # Claude's own data
        str(tmp),
    }
    # a terminal the agent opens runs under the same profile
    assert sandbox.confine("make", ["test"]) == (str(fake), [*argv[1:3], "make", "test"])


@pytest.mark.skipif(
    sys.platform == "darwin", reason="a Mac has /usr/bin/sandbox-exec, found off PATH too"
)
def test_macos_without_sandbox_exec_refuses_to_start(tmp_path: Path) -> None:
    sandbox = make_sandbox(tmp_path, "darwin")
    with pytest.raises(SandboxUnavailable, match="sandbox-exec"):
        asyncio.run(sandbox.wrap("claude", [], {"PATH": str(tmp_path)}))


def test_windows_refuses_the_sandbox_at_start_with_32005_naming_the_platform(
    tmp_path: Path,
) -> None:
    sandbox = make_sandbox(tmp_path, "win32")
    config = agent(command=sys.executable)
    with pytest.raises(StartFailed) as failed:
        asyncio.run(spawn("claude", config, {"PATH": ""}, SecretStore(), sandbox))
    error = failed.value.error
    assert error.code == p.AGENT_UNAVAILABLE == -32005
    assert "Windows" in error.message and 'sandbox = "none"' in error.message
    with pytest.raises(SandboxUnavailable, match="Windows"):
        describe(system="win32")
