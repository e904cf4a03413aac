"""Run tests/emacs/harness.el in real Emacs (batch) against the real acp-lsp server.

The workspace is a copy of the demo project (a git repository, so eglot finds a project
root); Emacs, and the server it starts, get an empty HOME and their own data directory.
``env`` adds to or overrides the harness's environment (``HARNESS_FLOW``,
``HARNESS_INIT_OPTIONS``, ``HARNESS_ELISP``, …: see harness.el).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "acp_lsp" / "demo" / "workspace"
HARNESS = Path(__file__).with_name("harness.el")
EMACS = shutil.which("emacs")


def workspace(tmp_path: Path) -> Path:
    """A copy of the demo project, a git repository (eglot's project root)."""
    if EMACS is None:
        pytest.skip("emacs is not installed (scripts/install-emacs.sh: emacs-nox, elpa-eglot)")
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


def run_emacs(
    tmp_path: Path,
    ws: Path,
    action: str,
    env: dict[str, str] | None = None,
    *,
    timeout: float = 150,
) -> dict[str, Any]:
    """Emacs runs the harness on ``ws``; returns what it recorded (fails on its error)."""
    assert EMACS is not None
    data = Path(env["ACP_LSP_DATA_DIR"]) if env and "ACP_LSP_DATA_DIR" in env else tmp_path / "data"
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    out = tmp_path / "result.json"
    full = {
        **os.environ,
        "HOME": str(home),
        "ACP_LSP_SERVER": f"{sys.executable} -m acp_lsp",
        "ACP_LSP_DATA_DIR": str(data),
        "ACP_DEMO_DELAY": "0",
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "HARNESS_WORKSPACE": str(ws),
        "HARNESS_TRANSCRIPTS": str(data / "transcripts"),
        "HARNESS_ACTION": action,
        "HARNESS_OUT": str(out),
        "PYTHONPATH": str(ROOT),
        **(env or {}),
    }
    proc = subprocess.run(
        [EMACS, "--batch", "-q", "-l", str(HARNESS)],
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ws,
    )
    assert out.exists(), f"emacs wrote no result:\n{proc.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in result, f"{json.dumps(result, indent=1)}\n{proc.stderr[-3000:]}"
    result["stderr"] = proc.stderr
    return result


def init_options(options: dict[str, Any]) -> str:
    """``initializationOptions`` for the harness's server entry (HARNESS_INIT_OPTIONS)."""
    return json.dumps(options)
