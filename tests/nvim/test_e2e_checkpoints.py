"""Restore checkpoint and edit-and-resend in real Neovim (DESIGN §2): `gz` and `ge` on one of
the user's messages in the chat, against the real server, with the scripted agent changing
files on disk as Claude Code and Codex do (a shell command that writes one file and creates
another). What a user must see: the files listed before anything changes, the files back as
they were before the message, the open buffer following, and for edit-and-resend a new chat
from before the message with its text in the prompt input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.nvim.conftest import Editor
from tests.nvim.test_e2e_disk import answer, poll, press_in_chat, shell, start

pytestmark = pytest.mark.timeout(90)

APP = "src/app.py"
ASK = "make the greeting friendlier"


def script(original: str) -> dict[str, object]:
    changed = original.replace("Hello, ", "Howdy, ")
    return {
        "on": {
            "session/prompt": [
                *shell(
                    "sh1",
                    "sed -i s/Hello/Howdy/ src/app.py && echo notes > NOTES.md",
                    {"write_file": {"path": APP, "content": changed}},
                    {"write_file": {"path": "NOTES.md", "content": "notes\n"}},
                ),
                answer("Done: friendlier now."),
            ],
            "session/prompt#2": [answer("Asked again, answered again.")],
        }
    }


def one_turn(editor: Editor, workspace: Path, tmp_path: Path) -> str:
    original = (workspace / APP).read_text()
    start(editor, workspace, tmp_path, script(original))
    editor.cmd(f"edit {APP}")
    editor.lua("T.new_session()")
    editor.lua("T.send(...)", ASK)
    editor.wait("T.session().status == 'idle' and T.find_line('2 files changed') ~= nil")
    assert "Howdy" in (workspace / APP).read_text()
    return original


def asked(editor: Editor, keys: str) -> dict[str, Any]:
    """Type ``keys`` on the user's message; the question they ask (left open)."""
    editor.lua("T.answer = 'manual'")
    press_in_chat(editor, ASK, keys)
    poll(editor, "T.pending ~= nil")
    question: dict[str, Any] = editor.lua("return T.selects[#T.selects]")
    return question


def test_gz_lists_the_files_then_puts_them_back(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    original = one_turn(editor, workspace, tmp_path)
    app_buf = editor.lua("return vim.api.nvim_get_current_buf()")

    prompt = asked(editor, "gz")["prompt"]

    assert prompt.startswith("Restore 2 files to before this message?"), prompt
    assert "restore src/app.py" in prompt and "remove NOTES.md" in prompt, prompt
    assert "Howdy" in (workspace / APP).read_text()  # nothing changed before the answer
    editor.lua("T.choose('Restore')")
    poll(editor, "#vim.tbl_filter(function(n) return n.msg:find('restored 2 files') end, "
                 "T.notifications) > 0")  # fmt: skip
    assert (workspace / APP).read_text() == original
    assert not (workspace / "NOTES.md").exists()
    # the open, clean buffer follows the disk and stays unmodified
    editor.wait("vim.deep_equal(vim.api.nvim_buf_get_lines(a[1], 0, -1, false), a[2])",
                app_buf, original.splitlines())  # fmt: skip
    assert editor.lua("return vim.bo[...].modified", app_buf) is False


def test_gz_on_an_agent_message_says_where_to_put_the_cursor(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    one_turn(editor, workspace, tmp_path)
    press_in_chat(editor, "Done: friendlier now.", "gz")
    poll(editor, "#vim.tbl_filter(function(n) return n.msg:find('one of your messages') end, "
                 "T.notifications) > 0")  # fmt: skip
    assert "Howdy" in (workspace / APP).read_text()


def test_ge_opens_a_rewound_chat_with_the_text_in_the_input(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    original = one_turn(editor, workspace, tmp_path)
    first = editor.lua("return T.session().id")

    assert asked(editor, "ge")["items"] == [
        "Restore 2 files too",
        "Keep the files",
        "Cancel",
    ]
    editor.lua("T.choose('Restore 2 files too')")
    poll(editor, f"T.session().id ~= '{first}'")
    # a chat from before the message: the turn is not in it, its text waits in the input
    assert editor.lua("return T.find_line('friendlier now')") is None
    poll(editor, "vim.api.nvim_get_current_buf() == T.view().input")
    assert editor.lua("return vim.api.nvim_buf_get_lines(T.view().input, 0, -1, false)") == [ASK]
    assert (workspace / APP).read_text() == original and not (workspace / "NOTES.md").exists()
    # edited and sent again, it is answered in the new session
    editor.lua("T.send('make the greeting friendlier, in French')")
    editor.wait("T.session().status == 'idle' and T.find_line('answered again') ~= nil")
    assert editor.lua(f"return require('acp_lsp.sessions').by_id['{first}'] ~= nil")
