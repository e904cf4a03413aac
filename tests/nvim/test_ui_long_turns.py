"""Long turns in the chat (issue 15 §4): a long paragraph shows as short lines (`gy` yanks it as
sent); the chat's cursor follows the end of a streamed answer unless the user moved it; a
paragraph too long for cheap highlighting switches the chat to long-line mode; terminal output
reaches its tool call among many. Real Neovim, updates fed to the plugin's handlers."""

from __future__ import annotations

import json

import pytest

from tests.nvim.conftest import Editor
from tests.nvim.test_plugin import SNAPSHOT, chunk, load, update

pytestmark = pytest.mark.timeout(60)

EMPTY = {**SNAPSHOT, "messages": [], "toolCalls": [], "timeline": []}
CURSOR = "return vim.api.nvim_win_get_cursor(T.chat_win())"


def test_a_long_paragraph_is_followed_to_its_end_and_drops_linebreak_and_highlighting(
    editor: Editor,
) -> None:
    load(editor, EMPTY)
    win = editor.lua("return T.chat_win()")
    assert editor.lua("return vim.wo[...].linebreak", win) is True
    update(editor, 4, chunk("agent_message_chunk", "Short first.\n"))
    piece = "0123456789" * 100
    for seq in range(5, 35):  # 30 updates of 1,000 characters: one 30,000-character paragraph
        update(editor, seq, chunk("agent_message_chunk", piece))
    lines = editor.lua("return T.chat_lines()")
    editor.poll(f"vim.api.nvim_win_get_cursor(T.chat_win())[1] == {len(lines)}")
    editor.poll(f"vim.api.nvim_win_get_cursor(T.chat_win())[2] >= {len(lines[-1]) - 1}")
    # No space in it: cut every HARD bytes; the lines joined give the text back.
    hard = editor.lua("return require('acp_lsp.chat.render').HARD")
    assert lines[0] == "Short first." and "".join(lines[1:]) == piece * 30
    assert [len(line) for line in lines[1:-1]] == [hard] * (len(lines) - 2)
    assert editor.lua("return vim.wo[...].linebreak", win) is False
    assert editor.lua("return vim.treesitter.highlighter.active[T.view().buf] == nil") is True


def test_a_long_answer_without_newlines_shows_whole_and_yanks_as_sent(editor: Editor) -> None:
    """Several hundred KiB in one paragraph (issue 15 §4): shown whole and in order, as short
    buffer lines cut after spaces; `gy` yanks the agent's text, without the cuts; a re-render
    of the whole chat cuts it the same way."""
    load(editor, EMPTY)
    words = [f"w{i}" + "é日"[i % 2] * (i % 7) for i in range(60_000)]
    text = " ".join(words)  # about 400 KiB, no newline
    assert len(text.encode()) > 300 * 1024 and "\n" not in text
    step = 4096
    for seq, start in enumerate(range(0, len(text), step), start=4):
        update(editor, seq, chunk("agent_message_chunk", text[start : start + step]))
    lines = editor.lua("return T.chat_lines()")
    assert "".join(lines) == text  # whole, in order: only line breaks were added
    render = "require('acp_lsp.chat.render')"
    piece, hard = editor.lua(f"return {{ {render}.PIECE, {render}.HARD }}")
    assert len(lines) > 100
    assert all(len(line.encode()) <= hard for line in lines)
    assert all(line.endswith(" ") for line in lines[:-1])  # cut after a space
    assert all(len(line.encode()) >= piece for line in lines[:-1])
    editor.lua("vim.api.nvim_win_set_cursor(T.chat_win(), { 3, 0 })")
    editor.lua("vim.api.nvim_set_current_win(T.chat_win())")
    editor.nvim.input("gy")
    editor.poll("vim.fn.getreg('\"') ~= ''")
    assert editor.lua("return vim.fn.getreg('\"')") == text
    editor.nvim.input('"agy')
    editor.poll("vim.fn.getreg('a') ~= ''")
    assert editor.lua("return vim.fn.getreg('a')") == text
    # The whole chat rendered again (as on a reset): the same lines.
    editor.lua("local v = T.view() require('acp_lsp.chat.view').render_all(T.session(), v)")
    assert editor.lua("return T.chat_lines()") == lines


def test_an_answer_starting_with_a_long_paragraph_is_in_long_line_mode_before_it_shows(
    editor: Editor,
) -> None:
    """The first chunk of the answer (a new block) is already a long paragraph: highlighting is
    off before it is in the buffer, so the markdown parser never sees it."""
    load(editor, EMPTY)
    win = editor.lua("return T.chat_win()")
    update(editor, 4, chunk("agent_message_chunk", "lorem ipsum " * 3000))  # 36,000 bytes
    assert editor.lua("return vim.wo[...].linebreak", win) is False
    assert editor.lua("return vim.treesitter.highlighter.active[T.view().buf] == nil") is True


def test_the_cursor_follows_within_the_notification_and_the_collector_runs_after(
    editor: Editor,
) -> None:
    """A large append moves the chat's cursor to the end before the handler returns (no loop
    turn in between), and leaves Lua's garbage collector running as it found it."""
    load(editor, EMPTY)
    big = "word " * 20_000 + "end"  # 100,003 bytes: appended with the collector paused
    update(editor, 4, chunk("agent_message_chunk", "start\n"))
    params = {"sessionId": "s1", "seq": 5, "updates": [chunk("agent_message_chunk", big)]}
    cursor = editor.lua(  # in the same Lua call as the handler: no loop turn in between
        "require('acp_lsp.handlers').session_update(nil, vim.json.decode(...), {}) " + CURSOR,
        json.dumps(params),
    )
    lines = editor.lua("return T.chat_lines()")
    assert cursor[0] == len(lines) and cursor[1] >= len(lines[-1]) - 1
    assert "".join(lines[1:]) == big
    assert editor.lua("return collectgarbage('isrunning')") is True
    # an append that fails still leaves the collector running, and the error is not swallowed
    failed = editor.lua(
        "local ok, err = pcall(require('acp_lsp.chat.tail').gc_paused, function() error('boom') end)"
        " return { ok, tostring(err), collectgarbage('isrunning') }"
    )
    assert failed[0] is False and failed[1].endswith("boom") and failed[2] is True
    editor.lua("collectgarbage('stop')")  # stopped by someone else: stays stopped
    update(editor, 6, chunk("agent_message_chunk", big))
    assert (
        editor.lua("local r = collectgarbage('isrunning') collectgarbage('restart') return r")
        is False
    )
    editor.lua("vim.api.nvim_set_current_win(T.chat_win())")
    editor.nvim.input("gy")
    editor.poll("vim.fn.getreg('\"') ~= ''")
    assert editor.lua("return vim.fn.getreg('\"')") == "start\n" + big + big


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
