"""Agents in real Emacs 28 + eglot 1.9 (Debian), with no acp-lsp elisp but the server entry.

tests/emacs/harness.el stands in for the user: it opens src/app.py, selects a function, picks
"Ask … to explain this" from eglot's code actions, answers the permission question the way a
person would ("Allow once"), and records what Emacs shows: the transcript buffer, the agent's
edit in the file's buffer, and that undo takes it back.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "acp_lsp" / "demo_workspace"
EMACS = shutil.which("emacs")


def run_emacs(tmp_path: Path, action: str) -> dict[str, object]:
    if EMACS is None:
        pytest.skip("emacs is not installed (scripts/install-emacs.sh: emacs-nox, elpa-eglot)")
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)  # a project root for eglot
    data = tmp_path / "data"
    out = tmp_path / "result.json"
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "ACP_LSP_SERVER": f"{sys.executable} -m acp_lsp",
        "ACP_LSP_DATA_DIR": str(data),
        "ACP_DEMO_DELAY": "0",
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "HARNESS_WORKSPACE": str(ws),
        "HARNESS_TRANSCRIPTS": str(data / "transcripts"),
        "HARNESS_ACTION": action,
        "HARNESS_OUT": str(out),
        "PYTHONPATH": str(ROOT),
    }
    (tmp_path / "home").mkdir()
    proc = subprocess.run(
        [EMACS, "--batch", "-q", "-l", str(Path(__file__).with_name("harness.el"))],
        env=env,
        capture_output=True,
        text=True,
        timeout=150,
        cwd=ws,
    )
    assert out.exists(), f"emacs wrote no result:\n{proc.stderr[-3000:]}"
    result: dict[str, object] = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in result, f"{result}\n{proc.stderr[-3000:]}"
    return result


def test_code_action_transcript_permission_edit_and_undo(tmp_path: Path) -> None:
    result = run_emacs(tmp_path, "Ask")
    questions = [str(q) for q in result["questions"]]  # type: ignore[union-attr]
    # eglot's own code action menu offered our action, and the permission came as a question
    assert any("Pick an action" in q for q in questions), questions
    assert any("Allow once" in q or "edit" in q.lower() for q in questions[1:]), questions
    transcript = str(result["transcript"])
    assert transcript.startswith("<!-- acp-lsp transcript")
    assert "## User" in transcript and "Explain this code." in transcript
    assert "## Agent" in transcript and "I added a review note" in transcript
    assert "_status: idle_" in transcript
    assert str(result["transcript_file"]).endswith(".md")
    # the agent's edit is in the buffer (unsaved, as LSP's applyEdit leaves it), undo takes it back
    assert result["edited"] != result["original"]
    assert result["undone"] == result["original"]
