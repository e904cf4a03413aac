"""Long turns in the chat (issue 15 §4): the chat's cursor follows the end of a streamed answer
(to the end of a very long line, so its last text is what shows) unless the user moved it; a line
too long for cheap wrapping switches the chat to long-line mode; terminal output reaches its tool
call among many. Real Neovim, updates fed to the plugin's handlers."""

from __future__ import annotations

import json

import pytest

from tests.nvim.conftest import Editor
from tests.nvim.test_plugin import SNAPSHOT, chunk, load, update

pytestmark = pytest.mark.timeout(60)

EMPTY = {**SNAPSHOT, "messages": [], "toolCalls": [], "timeline": []}
CURSOR = "return vim.api.nvim_win_get_cursor(T.chat_win())"


def test_a_long_line_is_followed_to_its_end_and_drops_linebreak_and_highlighting(
    editor: Editor,
) -> None:
    load(editor, EMPTY)
    win = editor.lua("return T.chat_win()")
    assert editor.lua("return vim.wo[...].linebreak", win) is True
    update(editor, 4, chunk("agent_message_chunk", "Short first.\n"))
    piece = "0123456789" * 100
    for seq in range(5, 35):  # 30 updates of 1,000 characters: one 30,000-character line
        update(editor, seq, chunk("agent_message_chunk", piece))
    editor.poll(f"vim.api.nvim_win_get_cursor(T.chat_win())[2] >= {30 * 1000 - 1}")
    row, _ = editor.lua(CURSOR)
    assert row == editor.lua("return #T.chat_lines()")
    assert editor.chat() == "Short first.\n" + piece * 30
    assert editor.lua("return vim.wo[...].linebreak", win) is False
    assert editor.lua("return vim.treesitter.highlighter.active[T.view().buf] == nil") is True


def test_the_chat_follows_only_while_the_cursor_is_at_the_end(editor: Editor) -> None:
    load(editor, EMPTY)
    update(editor, 4, chunk("agent_message_chunk", "one\ntwo\nthree\n"))
    editor.poll("vim.api.nvim_win_get_cursor(T.chat_win())[1] == 4")
    editor.lua("vim.api.nvim_win_set_cursor(T.chat_win(), { 1, 0 })")  # the user reads above
    update(editor, 5, chunk("agent_message_chunk", "four\nfive\n"))
    editor.lua("vim.wait(50)")
    assert editor.lua(CURSOR) == [1, 0]
    assert editor.lua("return vim.wo[T.chat_win()].linebreak") is True  # short lines: kept


def test_terminal_output_reaches_its_tool_call_among_many(editor: Editor) -> None:
    load(editor, EMPTY)
    calls: list[dict[str, object]] = []
    for i in range(300):
        content = [{"type": "terminal", "terminalId": f"term{i}"}] if i in (7, 250) else []
        calls.append({"sessionUpdate": "tool_call", "toolCallId": f"t{i}", "title": f"Run {i}",
                      "kind": "execute", "status": "in_progress", "content": content})  # fmt: skip
    update(editor, 4, *calls)
    for term, data in (("term7", "seven\n"), ("term250", "two-fifty\n"), ("term7", "again\n")):
        editor.lua(
            "require('acp_lsp.handlers').terminal_output(nil, vim.json.decode(...))",
            json.dumps({"sessionId": "s1", "terminalId": term, "data": data}),
        )
    text = editor.chat()
    seven = text[text.index("Run 7 ") : text.index("Run 8 ")]
    assert "│ seven\n  │ again" in seven
    assert "two-fifty" in text[text.index("Run 250 ") : text.index("Run 251 ")]
    assert "two-fifty" not in seven
