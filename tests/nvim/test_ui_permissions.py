"""Inline permission prompts: answered from the chat buffer with keys, several open at once,
while the editor stays usable (no modal picker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.nvim.conftest import Editor
from tests.nvim.test_plugin import ASK, PERMISSION, SNAPSHOT, chunk, load, update

pytestmark = pytest.mark.timeout(60)


def test_two_prompts_inline_each_answered_by_key(editor: Editor) -> None:
    load(editor)
    editor.lua(ASK, json.dumps(PERMISSION))
    second = {
        **PERMISSION,
        "toolCall": {"toolCallId": "t9", "title": "Delete y.py", "kind": "delete"},
    }
    editor.lua(ASK, json.dumps(second))
    editor.wait("#require('acp_lsp.permissions').pending() == 2")
    assert editor.lua("return #T.selects") == 0  # nothing modal
    text = editor.chat()
    assert text.count("⚠ allow? [1] Allow  [2] Reject") == 2
    assert "Delete y.py  [delete · pending]" in text  # a tool call block made for the request
    assert "⚠ 2 permissions" in editor.lua("return T.winbar()")

    # The cursor on the second prompt: `2` answers that one, not the oldest.
    editor.lua("vim.api.nvim_set_current_win(T.chat_win())")
    editor.lua("vim.api.nvim_win_set_cursor(0, { T.find_line('Delete y.py'), 0 })")
    editor.nvim.input("2")
    editor.poll("T.results[2] ~= false")
    assert editor.lua("return T.results[2]") == {
        "outcome": {"outcome": "selected", "optionId": "r"}
    }
    assert editor.lua("return T.results[1]") is False
    assert editor.chat().count("⚠ allow?") == 1

    # Elsewhere in the chat, `]p` jumps to the open prompt and `1` answers it.
    editor.lua("vim.api.nvim_win_set_cursor(0, { 1, 0 })")
    editor.nvim.input("]p")
    editor.poll("vim.api.nvim_win_get_cursor(0)[1] == T.find_line('Edit x.py')")
    editor.nvim.input("1")
    editor.poll("T.results[1] ~= false")
    assert editor.lua("return T.results[1]") == {
        "outcome": {"outcome": "selected", "optionId": "a"}
    }
    assert "⚠" not in editor.chat()
    # No prompt open: digits are counts again.
    assert editor.lua("return vim.fn.maparg('1', 'n')") == ""


def test_inline_prompt_while_typing_elsewhere_and_cancel(editor: Editor, tmp_path: Path) -> None:
    load(editor)
    (tmp_path / "notes.txt").write_text("")
    editor.cmd(f"wincmd p | edit {tmp_path / 'notes.txt'}")
    editor.lua(ASK, json.dumps(PERMISSION))
    editor.wait("#require('acp_lsp.permissions').pending() == 1")
    editor.nvim.input("ihello<Esc>")  # the editor is not blocked by the question
    editor.poll("vim.api.nvim_get_current_line() == 'hello'")
    editor.lua(
        "require('acp_lsp.handlers').session_status(nil, {sessionId = 's1', status = 'idle'})"
    )
    editor.wait("T.results[1] ~= false")
    assert editor.lua("return T.results[1]") == {"outcome": {"outcome": "cancelled"}}
    assert "⚠ allow?" not in editor.chat()


def test_real_agent_permission_answered_inline(live: Editor, workspace: Path) -> None:
    live.lua("T.permission_ui = 'inline'")
    live.lua("T.setup(...)", live.lua("return require('acp_lsp.config').options.cmd"))
    live.lua("T.new_session()")
    live.lua("T.send('please edit')")
    live.wait("T.find_line('⚠ allow? [1] Allow  [2] Always allow  [3] Reject') ~= nil")
    live.lua("vim.api.nvim_set_current_win(T.chat_win())")
    live.nvim.input("3")
    live.poll("T.session().status == 'idle'", timeout_s=20)
    assert "[edit · failed]" in live.chat()
    assert "reviewed in turn" not in (workspace / "src" / "app.py").read_text()


def test_a_batch_of_updates_renders_like_one_by_one(editor: Editor) -> None:
    """One notification with many updates is coalesced by the view; the chat must read the
    same as when each update came alone."""
    updates: list[dict[str, object]] = [chunk("agent_message_chunk", "Start.\n")]
    for i in range(3):
        tc = f"b{i}"
        updates.append({"sessionUpdate": "tool_call", "toolCallId": tc, "title": f"Read f{i}.py",
                        "kind": "read", "status": "pending"})  # fmt: skip
        updates.append(chunk("agent_message_chunk", f"after {i}"))
        updates.append(chunk("agent_message_chunk", " more\n"))
        updates.append({"sessionUpdate": "tool_call_update", "toolCallId": tc,
                        "status": "completed"})  # fmt: skip
    updates.append(chunk("agent_thought_chunk", "hmm"))
    updates.append(chunk("agent_message_chunk", "end"))
    load(editor)
    update(editor, 4, *updates)
    batched = editor.chat()
    load(editor, {**SNAPSHOT, "sessionId": "s2"})
    for n, u in enumerate(updates):
        update(editor, 4 + n, u, sid="s2")
    assert editor.chat() == batched
    assert "✓ Read f2.py  [read · completed]" in batched
    assert batched.rstrip().endswith("end")
    # Starts of blocks stay right: the cursor on a tool call finds it.
    row = editor.lua("return T.find_line('Read f1.py')")
    editor.lua("vim.api.nvim_set_current_win(T.chat_win())")
    editor.lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", row)
    assert editor.lua("return require('acp_lsp.chat').item_at_cursor().tool_call_id") == "b1"
