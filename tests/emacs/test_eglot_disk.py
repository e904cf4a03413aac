"""Claude Code changes on disk a file open in Emacs (eglot 1.9, plain LSP), with and without
editors/emacs/acp-lsp.el.

claude-agent-acp (its pinned install, tests/support/production.py) runs against the scripted
model server in Manual mode and edits src/app.py itself, on disk, with its built-in Edit tool
("Hello" -> "Hello again": an insertion, so a change applied twice shows). The user has the file open in Emacs — with an unsaved line at its end,
or clean — sets the mode with ``M-: (eglot-execute-command … "acp.setMode" ["default"])``,
starts the turn with eglot's code action "Ask Claude Code to improve this" on ``greet`` and
answers Claude's permission question "Yes". acp-lsp sees the change on disk and sends eglot a
versioned ``workspace/applyEdit`` that brings the buffer to the new disk text with the user's
line merged, then ``acp/documentsSynced``. Then the user saves and undoes. harness.el records
every question Emacs asked (answered as a person would) and what each buffer and file holds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.emacs.emacs import ROOT, init_options, run_emacs, workspace
from tests.model_server import ModelServer, Say, Script, Tool
from tests.support.production import claude_config, server_env

pytestmark = pytest.mark.timeout(420)

USER_LINE = "# my unsaved note"
DONE = "I updated the greeting in src/app.py."
ORIGINAL = (ROOT / "acp_lsp" / "demo" / "workspace" / "src" / "app.py").read_text(encoding="utf-8")
AGAIN = ORIGINAL.replace("Hello", "Hello again")
MENU = "[eglot] Pick an action"
PERMISSION = "Agent wants to run: Edit src/app.py"
CONFIRM = "[eglot] Server wants to edit:"
DISCARD = "File app.py changed on disk.  Discard your edits? "
REREAD = "File app.py changed on disk.  Reread from disk? "
SAVE_ANYWAY = "app.py has changed since visited or saved.  Save anyway? "
ELISP = ROOT / "editors" / "emacs"
YES_TO_ALL = "\\`\\'"  # HARNESS_NO matching only "": yes to every question


def claude_turn(
    tmp_path: Path, model: ModelServer, *, shell: bool = False, **env: str
) -> dict[str, Any]:
    """The whole scene in Emacs (harness.el, HARNESS_FLOW=disk); what it recorded. Claude
    reads src/app.py and edits it with its Edit tool, or (``shell``) runs ``sed -i``."""
    ws = workspace(tmp_path)
    app = ws / "src" / "app.py"
    change = (
        Tool("shell", {"command": f"sed -i 's/Hello/Hello again/' {app}"})
        if shell
        else Tool("edit", {"path": str(app), "old": "Hello", "new": "Hello again"})
    )
    model.script = Script(
        "read-edit", [[Tool("read", {"path": str(app)}), change, Say(DONE, chunks=3)]]
    )
    home = tmp_path / "home"
    home.mkdir()
    claude = claude_config(model, home)  # skips when the agent is not installed
    settings = {"agents": {"claude": claude}, "defaultAgent": "claude"}
    result = run_emacs(
        tmp_path,
        ws,
        "Ask Claude Code to improve",
        {
            **server_env(home),
            "HARNESS_FLOW": "disk",
            "HARNESS_INIT_OPTIONS": init_options(settings),
            "HARNESS_MODE": "default",  # Manual: Claude asks before the edit
            "HARNESS_DONE": DONE,
            **env,
        },
        timeout=360,
    )
    assert DONE in result["transcript"]
    assert model.unknown_requests() == [], model.unknown_requests()
    return result


def app_edits(result: dict[str, Any]) -> list[list[Any]]:
    """What eglot did with each edit of src/app.py: [file, version, had, outcome]."""
    return [e for e in result["edits"] if str(e[0]).endswith("/src/app.py")]


def asked(result: dict[str, Any], key: str = "questions") -> list[str]:
    """The questions, eglot's "Server wants to edit" confirmations left out."""
    return [q for q in result[key] if not q.startswith(CONFIRM)]


# -- eglot 1.9 alone ---------------------------------------------------------------------------


def test_plain_eglot_dirty_buffer_asks_merges_and_saving_asks(
    tmp_path: Path, model: ModelServer
) -> None:
    result = claude_turn(tmp_path, model, HARNESS_USER_LINE=USER_LINE)
    # the edit arrives; eglot opens the file with find-file-noselect, which sees the disk
    # changed and asks; a person keeps their edits ("no") and the versioned edit is applied
    menu, permission, discard = asked(result, "turn_questions")
    assert menu.startswith(MENU) and PERMISSION in permission
    assert discard == DISCARD
    assert result["edited"] == AGAIN + USER_LINE + "\n"  # the agent's change and the line
    assert result["disk"] == AGAIN
    assert [e[1:] for e in app_edits(result)] == [[2, 2, "applied"]]  # once, at its version
    assert result["modified"] is True and result["in_sync"] is False
    # eglot 1.9's default (eglot-confirm-server-initiated-edits 'confirm) asks before every
    # server edit: each transcript update and the sync of src/app.py
    confirms = [q for q in result["turn_questions"] if q.startswith(CONFIRM)]
    assert len(confirms) == len(result["edits"]) >= 2
    # saving asks again (the buffer's file time is the one before the agent's write)
    assert result["save_questions"] == [SAVE_ANYWAY]
    assert result["saved"] == AGAIN + USER_LINE + "\n"
    assert result["saved_modified"] is False
    # one undo takes the agent's change back, the user's line stays
    assert result["undo_error"] is None
    assert result["undone"] == ORIGINAL + USER_LINE + "\n"
    assert not any("really edit the buffer" in q for q in result["questions"])


def test_plain_eglot_dirty_buffer_discard_yes_loses_the_line_and_the_change_lands_once(
    tmp_path: Path, model: ModelServer
) -> None:
    result = claude_turn(tmp_path, model, HARNESS_USER_LINE=USER_LINE, HARNESS_NO=YES_TO_ALL)
    assert asked(result, "turn_questions")[-1] == DISCARD  # answered yes: Emacs reloads
    # the reload reopened the document at version 0: the edit made for version 2 is refused
    # as stale, and the server, re-reading the buffer, finds it equal to the disk
    [(version, had, outcome)] = [e[1:] for e in app_edits(result)]
    assert (version, had) == (2, 0)
    assert "Edits on ‘app.py’ require version 2, you have 0" in outcome
    assert result["edited"] == result["disk"] == AGAIN  # the agent's change, once; no line
    assert result["modified"] is False and result["in_sync"] is True
    assert result["save_questions"] == []


def test_plain_eglot_clean_buffer_reread_no_then_saving_asks(
    tmp_path: Path, model: ModelServer
) -> None:
    result = claude_turn(tmp_path, model, HARNESS_NO="Reread from disk")
    assert asked(result, "turn_questions")[-1] == REREAD  # answered no
    assert [e[1:] for e in app_edits(result)] == [[0, 0, "applied"]]
    assert result["edited"] == result["disk"] == AGAIN
    # the buffer equals its file, but Emacs counts it modified and its file time is old
    assert result["modified"] is True and result["in_sync"] is False
    assert result["save_questions"] == [SAVE_ANYWAY]
    assert result["saved"] == AGAIN


def test_plain_eglot_clean_buffer_reread_then_the_edit_not_applied_twice(
    tmp_path: Path, model: ModelServer
) -> None:
    result = claude_turn(tmp_path, model)
    menu, permission, reread = asked(result, "turn_questions")
    assert menu.startswith(MENU) and PERMISSION in permission
    assert reread == REREAD  # a person says yes: nothing of theirs to keep
    assert result["edited"] == result["disk"] == AGAIN
    assert result["modified"] is False and result["in_sync"] is True
    assert result["save_questions"] == []


# -- with editors/emacs/acp-lsp.el (and eglot-confirm-server-initiated-edits nil) --------------


def three_questions(result: dict[str, Any]) -> tuple[str, str, str]:
    """The code-action menu, eglot's question before it opens the transcript, and the
    permission; the last two come in either order (the transcript opens while the agent
    asks)."""
    questions: list[str] = list(result["questions"])
    assert len(questions) == 3, questions
    menu = questions.pop(0)
    transcript = next(q for q in questions if q.startswith(CONFIRM))
    questions.remove(transcript)
    return menu, transcript, questions[0]


def test_with_acp_lsp_el_dirty_buffer_merged_and_saved_without_a_question(
    tmp_path: Path, model: ModelServer
) -> None:
    result = claude_turn(
        tmp_path,
        model,
        HARNESS_USER_LINE=USER_LINE,
        HARNESS_ELISP=str(ELISP),
        HARNESS_NO_CONFIRM="1",
    )
    # the code action menu, eglot's question before it opens the transcript (a file not
    # visited yet) and Claude's permission: nothing else, before or after
    menu, transcript, permission = three_questions(result)
    assert menu.startswith(MENU) and PERMISSION in permission
    assert transcript.startswith(CONFIRM) and "/transcripts/" in transcript
    assert result["edited"] == AGAIN + USER_LINE + "\n"
    assert result["disk"] == AGAIN
    assert [e[1:] for e in app_edits(result)] == [[2, 2, "applied"]]
    # acp/documentsSynced: the buffer took the agent's write as read, and keeps the user's
    # line unsaved
    assert result["modified"] is True and result["in_sync"] is True
    assert result["save_questions"] == []
    assert result["saved"] == AGAIN + USER_LINE + "\n"
    assert result["undo_error"] is None
    assert result["undone"] == ORIGINAL + USER_LINE + "\n"


def test_with_acp_lsp_el_clean_buffer_follows_the_disk_unmodified(
    tmp_path: Path, model: ModelServer
) -> None:
    result = claude_turn(tmp_path, model, HARNESS_ELISP=str(ELISP), HARNESS_NO_CONFIRM="1")
    menu, transcript, permission = three_questions(result)
    assert menu.startswith(MENU) and PERMISSION in permission
    assert transcript.startswith(CONFIRM) and "/transcripts/" in transcript
    assert [e[1:] for e in app_edits(result)] == [[0, 0, "applied"]]
    assert result["edited"] == result["disk"] == AGAIN
    # matchesDisk: the buffer equals its file, so it is not modified and saving has nothing to do
    assert result["modified"] is False and result["in_sync"] is True
    assert result["save_questions"] == []
    assert result["saved"] == AGAIN
    assert result["undo_error"] is None
    assert result["undone"] == ORIGINAL  # undo still takes the agent's change back


def test_with_acp_lsp_el_a_conflict_keeps_the_buffer_and_saving_asks(
    tmp_path: Path, model: ModelServer
) -> None:
    # the user changed the very text the agent changes: "Hello" -> "Hi", unsaved
    mine = ORIGINAL.replace("Hello", "Hi")
    result = claude_turn(
        tmp_path,
        model,
        HARNESS_USER_FROM="Hello",
        HARNESS_USER_TO="Hi",
        HARNESS_ELISP=str(ELISP),
        HARNESS_NO_CONFIRM="1",
    )
    assert app_edits(result) == []  # no edit: the buffer stays as the user left it
    assert result["edited"] == mine and result["disk"] == AGAIN
    assert result["modified"] is True
    # the user is told, by the server and by acp-lsp.el
    assert "changed app.py on disk where you have unsaved edits (lines 9)" in result["stderr"]
    assert "acp-lsp: app.py changed on disk where you have unsaved edits" in result["stderr"]
    # saving would overwrite the agent's change: Emacs still asks, as it should
    assert result["in_sync"] is False
    assert result["save_questions"] == [SAVE_ANYWAY]
    assert result["saved"] == mine


def test_with_acp_lsp_el_a_shell_command_change_is_merged_too(
    tmp_path: Path, model: ModelServer
) -> None:
    result = claude_turn(
        tmp_path,
        model,
        shell=True,
        HARNESS_USER_LINE=USER_LINE,
        HARNESS_ELISP=str(ELISP),
        HARNESS_NO_CONFIRM="1",
    )
    menu, transcript, permission = three_questions(result)
    assert menu.startswith(MENU) and transcript.startswith(CONFIRM)
    assert "Agent wants to run: " in permission and "sed -i" in permission
    assert result["edited"] == AGAIN + USER_LINE + "\n" and result["disk"] == AGAIN
    assert [e[1:] for e in app_edits(result)] == [[2, 2, "applied"]]
    assert result["in_sync"] is True and result["save_questions"] == []
    assert result["saved"] == AGAIN + USER_LINE + "\n"
    assert result["undone"] == ORIGINAL + USER_LINE + "\n"
