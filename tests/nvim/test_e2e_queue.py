"""Queued prompts in real Neovim (DESIGN §2): a prompt sent while a turn runs waits its turn,
listed above the prompt input; `gq` picks one to remove (it never reaches the agent), edit, or
send now (the running turn is cancelled and it goes first)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.nvim.conftest import Editor
from tests.nvim.test_e2e_disk import answer, poll, press_in_chat, start

pytestmark = pytest.mark.timeout(90)

SCRIPT = {
    "on": {
        "session/prompt": [answer("Working on the first"), {"sleep": 30}, answer(" done.")],
        "session/prompt#2": [answer("The second, answered.")],
        "session/prompt#3": [answer("The third, answered.")],
    }
}


def queued_lines(editor: Editor) -> list[str]:
    lines: list[str] = editor.lua(
        "local ns = vim.api.nvim_create_namespace('acp_lsp.queue') "
        "local out = {} for _, m in ipairs(vim.api.nvim_buf_get_extmarks(T.view().input, ns, 0, -1, "
        "{ details = true })) do for _, l in ipairs(m[4].virt_lines or {}) do "
        "table.insert(out, l[1][1]) end end return out"
    )
    return lines


def test_queued_prompts_wait_then_one_is_removed_and_one_sent_now(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    start(editor, workspace, tmp_path, SCRIPT)
    editor.lua("T.new_session()")
    editor.lua("T.send('first: take your time')")
    editor.wait("T.find_line('Working on the first') ~= nil")
    editor.lua("T.send('second: after that')")
    editor.lua("T.send('third: and this')")
    editor.wait("#require('acp_lsp.queue').waiting(T.session().id) == 2")
    assert queued_lines(editor)[:2] == ["⏳ 1. second: after that", "⏳ 2. third: and this"]
    assert editor.lua("return T.find_line('second: after that')") is None  # not sent yet

    editor.lua("T.answer = 'manual'")
    press_in_chat(editor, "Working on the first", "gq")
    poll(editor, "T.pending ~= nil")
    editor.lua("T.choose('third: and this')")
    poll(editor, "T.pending ~= nil")
    editor.lua("T.choose('Remove')")
    poll(editor, "#require('acp_lsp.queue').waiting(T.session().id) == 1")

    press_in_chat(editor, "Working on the first", "gq")
    poll(editor, "T.pending ~= nil")
    editor.lua("T.choose('second: after that')")
    poll(editor, "T.pending ~= nil")
    editor.lua("T.choose('Send now')")
    editor.wait("T.find_line('The second, answered.') ~= nil and T.session().status == 'idle'")
    chat = editor.chat()
    assert " done." not in chat  # the first turn was cancelled
    assert "third: and this" not in chat and "The third, answered." not in chat
    assert chat.index("Working on the first") < chat.index("second: after that")
    assert queued_lines(editor) == []
