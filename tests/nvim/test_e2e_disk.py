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
from tests.model_server import ModelServer, Say, Script, Tool
from tests.model_server.script import read_edit_answer
from tests.nvim import test_screenshots as shots
from tests.nvim.conftest import SERVER_CMD, Editor
from tests.support.production import claude_config, server_env

pytestmark = pytest.mark.timeout(90)

JsonObject = dict[str, Any]
APP = "src/app.py"
USER_LINE = "# my unsaved note"
# A model round trip before the agent acts, as a real agent's.
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
        if mode.get("blocking") or mode["mode"].startswith("r"):  # r? r rm: a question
            editor.nvim.input("n")
            time.sleep(0.2)
            messages = editor.lua("return vim.fn.execute('messages')")
            raise AssertionError(f":w asked a question ({mode}):\n{messages}")
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


def poll(editor: Editor, condition: str, timeout_s: float = 10.0) -> None:
    """Wait from outside (typed keys run) until the Lua condition holds; fails at once, with
    Neovim's messages, when Neovim blocks on a question or a hit-enter prompt."""
    deadline = time.monotonic() + timeout_s
    while True:
        mode = editor.nvim.api.get_mode()
        if mode.get("blocking") or mode["mode"].startswith("r"):
            # q leaves a more-prompt, <CR> a hit-enter prompt, n<CR> a yes/no question
            for keys in ("q", "<CR>", "n<CR>"):
                editor.nvim.input(keys)
                time.sleep(0.2)
                if not editor.nvim.api.get_mode().get("blocking"):
                    break
            messages = editor.lua("return vim.fn.execute('messages')")
            raise AssertionError(f"Neovim blocked on a prompt ({mode}):\n{messages}")
        if editor.lua(f"return {condition}"):
            return
        assert time.monotonic() < deadline, f"timed out polling for: {condition}"
        time.sleep(0.02)


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


def test_hidden_dirty_buffer_is_synced_too(editor: Editor, workspace: Path, tmp_path: Path) -> None:
    """The file's buffer is loaded but in no window (the user went on to another file)."""
    app = workspace / APP
    changed = app.read_text().replace("Hello, ", "Hi there, ")
    start(editor, workspace, tmp_path, sed_script(changed))
    editor.cmd(f"edit {APP}")
    editor.cmd(f"normal! Go{USER_LINE}")
    app_buf = editor.lua("return vim.api.nvim_get_current_buf()")
    editor.cmd("edit README.md")  # 'hidden': app.py stays loaded, unsaved
    assert editor.lua("return vim.fn.bufwinid(...)", app_buf) == -1
    editor.lua("T.new_session()")
    editor.lua("T.send('greet differently')")
    editor.wait("T.session().status == 'idle' and T.find_line('file changed') ~= nil")
    assert editor.lua("return T.buf_lines(...)", str(app)) == [*changed.splitlines(), USER_LINE]
    editor.cmd(f"buffer {app_buf}")
    # :Acp review in the file's buffer finds the change the shell command made on disk
    editor.cmd("Acp review reject")
    poll(editor, "T.find_line('review reject: src/app.py rejected') ~= nil")
    assert "Hi there" not in app.read_text()
    poll(editor, "not vim.api.nvim_buf_get_lines(0, 8, 9, false)[1]:find('Hi there')")
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, -2, -1, false)") == [USER_LINE]
    write_silently(editor)
    assert "Hi there" not in app.read_text() and app.read_text().endswith(USER_LINE + "\n")


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
    poll(editor, "T.find_line('review reject: src/app.py rejected') ~= nil")
    assert app.read_bytes() == original_bytes  # byte for byte
    poll(editor, "T.chat_lines()[T.find_line('M src/app.py')]:match('rejected$') ~= nil")
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
    poll(editor, "T.find_line('review accept: src/app.py accepted') ~= nil")
    poll(editor, "T.chat_lines()[T.find_line('M src/app.py')]:match('accepted$') ~= nil")
    assert app.read_text() == changed
    # the session rebuilt from its snapshot (:Acp sessions) shows the block again, once
    editor.lua(
        "local done require('acp_lsp.client').request('acp/getSession', "
        "{ sessionId = T.session().id }, function(_, res) done = res end) "
        "vim.wait(5000, function() return done ~= nil end, 10) "
        "require('acp_lsp.sessions').load_snapshot(done)"
    )
    chat = editor.chat()
    assert chat.count("≡ 1 file changed") == 1, chat
    assert chat_row(editor, "M src/app.py").split()[-1] == "accepted"
    assert chat.index("I changed the greeting") < chat.index("≡ 1 file changed")


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
    # told once, with the server's conflicting lines, and what :w would do
    [note] = [n for n in notes if "src/app.py changed on disk" in n]
    assert "conflict (lines 9): your buffer was kept" in note and ":w would overwrite" in note
    assert "where you have unsaved edits (lines" not in editor.lua(
        "return vim.fn.execute('messages')"
    )  # the server's own warning is not shown as well
    assert app.read_text() == changed
    # :w asks first (Neovim's own question stays: saving would drop the agent's change)
    editor.nvim.command("write", async_=True)
    deadline = time.monotonic() + 5
    while not editor.nvim.api.get_mode()["mode"].startswith("r"):
        assert time.monotonic() < deadline, (":w did not ask", editor.nvim.api.get_mode())
        time.sleep(0.02)
    editor.nvim.input("n")
    poll(editor, "true")
    assert app.read_text() == changed


# -- a real agent: claude-agent-acp against the scripted model -----------------------------------

CLAUDE_TURN_MS = 180_000  # a whole turn on a shared 2-core machine: generous, never asserted on


def start_claude(editor: Editor, workspace: Path, tmp_path: Path, model: ModelServer) -> None:
    """The plugin against the real server, Claude (claude-agent-acp at its pinned version)
    the default agent, its Anthropic API the scripted model; an empty HOME for both."""
    home = tmp_path / "home"
    home.mkdir()
    claude = claude_config(model, home)  # skips when the agent is not installed
    env = server_env(home)
    editor.cmd(f"cd {workspace}")
    editor.lua(
        "require('acp_lsp').setup({ cmd = ..., cmd_env = select(2, ...), "
        "settings = select(3, ...), permission_ui = 'select' })",
        SERVER_CMD,
        {k: env[k] for k in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "ACP_LSP_DATA_DIR")},
        {"agents": {"claude": claude}, "defaultAgent": "claude"},
    )


def chat_row(editor: Editor, text: str) -> str:
    """The chat line containing `text`."""
    return str(editor.lua("return T.chat_lines()[T.find_line(...)]", text))


@pytest.mark.timeout(420)
def test_claude_edits_on_disk_the_dirty_buffer_follows_and_the_turn_is_reviewed(
    editor: Editor, workspace: Path, tmp_path: Path, model: ModelServer
) -> None:
    app = workspace / APP
    original = app.read_text()
    howdy = original.replace("Hello", "Howdy")
    hi = original.replace("Hello", "Hi")
    model.script = Script(
        "read-edit twice",
        [
            [
                Tool("read", {"path": str(app)}),
                Tool("edit", {"path": str(app), "old": "Hello", "new": "Howdy"}),
                Say("I updated the greeting in src/app.py.", chunks=3),
            ],
            [
                Tool("read", {"path": str(app)}),
                Tool("edit", {"path": str(app), "old": "Howdy", "new": "Hi"}),
                Say("Now it says Hi.", chunks=2),
            ],
        ],
    )
    start_claude(editor, workspace, tmp_path, model)
    editor.cmd(f"edit {APP}")
    editor.cmd(f"normal! Go{USER_LINE}")  # unsaved
    app_buf = editor.lua("return vim.api.nvim_get_current_buf()")
    app_win = editor.lua("return vim.api.nvim_get_current_win()")
    editor.lua("T.new_session(nil, 120000)")
    editor.lua("T.send('Change the greeting to Howdy.')")
    editor.wait(
        "T.session().status == 'idle' and T.find_line('file changed') ~= nil",
        timeout_ms=CLAUDE_TURN_MS,
    )
    chat = editor.chat()
    assert "I updated the greeting in src/app.py." in chat
    # the chat shows both tool calls and the edit's diff
    assert "✓ Read" in chat and "✓ Edit" in chat, chat
    assert '-    return f"Hello, {title_case(name)}!"' in chat
    assert '+    return f"Howdy, {title_case(name)}!"' in chat
    assert chat_row(editor, "M src/app.py").split() == [
        "M", "src/app.py", "modified", "+1", "-1", "pending",
    ]  # fmt: skip
    # Claude edited on disk; the open buffer shows its change with the user's line kept
    assert app.read_text() == howdy
    assert editor.lua("return T.buf_lines(...)", str(app)) == [*howdy.splitlines(), USER_LINE]
    assert editor.lua("return vim.bo[...].modified", app_buf) is True
    # follow-along landed on the changed line (9), not on the file's top
    follow = editor.lua("return T.follow()")
    assert follow is not None and follow["name"] == str(app), follow
    assert follow["row"] == 9, follow
    assert editor.lua("return vim.api.nvim_get_current_win()") == app_win
    # :w asks nothing
    write_silently(editor)
    assert app.read_text() == howdy + USER_LINE + "\n"
    # keep: the file's review says accepted, the disk stays
    press_in_chat(editor, "M src/app.py", "ga")
    poll(editor, "T.chat_lines()[T.find_line('M src/app.py')]:match('accepted$') ~= nil")
    assert app.read_text() == howdy + USER_LINE + "\n"

    # Turn 2: another edit; the user types another unsaved line first, then rejects the edit.
    editor.lua("vim.api.nvim_set_current_win(...)", app_win)
    editor.cmd("normal! Go# second note")
    editor.lua("T.send('Make it Hi.')")
    editor.wait(
        "T.session().status == 'idle' and T.find_line('Now it says Hi.') ~= nil "
        "and #vim.tbl_filter(function(l) return l:find('file changed', 1, true) end, "
        "T.chat_lines()) == 2",
        timeout_ms=CLAUDE_TURN_MS,
    )
    assert app.read_text() == hi + USER_LINE + "\n"
    assert editor.lua("return T.buf_lines(...)", str(app)) == [
        *hi.splitlines(), USER_LINE, "# second note",
    ]  # fmt: skip
    lines = editor.lua("return T.chat_lines()")
    last_row = max(i for i, line in enumerate(lines) if "M src/app.py" in line) + 1
    editor.lua(
        "local chat = T.chat_windows() vim.api.nvim_set_current_win(chat) "
        "vim.api.nvim_win_set_cursor(chat, { ..., 0 })",
        last_row,
    )
    editor.nvim.input("gr")
    poll(editor, "T.find_line('review reject: src/app.py rejected') ~= nil", timeout_s=20)
    assert app.read_text() == howdy + USER_LINE + "\n"  # back to the kept state, byte for byte
    editor.wait(
        "vim.deep_equal(T.buf_lines(a[1]), a[2])",
        str(app),
        [*howdy.splitlines(), USER_LINE, "# second note"],
    )
    editor.lua("vim.api.nvim_set_current_win(...)", app_win)
    write_silently(editor)
    assert app.read_text() == howdy + USER_LINE + "\n# second note\n"
    assert model.unknown_requests() == [], model.unknown_requests()


# -- screenshots (a real Neovim in tmux; skipped without tmux or Chromium) ------------------------

tui = shots.tui  # the fixture of tests/nvim/test_screenshots.py


def test_screenshots_disk_sync_and_files_changed(tui: shots.Tui, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    app = workspace / APP
    changed = app.read_text().replace("Hello, ", "Hi there, ")
    notes = "# Notes\n\nGreeting changed to 'Hi there'.\nslugify stays in util.py.\n"
    start(
        tui,
        workspace,
        tmp_path,
        {
            "on": {
                "session/prompt": [
                    *shell(
                        "sh1",
                        "sed -i 's/Hello/Hi there/' src/app.py",
                        {"write_file": {"path": APP, "content": changed}},
                    ),
                    THINK,
                    {
                        "update": {
                            "sessionUpdate": "tool_call",
                            "toolCallId": "w1",
                            "title": "Write NOTES.md",
                            "kind": "edit",
                            "status": "pending",
                            "rawInput": {"file_path": "{cwd}/NOTES.md"},
                        }
                    },
                    {"write_file": {"path": "NOTES.md", "content": notes}},
                    {
                        "update": {
                            "sessionUpdate": "tool_call_update",
                            "toolCallId": "w1",
                            "status": "completed",
                            "content": [
                                {
                                    "type": "diff",
                                    "path": "{cwd}/NOTES.md",
                                    "oldText": None,
                                    "newText": notes,
                                }
                            ],
                        }
                    },
                    *shell("sh2", "rm README.md", {"delete_file": "README.md"}),
                    answer("Changed the greeting, wrote NOTES.md and removed README.md."),
                ]
            }
        },
    )
    tui.cmd(f"edit {APP}")
    tui.cmd(f"normal! Go{USER_LINE}")
    tui.lua("T.new_session()")
    tui.lua("T.send('Say hi there, note it, drop the README')")
    tui.wait("T.session().status == 'idle' and T.find_line('3 files changed') ~= nil")
    tui.lua(
        "local chat, input = T.chat_windows() vim.api.nvim_win_set_height(input, 3) "
        "vim.api.nvim_win_call(chat, function() "
        "vim.api.nvim_win_set_cursor(0, { T.find_line('Say hi there'), 0 }) vim.cmd('normal! zt') "
        "end)"
    )
    tui.lua("vim.cmd('wincmd t') vim.cmd('normal! 9Gzz')")
    tui.settle()
    tui.shot(
        "disk-sync",
        [
            'return f"Hi there, {title_case(name)}!"',
            USER_LINE,
            "[+]",
            "≡ 3 files changed",
            "M src/app.py",
            "A NOTES.md",
            "D README.md",
        ],
    )
    # keep the greeting, reject the rest from the block; the deleted README comes back
    press_in_chat(tui, "M src/app.py", "ga")
    poll(tui, "T.find_line('review accept: src/app.py accepted') ~= nil")
    press_in_chat(tui, "D README.md", "gr")
    poll(tui, "T.find_line('review reject: README.md rejected') ~= nil")
    press_in_chat(tui, "A NOTES.md", "gr")
    poll(tui, "T.find_line('review reject: NOTES.md rejected') ~= nil")
    assert (workspace / "README.md").exists() and not (workspace / "NOTES.md").exists()
    tui.lua("vim.cmd('wincmd t')")
    write_silently(tui)
    tui.lua(
        "local chat, input = T.chat_windows() vim.api.nvim_win_set_height(input, 3) "
        "vim.api.nvim_win_call(chat, function() "
        "vim.api.nvim_win_set_cursor(0, { T.find_line('Say hi there'), 0 }) "
        "vim.cmd('normal! zt') end)"
    )
    tui.settle()
    screen = tui.shot(
        "files-changed", ["≡ 3 files changed", "accepted", "D README.md", "review reject: NOTES.md"]
    )
    assert "[+]" not in screen


def test_screenshot_claude_turn(tui: shots.Tui, tmp_path: Path, model: ModelServer) -> None:
    """Claude reads and edits src/app.py (open, with an unsaved line): as a user sees it."""
    workspace = tmp_path / "ws"
    app = workspace / APP
    howdy = app.read_text().replace("Hello", "Howdy")
    model.script = read_edit_answer(str(workspace), file=APP)
    start_claude(tui, workspace, tmp_path, model)
    tui.cmd(f"edit {APP}")
    tui.cmd(f"normal! Go{USER_LINE}")
    tui.lua("T.new_session(nil, 120000)")
    tui.lua("T.send('Change the greeting to Howdy.')")
    tui.wait(
        "T.session().status == 'idle' and T.find_line('file changed') ~= nil",
        timeout_ms=CLAUDE_TURN_MS,
    )
    assert app.read_text() == howdy
    assert tui.lua("return T.buf_lines(...)", str(app)) == [*howdy.splitlines(), USER_LINE]
    follow = tui.lua("return T.follow()")
    assert follow is not None and follow["row"] == 9, follow
    tui.lua(
        "local chat, input = T.chat_windows() vim.api.nvim_win_set_height(input, 3) "
        "vim.api.nvim_win_call(chat, function() "
        "vim.api.nvim_win_set_cursor(0, { T.find_line('✓ Edit'), 0 }) "
        "vim.cmd('normal! zt') end)"
    )
    tui.settle()
    # the chat shows the diff Claude reported: its final one (whole lines, with context)
    # comes from its PostToolUse hook, which once in a full run never came; its first one
    # is the Edit's input ("Hello" -> "Howdy"). Either is under the review's file line
    tui.shot(
        "claude-disk-sync",
        [
            "✓ Edit",
            "┌ src/app.py · pending",
            "≡ 1 file changed",
            USER_LINE,
            "[+]",
        ],
    )
    write_silently(tui)
    assert app.read_text() == howdy + USER_LINE + "\n"


def test_a_stale_versioned_edit_is_refused_with_its_reason(editor: Editor, workspace: Path) -> None:
    """A sync edit computed before Neovim reloaded the file (or the user typed) is refused as
    a whole with a reason, not skipped with a printed "Buffer … newer than edits." and
    answered applied (the server then merges again)."""
    app = workspace / APP
    editor.cmd(f"edit {app}")
    # what an attached buffer has (the LSP client keeps its version; no server here)
    tick = editor.lua(
        "local buf = vim.api.nvim_get_current_buf() "
        "vim.lsp.util.buf_versions[buf] = vim.b.changedtick return vim.b.changedtick"
    )
    edit = {
        "documentChanges": [
            {
                "textDocument": {"uri": app.as_uri(), "version": tick - 1},
                "edits": [
                    {
                        "range": {
                            "start": {"line": 0, "character": 0},
                            "end": {"line": 0, "character": 0},
                        },
                        "newText": "# twice\n",
                    }
                ],
            }
        ]
    }
    result = editor.lua(
        "return require('acp_lsp.handlers').apply_edit(nil, { edit = ... }, { client_id = 0 })",
        edit,
    )
    assert result["applied"] is False and "changed since" in result["failureReason"], result
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, 1, false)[1]") != "# twice"
    assert editor.lua("return vim.b.changedtick") == tick
