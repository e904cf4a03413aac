"""Agents in real Emacs 28 + eglot 1.9 (Debian), with no acp-lsp elisp but the server entry.

tests/emacs/harness.el stands in for the user: it opens src/app.py, selects a function, picks
"Ask … to explain this" from eglot's code actions, answers the permission question the way a
person would ("Allow once"), and records what Emacs shows: the transcript buffer, the agent's
edit in the file's buffer, and that undo takes it back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agents import scripted_command
from tests.emacs.emacs import init_options, run_emacs, workspace

pytestmark = pytest.mark.timeout(180)


def test_code_action_transcript_permission_edit_and_undo(tmp_path: Path) -> None:
    result = run_emacs(tmp_path, workspace(tmp_path), "Ask")
    questions = [str(q) for q in result["questions"]]
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


def scripted_agent_session(tmp_path: Path, via: str) -> dict[str, Any]:
    """acp.newSession with one agent, "scripted", the default: settings sent only ``via``."""
    argv = scripted_command({})
    settings = {
        "agents": {"scripted": {"command": argv[0], "args": argv[1:]}},
        "defaultAgent": "scripted",
    }
    env = {
        "HARNESS_FLOW": "session",
        "HARNESS_INIT_OPTIONS": init_options(settings),
        "HARNESS_SETTINGS_VIA": via,
    }
    return run_emacs(tmp_path, workspace(tmp_path), "", env)


@pytest.mark.parametrize("via", ["workspace", "dir-locals"])
def test_settings_in_eglot_workspace_configuration(tmp_path: Path, via: str) -> None:
    """``eglot-workspace-configuration`` with an ``:acp`` section works, set globally or in
    the project's .dir-locals.el (what editors/emacs/README.md shows)."""
    result = scripted_agent_session(tmp_path, via)
    assert "(scripted)" in result["transcript"].splitlines()[0]
    assert result["questions"] == []  # the variable is safe as a directory-local one


def test_settings_in_initialization_options(tmp_path: Path) -> None:
    result = scripted_agent_session(tmp_path, "initializationOptions")
    assert "(scripted)" in result["transcript"].splitlines()[0]
