"""`acp-lsp demo` (the README's first command) on the built-in agent, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(120)


def test_demo_runs_a_whole_session_in_a_temporary_workspace(tmp_path: object) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "acp_lsp", "demo", "--yes"],
        capture_output=True,
        encoding="utf-8",
        timeout=110,
        stdin=subprocess.DEVNULL,
        # UTF-8 as in a terminal: a pipe on Windows is the ANSI code page, which has no ✎
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "a temporary copy; your files are not touched" in out
    # the agent read the buffer's unsaved first line, not the disk
    assert "TODO (unsaved in the editor)" in out
    assert "? permission: Edit src/app.py" in out and "→ Allow (--yes)" in out
    assert "✎ edit applied to your buffer src/app.py" in out
    assert "↪ follow-along: src/app.py:" in out
    assert "└ exited: {'exitCode': 0" in out
    assert "turn ended: end_turn" in out
    assert "src/app.py: rejected" in out  # the review revert
    assert out.index("turn ended") < out.index("src/app.py: rejected")
