"""A marathon session in the chat (issue 35): drawn whole, only its last `WINDOW` items are in
the buffer, behind a "show earlier" line; <CR> there shows more, keeping the cursor's item;
what streams after still appends; a tool call behind the line can change without touching the
buffer. Real Neovim, a snapshot fed to the plugin."""

from __future__ import annotations

import pytest

from tests.nvim.conftest import Editor
from tests.nvim.test_plugin import SNAPSHOT, chunk, load, update

pytestmark = pytest.mark.timeout(60)

VIEW = "require('acp_lsp.chat.view')"


def marathon(n: int) -> dict[str, object]:
    """n items: user and agent messages alternating with a completed tool call every third."""
    messages: list[dict[str, object]] = []
    calls: list[dict[str, object]] = []
    timeline: list[dict[str, object]] = []
    for i in range(n):
        if i % 3 == 2:
            calls.append(
                {
                    "toolCallId": f"t{i}",
                    "title": f"Read f{i}.py",
                    "kind": "read",
                    "status": "completed",
                }
            )
            timeline.append({"toolCall": f"t{i}"})
        else:
            role = "user" if i % 3 == 0 else "agent"
            text = f"message {i}"
            messages.append({"role": role, "content": [{"type": "text", "text": text}]})
            timeline.append({"message": len(messages) - 1})
    return {**SNAPSHOT, "messages": messages, "toolCalls": calls, "timeline": timeline}


def test_a_long_session_shows_its_end_behind_a_show_earlier_line(editor: Editor) -> None:
    editor.lua(f"{VIEW}.WINDOW = 30 {VIEW}.MORE = 20")
    load(editor, marathon(100))
    lines = editor.lua("return T.chat_lines()")
    assert lines[0] == "⋯ 70 earlier items not shown: <CR> on this line shows 20 more"
    assert "message 70" in lines and "message 69" not in lines
    assert lines[-1] == "message 99"
    # An item behind the line is nothing at the cursor; the first shown is the item it is.
    editor.lua("vim.api.nvim_set_current_win(T.chat_win())")
    editor.lua("vim.api.nvim_win_set_cursor(0, { 1, 0 })")
    assert editor.lua("return require('acp_lsp.chat').item_at_cursor()") is None
    # <CR> on it: 20 more, the cursor on the item that was first.
    editor.nvim.input("<CR>")
    editor.poll("T.chat_lines()[1]:find('50 earlier') ~= nil")
    lines = editor.lua("return T.chat_lines()")
    assert lines[2] == "✓ Read f50.py  [read · completed]" and "message 49" not in lines
    row = editor.lua("return vim.api.nvim_win_get_cursor(0)[1]")
    assert lines[row - 1] == "message 70"
    # A tool call behind the line changes: the buffer does not.
    update(
        editor,
        4,
        {"sessionUpdate": "tool_call_update", "toolCallId": "t2", "status": "failed"},
    )
    assert editor.lua("return T.chat_lines()") == lines
    # Streaming still appends at the end.
    update(editor, 5, chunk("agent_message_chunk", "and one more"))
    assert editor.lua("return T.chat_lines()")[-1].endswith("and one more")


def test_a_session_within_the_window_has_no_show_earlier_line(editor: Editor) -> None:
    editor.lua(f"{VIEW}.WINDOW = 30")
    load(editor, marathon(30))
    lines = editor.lua("return T.chat_lines()")
    assert lines[0] == "## You" and "message 0" in lines
