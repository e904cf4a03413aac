"""Disk and buffers never diverge (DESIGN §3), in real Neovim with the plugin.

Agents like Claude Code and Codex change files on disk themselves (their own edit tools, shell
commands). The scripted agent does the same: a "shell command" tool call that writes or
deletes files (``write_file`` / ``delete_file`` steps) and reports nothing else. What a user
must see: the open buffer shows the agent's change with their unsaved line kept, ``:w`` asks
nothing ("changed since reading it", W11/W12), a clean buffer ends unmodified, the chat lists
the turn's changed files with keys to keep or reject them, and a reject restores the disk
while the buffer follows.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.agents import scripted_command
from tests.nvim.conftest import SERVER_CMD, Editor

pytestmark = pytest.mark.timeout(90)

JsonObject = dict[str, Any]
APP = "src/app.py"
USER_LINE = "# my unsaved note"
# A model round trip before the agent acts: the server's snapshot of the folder before the
# turn is waited for only 0.25 s (acp_lsp/editor/disk_sync.py BASELINE_WAIT_S).
THINK: JsonObject = {"sleep": 0.5}


def shell(call_id: str, title: str, *changes: JsonObject) -> list[JsonObject]:
    """A command the agent runs itself: a tool call, the disk changes, completed."""
    return [
        THINK,
        {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "title": title,
                "kind": "execute",
                "status": "in_progress",
            }
        },
        *changes,
        {
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "status": "completed",
            }
        },
    ]


def answer(text: str) -> JsonObject:
    return {
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        }
    }


def start(editor: Editor, workspace: Path, tmp_path: Path, script: JsonObject) -> None:
    """The plugin against the real server, the scripted agent as default agent."""
    argv = scripted_command(script, tmp_dir=tmp_path)
    settings = {
        "agents": {"scripted": {"command": argv[0], "args": argv[1:]}},
        "defaultAgent": "scripted",
    }
    editor.cmd(f"cd {workspace}")
    editor.lua("T.setup(...)", SERVER_CMD, settings)


def write_silently(editor: Editor) -> None:
    """`:w` of the current buffer; fails on any question ("changed since reading it", W11)
    instead of waiting for an answer, and on any warning or error."""
    editor.lua("vim.v.errmsg = '' vim.v.warningmsg = '' vim.cmd('messages clear')")
    editor.nvim.command("write", async_=True)
    deadline = time.monotonic() + 5
    while True:
        mode = editor.nvim.api.get_mode()
        if mode.get("blocking"):
            screen = editor.nvim.api.exec2("messages", {"output": True})["output"]
            editor.nvim.input("n<CR>")
            raise AssertionError(f":w asked a question: {mode} {screen}")
        if not editor.lua("return vim.bo.modified"):
            break
        assert time.monotonic() < deadline, ":w did not write"
        time.sleep(0.02)
    out = editor.lua(
        "return { errmsg = vim.v.errmsg, warningmsg = vim.v.warningmsg, "
        "messages = vim.fn.execute('messages') }"
    )
    assert out["errmsg"] == "" and out["warningmsg"] == "", out
    assert "changed since reading" not in out["messages"], out


def press_in_chat(editor: Editor, text: str, keys: str) -> None:
    """Put the chat's cursor on the first line containing `text` and type `keys` there."""
    row = editor.lua("return T.find_line(...)", text)
    assert row, f"{text!r} not in the chat:\n{editor.chat()}"
    editor.lua(
        "local chat = T.chat_windows() vim.api.nvim_set_current_win(chat) "
        "vim.api.nvim_win_set_cursor(chat, { ..., 0 })",
        row,
    )
    editor.nvim.input(keys)


def sed_script(changed: str) -> JsonObject:
    return {
        "on": {
            "session/prompt": [
                *shell(
                    "sed1",
                    "sed -i s/Hello/Hi there/ src/app.py",
                    {"write_file": {"path": APP, "content": changed}},
                ),
                answer("I changed the greeting."),
            ]
        }
    }


def test_shell_change_merges_into_the_dirty_buffer_and_saves_silently(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    app = workspace / APP
    original = app.read_text()
    changed = original.replace("Hello, ", "Hi there, ")
    start(editor, workspace, tmp_path, sed_script(changed))
    editor.cmd(f"edit {APP}")
    editor.cmd(f"normal! Go{USER_LINE}")  # unsaved
    editor.lua("T.new_session()")
    editor.lua("T.send('greet differently')")
    editor.wait("T.session().status == 'idle' and T.find_line('I changed the greeting') ~= nil")
    lines = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    assert lines == [*changed.splitlines(), USER_LINE]
    assert editor.lua("return vim.bo.modified") is True
    assert app.read_text() == changed  # the unsaved line is not on disk yet
    # "files changed" closes the turn
    chat = editor.chat()
    assert "≡ 1 file changed" in chat
    row = next(line for line in chat.splitlines() if "M src/app.py" in line)
    assert row.split() == ["M", "src/app.py", "modified", "pending"]

    # One undo step takes the agent's change back, the user's line stays; redo brings it again.
    editor.cmd("undo")
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == [
        *original.splitlines(),
        USER_LINE,
    ]
    editor.cmd("redo")
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == lines

    write_silently(editor)
    assert app.read_text() == changed + USER_LINE + "\n"


def test_reject_from_files_changed_restores_the_disk_and_the_buffer_follows(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    app = workspace / APP
    original_bytes = app.read_bytes()
    original = original_bytes.decode()
    changed = original.replace("Hello, ", "Hi there, ")
    start(editor, workspace, tmp_path, sed_script(changed))
    editor.cmd(f"edit {APP}")
    editor.cmd(f"normal! Go{USER_LINE}")
    editor.lua("T.new_session()")
    editor.lua("T.send('greet differently')")
    editor.wait("T.session().status == 'idle' and T.find_line('file changed') ~= nil")
    app_buf = editor.lua("return vim.api.nvim_get_current_buf()")

    press_in_chat(editor, "M src/app.py", "gr")
    editor.poll("T.find_line('review reject: src/app.py rejected') ~= nil")
    assert app.read_bytes() == original_bytes  # byte for byte
    editor.poll("T.chat_lines()[T.find_line('M src/app.py')]:match('rejected$') ~= nil")
    # The buffer followed the undo on disk and kept the user's line, still unsaved.
    editor.wait("vim.deep_equal(vim.api.nvim_buf_get_lines(a[1], 0, -1, false), a[2])",
                app_buf, [*original.splitlines(), USER_LINE])  # fmt: skip
    assert editor.lua("return vim.bo[...].modified", app_buf) is True
    editor.lua("vim.api.nvim_set_current_buf(...)", app_buf)
    write_silently(editor)
    assert app.read_text() == original + USER_LINE + "\n"


def test_clean_buffer_ends_unmodified_and_keep_marks_the_file_accepted(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    app = workspace / APP
    changed = app.read_text().replace("Hello, ", "Hi there, ")
    start(editor, workspace, tmp_path, sed_script(changed))
    editor.cmd(f"edit {APP}")
    editor.lua("T.new_session()")
    editor.lua("T.send('greet differently')")
    editor.wait("T.session().status == 'idle' and T.find_line('file changed') ~= nil")
    app_buf = editor.lua("return vim.api.nvim_get_current_buf()")
    assert editor.lua("return T.buf_lines(...)", str(app)) == changed.splitlines()
    assert editor.lua("return vim.bo[...].modified", app_buf) is False
    # Neovim's own check finds nothing to reload or ask: the buffer holds the disk state.
    tick = editor.lua("return vim.b[...].changedtick", app_buf)
    editor.cmd("checktime")
    assert editor.lua("return vim.b[...].changedtick", app_buf) == tick

    press_in_chat(editor, "file changed", "ga")  # on the title: every file of the turn
    editor.poll("T.find_line('review accept: src/app.py accepted') ~= nil")
    editor.poll("T.chat_lines()[T.find_line('M src/app.py')]:match('accepted$') ~= nil")
    assert app.read_text() == changed


def test_autoread_reload_during_the_turn_is_not_applied_twice(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    """The file changes, Neovim reloads the clean buffer itself ('autoread', on by default)
    before the tool call ends: the server's sync then finds nothing to apply."""
    app = workspace / APP
    added = app.read_text() + "# added by the agent\n"
    start(
        editor,
        workspace,
        tmp_path,
        {
            "on": {
                "session/prompt": [
                    THINK,
                    {
                        "update": {
                            "sessionUpdate": "tool_call",
                            "toolCallId": "sh1",
                            "title": "echo >> src/app.py",
                            "kind": "execute",
                            "status": "in_progress",
                        }
                    },
                    {"write_file": {"path": APP, "content": added}},
                    answer("appending..."),
                    {"sleep": 1.5},
                    {
                        "update": {
                            "sessionUpdate": "tool_call_update",
                            "toolCallId": "sh1",
                            "status": "completed",
                        }
                    },
                    answer(" done."),
                ]
            }
        },
    )
    editor.cmd(f"edit {APP}")
    assert editor.lua("return vim.o.autoread") is True
    editor.lua("T.new_session()")
    editor.lua("T.send('append')")
    editor.wait("T.find_line('appending...') ~= nil")
    editor.cmd("checktime")  # Neovim notices the change and reloads the clean buffer
    assert editor.lua("return T.buf_lines(...)", str(app)) == added.splitlines()
    editor.wait("T.session().status == 'idle' and T.find_line('file changed') ~= nil")
    assert editor.lua("return T.buf_lines(...)", str(app)) == added.splitlines()  # once
    assert editor.lua("return vim.bo.modified") is False
    write_silently(editor)
    assert app.read_text() == added


def test_conflicting_unsaved_edit_is_kept_and_the_user_is_told(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    app = workspace / APP
    original = app.read_text()
    changed = original.replace("Hello, ", "Hi there, ")
    start(editor, workspace, tmp_path, sed_script(changed))
    editor.cmd(f"edit {APP}")
    editor.cmd("%s/Hello, /Good day, /")  # the same line the agent changes, unsaved
    mine = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    editor.lua("T.new_session()")
    editor.lua("T.send('greet differently')")
    editor.wait("T.session().status == 'idle' and T.find_line('file changed') ~= nil")
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == mine
    notes = editor.lua("return vim.tbl_map(function(n) return n.msg end, T.notifications)")
    assert any("conflict: your buffer was kept" in n and "src/app.py" in n for n in notes), notes
    assert app.read_text() == changed
