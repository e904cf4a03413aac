"""`acp-lsp doctor` as a user runs it: a table, and an exit code that says whether to worry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(180)


def doctor(
    tmp_path: Path, workspace: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "ACP_LSP_DATA_DIR": str(tmp_path / "data"),
        "ACP_DEMO_DELAY": "0",
    }
    return subprocess.run(
        [sys.executable, "-m", "acp_lsp", "doctor", "--workspace", str(workspace), *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=150,
        env=env,
    )


def test_a_working_agent_passes(tmp_path: Path, workspace: Path) -> None:
    result = doctor(tmp_path, workspace, "--agent", "demo", "--timeout", "30")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("acp-lsp ") and lines[0].endswith(" doctor")
    demo = next(line for line in lines if "agent demo" in line)
    assert " ok " in demo and "Demo (built-in, offline)" in demo and "session started" in demo
    assert any("data dir" in line and "writable" in line for line in lines)
    assert "0 problem(s)" in result.stdout


def test_broken_config_and_agents_are_named(tmp_path: Path, workspace: Path) -> None:
    (workspace / "acp-lsp.toml").write_text(
        '[agents.ghost]\ncommand = "no-such-agent-binary"\n'
        '[agents.crash]\ncommand = "sh"\nargs = ["-c", "echo boom >&2; exit 3"]\n',
        encoding="utf-8",
    )
    (tmp_path / "xdg" / "acp-lsp").mkdir(parents=True)
    (tmp_path / "xdg" / "acp-lsp" / "config.toml").write_text("agents = [", encoding="utf-8")
    result = doctor(tmp_path, workspace, "--agent", "ghost", "--agent", "crash", "--timeout", "10")
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert "user config" in out and "FAIL" in out.split("user config")[1].splitlines()[0]
    ghost = next(line for line in out.splitlines() if "agent ghost" in line)
    assert "FAIL" in ghost and "'no-such-agent-binary' not found" in ghost
    crash = next(line for line in out.splitlines() if "agent crash" in line)
    assert "FAIL" in crash and "exit code 3" in crash and "boom" in crash  # its stderr too
    assert "3 problem(s)" in out


def test_agents_only_in_the_editor_settings_are_checked(tmp_path: Path, workspace: Path) -> None:
    """VS Code's Run Doctor passes its `acpLsp.agents` this way: an agent no file defines."""
    editor = {
        "agents": {
            "mine": {
                "command": sys.executable,
                "args": ["-m", "acp_lsp", "demo-agent"],
                "env": {"ACP_DEMO_DELAY": "0"},
            }
        },
        "defaultAgent": "mine",
    }
    args = ("--editor-settings", "-", "--agent", "mine", "--timeout", "30")
    result = doctor(tmp_path, workspace, *args, stdin=json.dumps(editor))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert any("editor settings" in line and "read (1 agents)" in line for line in lines)
    mine = next(line for line in lines if "agent mine" in line)
    assert " ok " in mine and "session started" in mine
    assert any("default 'mine'" in line for line in lines)


def test_unreadable_editor_settings_are_named(tmp_path: Path, workspace: Path) -> None:
    result = doctor(tmp_path, workspace, "--editor-settings", "-", "--no-agents", stdin="{oops")
    assert result.returncode == 1, result.stdout + result.stderr
    row = next(line for line in result.stdout.splitlines() if "editor settings" in line)
    assert "FAIL" in row and "not JSON" in row
