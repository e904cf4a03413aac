"""An agent's change reviewed hunk by hunk in the file's own buffer, in real Neovim (DESIGN §2
"Review by hunk"): the scripted agent changes two distant lines on disk as Claude Code or Codex
would; the open buffer shows each changed line highlighted with the old line above it, `]h`
goes from hunk to hunk, `ghr` undoes one hunk (on disk, the buffer following) and `gha` keeps
the other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.nvim.conftest import Editor
from tests.nvim.test_e2e_disk import answer, poll, shell, start

pytestmark = pytest.mark.timeout(90)

APP = "src/app.py"


def marks(editor: Editor) -> list[dict[str, Any]]:
    """The hunks shown in the current buffer: their row, rows highlighted and virtual lines."""
    found: list[dict[str, Any]] = editor.lua(
        "local ns = vim.api.nvim_create_namespace('acp_lsp.hunks') local out = {} "
        "for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do "
        "local virt = {} for _, l in ipairs(m[4].virt_lines or {}) do table.insert(virt, l[1][1]) end "
        "table.insert(out, { row = m[2] + 1, last = (m[4].end_row or m[2]) + 1, virt = virt }) end "
        "return out"
    )
    return found


def test_two_hunks_shown_in_the_buffer_one_rejected_one_kept(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    app = workspace / APP
    original = app.read_text()
    changed = original.replace("Hello, ", "Howdy, ").replace("raise SystemExit", "sys.exit")
    script = {
        "on": {
            "session/prompt": [
                *shell(
                    "sh1", "sed -i … src/app.py", {"write_file": {"path": APP, "content": changed}}
                ),
                answer("Changed two lines."),
            ]
        }
    }
    start(editor, workspace, tmp_path, script)
    editor.cmd(f"edit {APP}")
    editor.lua("T.new_session()")
    editor.lua("T.send('two changes')")
    editor.wait("T.session().status == 'idle' and T.find_line('Changed two lines.') ~= nil")
    poll(editor, "#vim.api.nvim_buf_get_extmarks(0, vim.api.nvim_create_namespace('acp_lsp.hunks'), "
                 "0, -1, {}) == 2")  # fmt: skip
    shown = marks(editor)
    assert [(m["row"], m["last"]) for m in shown] == [(9, 9), (20, 20)]
    old = original.splitlines()
    assert [m["virt"] for m in shown] == [["- " + old[8]], ["- " + old[19]]]

    editor.cmd("normal! gg")
    editor.nvim.input("]h")
    poll(editor, "vim.api.nvim_win_get_cursor(0)[1] == 9")
    editor.nvim.input("]h")
    poll(editor, "vim.api.nvim_win_get_cursor(0)[1] == 20")
    editor.nvim.input("ghr")
    poll(
        editor,
        "not table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n'):find('sys.exit')",
    )
    assert app.read_text() == original.replace("Hello, ", "Howdy, ")  # that hunk alone undone
    poll(editor, "#vim.api.nvim_buf_get_extmarks(0, vim.api.nvim_create_namespace('acp_lsp.hunks'), "
                 "0, -1, {}) == 1")  # fmt: skip
    editor.nvim.input("[h")
    poll(editor, "vim.api.nvim_win_get_cursor(0)[1] == 9")
    editor.nvim.input("gha")
    poll(editor, "#vim.api.nvim_buf_get_extmarks(0, vim.api.nvim_create_namespace('acp_lsp.hunks'), "
                 "0, -1, {}) == 0")  # fmt: skip
    assert app.read_text() == original.replace("Hello, ", "Howdy, ")
    assert editor.lua("return vim.bo.modified") is False
