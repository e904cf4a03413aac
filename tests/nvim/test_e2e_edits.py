"""End to end: agent edits in buffers, follow-along, review, cancel."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.nvim.conftest import Editor

pytestmark = pytest.mark.timeout(60)

NOTE = "# acp-lsp demo: reviewed in turn 1"


def test_agent_edit_lands_beside_unsaved_user_text_and_undo_restores(
    live: Editor, workspace: Path
) -> None:
    app = workspace / "src" / "app.py"
    live.cmd("edit src/app.py")
    live.cmd("normal! Go# user note")  # unsaved, one undo step of its own
    assert live.lua("return vim.bo.modified")
    live.lua("T.answer = 'Allow'")
    live.lua("T.new_session()")
    live.lua("T.send('please add a note')")
    live.wait("T.session().status == 'idle' and T.find_line('I added a review note') ~= nil")

    lines = live.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    assert lines[1] == NOTE
    assert lines[-1] == "# user note"
    # The agent read the unsaved text, and acp/saveDocument wrote the buffer it edited.
    assert "from your editor, unsaved changes included" in live.chat()
    assert app.read_text().splitlines() == lines
    assert "│     22  src/app.py" in live.chat()  # the check ran after the save

    live.cmd("undo")
    lines = live.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    assert NOTE not in lines
    assert lines[-1] == "# user note"
    live.cmd("undo")
    lines = live.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    assert "# user note" not in lines and NOTE not in lines


def test_follow_along_reuses_a_window_and_leaves_the_prompt_focused(live: Editor) -> None:
    live.cmd("edit src/util.py")
    live.lua("T.answer = 'Allow'")
    live.lua("T.new_session()")
    live.lua("local _, input = T.chat_windows() vim.api.nvim_set_current_win(input)")
    windows = live.lua("return #vim.api.nvim_tabpage_list_wins(0)")
    assert windows == 3  # util.py, chat, prompt
    live.lua("T.send('please look')")
    live.wait("T.session().status == 'idle'")
    # Locations: read src/app.py:1, then edit src/app.py:2 (1-based); the last one wins.
    live.wait("T.follow() and T.follow().name:match('src/app.py$') and T.follow().row == 2")
    assert live.lua("return #vim.api.nvim_tabpage_list_wins(0)") == 3
    assert live.lua(
        "local _, input = T.chat_windows() return vim.api.nvim_get_current_win() == input"
    )
    assert live.lua("return vim.b.acp_prompt") is True


def test_follow_along_never_moves_the_window_the_user_is_in(live: Editor) -> None:
    live.cmd("edit README.md")
    live.cmd("normal! 3G")
    live.lua("T.answer = 'Allow'")
    live.lua("T.new_session()")
    user_win = live.lua("return vim.api.nvim_get_current_win()")
    live.lua("T.send('please look')")
    live.wait("T.session().status == 'idle'")
    live.wait("T.follow() and T.follow().row == 2")
    assert live.lua("return vim.api.nvim_get_current_win()") == user_win
    assert live.lua("return vim.api.nvim_buf_get_name(0)").endswith("README.md")
    assert live.lua("return vim.api.nvim_win_get_cursor(0)") == [3, 0]
    # One split for following (README, follow, chat, prompt), however many locations came.
    assert live.lua("return #vim.api.nvim_tabpage_list_wins(0)") == 4
    assert live.lua("return T.follow().name").endswith("src/app.py")


def test_follow_off_stops_jumps(live: Editor) -> None:
    live.cmd("edit README.md")
    live.lua("T.answer = 'Allow'")
    live.lua("T.new_session()")
    live.cmd("Acp follow off")
    live.wait("T.session().follow == false")
    assert "follow: off" in live.lua("return T.winbar()")
    live.lua("T.send('please look')")
    live.wait("T.session().status == 'idle'")
    live.lua("vim.wait(400)")  # longer than the server's follow debounce: nothing may come
    assert live.lua("return require('acp_lsp.follow').win") is None
    assert live.lua("return #vim.api.nvim_tabpage_list_wins(0)") == 3


def test_review_reject_restores_the_file(live: Editor, workspace: Path) -> None:
    app = workspace / "src" / "app.py"
    original = app.read_text()
    live.lua("T.answer = 'Allow'")
    live.lua("T.new_session()")
    live.lua("T.send('please edit')")
    live.wait("T.session().status == 'idle' and T.find_line('I added a review note') ~= nil")
    assert NOTE in app.read_text()
    assert NOTE in live.lua("return T.buf_lines(...)", str(app))

    # Cursor on the edit tool call in the chat, then :Acp review reject.
    live.lua(
        "local chat = T.chat_windows() vim.api.nvim_set_current_win(chat) "
        "vim.api.nvim_win_set_cursor(chat, { T.find_line('Edit src/app.py'), 0 })"
    )
    live.cmd("Acp review reject")
    live.wait("T.find_line('── review reject: src/app.py rejected ──') ~= nil")
    live.wait("not vim.tbl_contains(T.buf_lines(a[1]), a[2])", str(app), NOTE)
    assert app.read_text() == original
    live.wait("T.find_line('review: rejected') ~= nil")  # the tool call's review state
    assert "┌ src/app.py · rejected" in live.chat()


def test_review_reject_all_from_a_file_buffer(live: Editor, workspace: Path) -> None:
    app = workspace / "src" / "app.py"
    original = app.read_text()
    live.lua("T.answer = 'Allow'")
    live.lua("T.new_session()")
    live.lua("T.send('please edit')")
    live.wait("T.session().status == 'idle' and T.find_line('I added a review note') ~= nil")
    live.cmd("edit src/app.py")
    live.cmd("Acp review reject all")
    live.wait("T.find_line('── review reject: src/app.py rejected ──') ~= nil")
    assert app.read_text() == original
    assert NOTE not in live.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")


def test_cancel_ends_the_turn_and_the_session_stays_usable(live: Editor) -> None:
    live.lua("T.answer = 'manual'")
    live.lua("T.new_session()")
    live.lua("T.send('go slow please')")
    live.wait("T.session().status == 'running' and T.find_line('Thinking') ~= nil")
    live.cmd("Acp cancel")
    live.wait("T.session().status == 'idle'")
    assert live.lua("return T.find_line('── cancelled ──')") is not None
    assert live.lua("return T.pending") is None  # the turn never reached its permission prompt

    live.lua("T.send('/help')")
    live.wait("T.session().status == 'idle' and T.find_line('I am the acp-lsp demo agent') ~= nil")


def test_cancel_answers_a_pending_permission(live: Editor, workspace: Path) -> None:
    live.lua("T.answer = 'manual'")
    live.lua("T.new_session()")
    live.lua("T.send('please edit')")
    live.wait("T.pending ~= nil")
    assert live.lua("return #require('acp_lsp.permissions').pending()") == 1
    live.cmd("Acp cancel")
    live.wait("T.session().status == 'idle'")
    assert live.lua("return #require('acp_lsp.permissions').pending()") == 0
    assert "awaiting permission" not in live.chat()
    # A late answer from the still-open picker changes nothing.
    live.lua("T.choose('Allow')")
    live.lua("vim.wait(200)")
    assert "reviewed in turn" not in (workspace / "src" / "app.py").read_text()
