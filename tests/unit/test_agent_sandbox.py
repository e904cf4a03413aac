"""The agent sandbox (``sandbox = "workspace"``): the bubblewrap command built for an agent,
which roots a process is started with and when a later session needs a restart, the reasons
given where bubblewrap cannot run, and the confinement itself with the real bwrap (as this
user, and as an unprivileged one through user namespaces)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_lsp import protocol as p
from acp_lsp.backends.agent_sandbox import (
    AgentSandbox,
    SandboxUnavailable,
    bwrap_argv,
    known_agent,
    probe,
)
from acp_lsp.backends.base import BackendError
from acp_lsp.config import AgentConfig, load_settings
from acp_lsp.doctor import FAIL, OK, check_sandbox

BWRAP = shutil.which("bwrap")


def bwrap_works() -> bool:
    try:
        probe("bwrap")
    except SandboxUnavailable:
        return False
    return True


needs_bwrap = pytest.mark.skipif(not bwrap_works(), reason="bubblewrap cannot run here")


def agent(**fields: Any) -> AgentConfig:
    return AgentConfig.model_validate({"command": "agent-bin", "sandbox": "workspace", **fields})


def binds(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, word in enumerate(argv) if word == "--bind"]


# -- the command line -----------------------------------------------------------------------


def test_the_tree_is_read_only_and_writable_paths_are_bound_over_it() -> None:
    argv = bwrap_argv(
        "/usr/bin/bwrap", ["/w/ws/sub", "/w/ws", "/h/.claude", "/w/ws"], "/d/tmp", ["agent", "-x"]
    )
    assert argv[:7] == [
        "/usr/bin/bwrap",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
    ]
    # each path once, bound at itself, a parent before what lies inside it
    assert binds(argv) == ["/h/.claude", "/w/ws", "/w/ws/sub"]
    assert argv[argv.index("/w/ws/sub") + 1] == "/w/ws/sub"
    assert argv[-5:] == ["--tmpfs", "/d/tmp", "--", "agent", "-x"]
    assert "--unshare-net" not in argv and "--unshare-all" not in argv  # the model API is needed


@pytest.mark.parametrize(
    "name, command, args, expected",
    [
        ("claude", "npx", ["-y", "@agentclientprotocol/claude-agent-acp@0.101.0"], "claude"),
        ("mine", "/x/node_modules/.bin/claude-agent-acp", [], "claude"),
        ("mine", "/x/bin/codex-acp", [], "codex"),
        ("gemini", "gemini", ["--acp"], "gemini"),
        ("mine", "my-agent", [], None),
    ],
)
def test_known_agents_are_recognised(
    name: str, command: str, args: list[str], expected: str | None
) -> None:
    assert known_agent(name, agent(command=command, args=args)) == expected


async def wrap(
    tmp_path: Path, config: AgentConfig, folders: list[str], env: dict[str, str], name: str = "a"
) -> tuple[AgentSandbox, list[str]]:
    server = {"HOME": str(tmp_path / "home"), "ACP_LSP_DATA_DIR": str(tmp_path / "data")}
    sandbox = AgentSandbox(name, config, lambda: folders, server)
    return sandbox, await sandbox.wrap(config.command or "", config.args, env)


@needs_bwrap
async def test_claude_gets_its_data_dir_the_roots_and_a_private_tmp(tmp_path: Path) -> None:
    home, ws, extra = tmp_path / "home", tmp_path / "ws", tmp_path / "extra"
    for d in (home, ws, extra):
        d.mkdir()
    config = agent(
        command="npx",
        args=["-y", "@agentclientprotocol/claude-agent-acp@0.101.0"],
        sandboxWritable=["~/.config/claude-extra", str(extra), "/no/such/place"],
    )
    (home / ".config" / "claude-extra").mkdir(parents=True)
    env = {"HOME": str(home), "PATH": os.environ["PATH"]}
    sandbox, argv = await wrap(tmp_path, config, [str(ws)], env, name="claude")
    tmp = str(tmp_path / "data" / "agent-tmp")
    assert set(binds(argv)) == {
        str(ws),
        str(home / ".claude"),  # created for a first run
        str(home / ".npm"),  # npx's cache
        str(home / ".config" / "claude-extra"),
        str(extra),
    }  # the missing path is left out (bwrap cannot bind it), the HOME itself is not writable
    assert (home / ".claude").is_dir() and not Path("/no/such/place").exists()
    assert argv[argv.index("--tmpfs") + 1] == tmp and env["TMPDIR"] == tmp
    assert argv[-3:] == ["npx", "-y", "@agentclientprotocol/claude-agent-acp@0.101.0"]
    assert sandbox.started == [str(ws)]


@needs_bwrap
async def test_an_agent_with_a_home_of_its_own_may_write_all_of_it(tmp_path: Path) -> None:
    own = tmp_path / "agent-home"
    own.mkdir()
    env = {"HOME": str(own), "PATH": os.environ["PATH"], "CODEX_HOME": str(tmp_path / "codex")}
    _, argv = await wrap(tmp_path, agent(command="codex-acp"), [], env)
    assert set(binds(argv)) == {str(own), str(own / ".codex"), str(tmp_path / "codex")}
    # a HOME of "/" (some service users have one) opens nothing more
    _, argv = await wrap(tmp_path, agent(sandboxWritable=["/"]), [], {**env, "HOME": "/"})
    assert "/" not in binds(argv)


# -- roots known later ------------------------------------------------------------------------


def test_a_session_outside_the_started_roots_restarts_an_idle_agent_and_is_refused_by_a_busy_one(
    tmp_path: Path,
) -> None:
    ws, other, third = tmp_path / "ws", tmp_path / "other", tmp_path / "third"
    for d in (ws, other, third):
        d.mkdir()
    (ws / "sub").mkdir()
    sandbox = AgentSandbox("claude", agent(), lambda: [str(ws)], {})
    # before the first start: noted, nothing to restart
    assert sandbox.admit([str(other)], running=False, busy=False) is False
    assert sandbox.roots() == [str(ws), str(other)]
    sandbox.started = [str(ws)]  # a process started before the other folder was asked for
    assert sandbox.admit([str(ws / "sub")], running=True, busy=True) is False
    with pytest.raises(BackendError) as refused:
        sandbox.admit([str(ws), str(third)], running=True, busy=True)
    assert refused.value.code == p.AGENT_UNAVAILABLE
    assert str(third) in refused.value.message
    assert "acp/restartAgent" in refused.value.message
    assert refused.value.data["writable"] == [str(ws)]
    assert sandbox.admit([str(other)], running=True, busy=False) is True  # restart first
    # a refused folder is remembered: the restart the message suggests makes it writable
    assert sandbox.roots() == [str(ws), str(other), str(third)]


@pytest.mark.skipif(
    sys.platform == "win32",
    reason="'/' is the whole tree on POSIX only (Windows has no agent sandbox)",
)
def test_the_whole_tree_is_never_a_writable_root(tmp_path: Path) -> None:
    sandbox = AgentSandbox("a", agent(), lambda: ["/", str(tmp_path)], {})
    with pytest.raises(BackendError) as refused:
        sandbox.admit(["/"], running=False, busy=False)
    assert refused.value.code == p.INVALID_PARAMS
    assert sandbox.roots() == [str(tmp_path)]  # a workspace folder "/" is left out


# -- where bubblewrap cannot run ----------------------------------------------------------------


def fake_bwrap(tmp_path: Path, script: str) -> str:
    path = tmp_path / "bwrap"
    path.write_text("#!/bin/sh\n" + script, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.skipif(sys.platform == "win32", reason="a #!/bin/sh script stands in for bwrap")
def test_the_reason_bubblewrap_cannot_run_is_given(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable, match=r"'bwrap'\) not found on PATH"):
        probe("bwrap", path=str(tmp_path))
    with pytest.raises(SandboxUnavailable, match=r"'/no/bwrap'\) not found: install"):
        probe("/no/bwrap")
    denied = fake_bwrap(
        tmp_path,
        'case "$1" in --version) echo "bubblewrap 0.8.0";; *) '
        'echo "bwrap: No permissions to creating new namespace" >&2; exit 1;; esac\n',
    )
    with pytest.raises(SandboxUnavailable) as caught:
        probe(denied)
    assert "cannot build a sandbox: bwrap: No permissions to creating new namespace" in str(
        caught.value
    )


@needs_bwrap
async def test_a_temp_directory_that_cannot_be_made_is_a_clear_reason(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("a file where the data dir should be", encoding="utf-8")
    with pytest.raises(SandboxUnavailable, match="cannot make its private temp directory"):
        await wrap(tmp_path, agent(), [], {"HOME": str(tmp_path), "PATH": os.environ["PATH"]})


@pytest.mark.skipif(
    sys.platform != "linux",
    reason="the doctor's check of bubblewrap (Seatbelt on macOS, none on Windows: "
    "tests/unit/test_platform_sandbox.py)",
)
def test_doctor_says_whether_the_sandbox_can_run(tmp_path: Path) -> None:
    missing = {"agents": {"demo": {"sandbox": "workspace", "bwrap": str(tmp_path / "none")}}}
    [row] = check_sandbox([missing])
    assert row.state == FAIL and "not found" in row.detail and "demo cannot start" in row.detail
    unused = {"agents": {"demo": {"bwrap": str(tmp_path / "none")}}}
    rows = check_sandbox([unused])  # nobody asks for it: said, not a failure
    assert all(r.state == OK for r in rows)
    if bwrap_works():
        [row] = check_sandbox([{"agents": {"demo": {"sandbox": "workspace"}}}])
        assert row.state == OK and row.detail.startswith("bubblewrap ")
        expected = "running as root" if os.geteuid() == 0 else "user namespaces ok"
        assert expected in row.detail and "used by demo" in row.detail


@pytest.mark.parametrize(
    "fields, problem",
    [
        ({"command": "x", "sandbox": "yes"}, "agents.x: sandbox"),
        ({"url": "http://h", "sandbox": "workspace"}, "only an ACP agent"),
        ({"command": "x", "sandboxWritable": ["rel/dir"]}, "must be absolute or start with '~/'"),
    ],
)
def test_bad_sandbox_settings_are_named(fields: dict[str, Any], problem: str) -> None:
    settings, problems = load_settings([{"agents": {"x": fields}}], environ={})
    assert "x" not in settings.agents
    assert any(problem in p for p in problems), problems


# -- the confinement, with the real bubblewrap ---------------------------------------------------


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory another user can reach (pytest's tmp_path is private to this one)."""
    root = Path(tempfile.mkdtemp(prefix="acp-lsp-sandbox-"))
    root.chmod(0o777)
    for name in ("ws", "outside", "tmp"):
        (root / name).mkdir()
        (root / name).chmod(0o777)
    yield root
    shutil.rmtree(root, ignore_errors=True)


SCRIPT = (
    'echo in > "$1/ws/in.txt"; echo "in: $?"; '
    'echo out > "$1/outside/out.txt"; echo "out: $?"; '
    'echo t > "$TMPDIR/t.txt" && echo "tmp: $(cat "$TMPDIR/t.txt")"'
)


def run_confined(root: Path, prefix: list[str]) -> subprocess.CompletedProcess[str]:
    assert BWRAP is not None
    argv = bwrap_argv(BWRAP, [str(root / "ws")], str(root / "tmp"), ["sh", "-c", SCRIPT, "sh"])
    return subprocess.run(
        [*prefix, *argv, str(root)],
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": os.environ["PATH"], "TMPDIR": str(root / "tmp")},
    )


def check_confined(root: Path, result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stderr
    assert "in: 0" in result.stdout and "tmp: t" in result.stdout
    assert "out: 0" not in result.stdout and "Read-only file system" in result.stderr
    assert (root / "ws" / "in.txt").read_text() == "in\n"
    assert not (root / "outside" / "out.txt").exists()
    assert not (root / "tmp" / "t.txt").exists()  # the temp dir was private (a tmpfs)


@needs_bwrap
def test_bubblewrap_confines_writes_as_this_user(shared_dir: Path) -> None:
    check_confined(shared_dir, run_confined(shared_dir, []))


@needs_bwrap
@pytest.mark.skipif(
    sys.platform != "linux" or os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to run as an unprivileged user",
)
def test_bubblewrap_confines_writes_as_an_unprivileged_user(shared_dir: Path) -> None:
    """As a non-root user bwrap needs a user namespace: this is the path most users take."""
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    check = subprocess.run(
        [*nobody, BWRAP or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "true"],
        capture_output=True,
        text=True,
    )
    if check.returncode != 0:
        pytest.skip(f"no user namespaces for unprivileged users here: {check.stderr.strip()}")
    check_confined(shared_dir, run_confined(shared_dir, nobody))
