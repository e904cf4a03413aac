"""Context in prompts (files, folders, selection, diagnostics, symbol, image) with a visible,
editable attachment list; session management (switch, side by side, rename, delete) and the
statusline component. Real Neovim; the end-to-end ones against the real server + demo agent."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tests.nvim.conftest import Editor
from tests.nvim.test_plugin import SNAPSHOT, load

pytestmark = pytest.mark.timeout(60)

LABELS = "return vim.tbl_map(function(a) return a.label end, T.attachments())"
VIRT = """
local view = T.view()
local marks = vim.api.nvim_buf_get_extmarks(view.input, -1, 0, -1, { details = true })
local out = {}
for _, m in ipairs(marks) do
  for _, l in ipairs(m[4].virt_lines or {}) do table.insert(out, l[1][1]) end
end
return out
"""

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def test_context_kinds_listed_removable_and_sent(live: Editor, workspace: Path) -> None:
    (workspace / "src" / "mod.lua").write_text(
        "local M = {}\n\nfunction M.greet(name)\n  return 'hi ' .. name\nend\n\nreturn M\n"
    )
    live.lua("T.new_session()")
    live.cmd("wincmd p | edit src/util.py")
    live.lua(
        "vim.diagnostic.set(vim.api.nvim_create_namespace('t'), 0, {"
        " { lnum = 0, col = 0, message = 'unused import', severity = 2, source = 'lint' } })"
    )
    live.cmd("Acp add diagnostics")
    live.cmd("Acp add folder src")
    live.cmd("edit src/mod.lua")
    live.lua("vim.api.nvim_win_set_cursor(0, { 4, 4 })")
    live.cmd("Acp add symbol")  # treesitter (no language server for Lua here)
    live.cmd("1,1Acp add selection")
    assert live.lua(LABELS) == [
        "diagnostics src/util.py (1)",
        "src/",
        "symbol M.greet src/mod.lua:3-5",
        "src/mod.lua:1-1",
    ]
    # Visible above the prompt, numbered; the winbar counts them.
    assert live.lua(VIRT) == [
        "📎 1. diagnostics src/util.py (1)",
        "📎 2. src/",
        "📎 3. symbol M.greet src/mod.lua:3-5",
        "📎 4. src/mod.lua:1-1",
    ]
    bar = live.lua("local _, input = T.chat_windows() return vim.wo[input].winbar")
    assert "📎 4 attached (X removes)" in bar
    diag = live.lua("return T.attachments()[1].block.resource.text")
    assert diag == "src/util.py:1:1: warning: unused import [lint]"

    # Removed before sending: X in the prompt opens a picker (index 0 = all).
    live.lua("T.answer = 'src/mod.lua:1-1'")
    live.lua("local _, input = T.chat_windows() vim.api.nvim_set_current_win(input)")
    live.nvim.input("X")
    live.poll("#T.attachments() == 3")
    live.cmd("Acp detach 1")
    assert live.lua(LABELS) == ["src/", "symbol M.greet src/mod.lua:3-5"]

    live.lua("vim.api.nvim_buf_set_lines(0, 0, -1, false, { '/explain' })")
    live.nvim.input("<CR>")
    live.wait("T.session().status == 'idle' and T.find_line('You attached') ~= nil")
    text = live.chat()
    assert "You referenced `src`." in text
    assert "You attached `mod.lua#L3:5` (3 lines)." in text
    assert "unused import" not in text
    assert live.lua("return #T.attachments()") == 0
    assert live.lua(VIRT) == []


def test_image_needs_the_agents_image_capability(editor: Editor, tmp_path: Path) -> None:
    image = tmp_path / "shot.png"
    image.write_bytes(PNG)
    load(editor)
    editor.cmd(f"Acp add image {image}")
    assert editor.lua("return #T.attachments()") == 0
    assert "demo does not accept images (its promptCapabilities.image is not set)" in editor.lua(
        "return T.notifications[#T.notifications].msg"
    )

    load(editor, {**SNAPSHOT, "promptCapabilities": {"image": True}})
    editor.cmd(f"Acp add image {image}")
    block = editor.lua("return T.attachments()[1].block")
    assert block["type"] == "image" and block["mimeType"] == "image/png"
    assert base64.b64decode(block["data"]) == PNG
    blocks = editor.lua(
        "return require('acp_lsp.chat.prompt').build_prompt('look', '/ws', T.attachments())"
    )
    assert [b["type"] for b in blocks] == ["text", "image"]


FOCUS = (
    "vim.api.nvim_set_current_win(vim.fn.win_findbuf(require('acp_lsp.chat').views[...].buf)[1])"
)


def test_sessions_side_by_side_switch_rename_delete(live: Editor) -> None:
    first = live.lua("return T.new_session()")
    second = live.lua("return T.new_session()")
    assert live.lua("return T.session().id") == second
    live.lua("T.answer = 2")  # the picker lists the current session first
    live.cmd("Acp switch split")
    live.wait(
        "#vim.tbl_filter(function(w) return vim.b[vim.api.nvim_win_get_buf(w)].acp_session_id"
        " and not vim.b[vim.api.nvim_win_get_buf(w)].acp_prompt end,"
        " vim.api.nvim_tabpage_list_wins(0)) == 2"
    )
    assert live.lua("return T.session().id") == first

    # The statusline component shows background work (the default statusline has it).
    assert live.lua("return require('acp_lsp').statusline()") == "ACP 2 idle"
    assert "acp_lsp'.statusline()" in live.lua("return vim.o.statusline")
    live.lua("T.send('slow please')")
    live.wait("T.session().status == 'running'")
    live.lua(FOCUS, second)
    assert live.lua("return require('acp_lsp').statusline()") == "ACP ● 1 running"
    live.cmd("Acp cancel")  # the second session is idle: nothing to cancel there
    live.lua(FOCUS, first)
    live.cmd("Acp cancel")
    live.wait("require('acp_lsp.sessions').by_id[a[1]].status == 'idle'", first)

    live.cmd("Acp delete")  # asks first; T.answer = 2 keeps it
    assert live.lua("return T.selects[#T.selects].items") == ["Delete", "Keep"]
    assert live.lua("return require('acp_lsp.sessions').by_id[...] ~= nil", first)
    live.lua("T.answer = 'Delete'")
    live.cmd("Acp delete")
    live.wait("require('acp_lsp.sessions').by_id[a[1]] == nil", first)
    assert live.lua("return require('acp_lsp').statusline()") == "ACP 1 idle"
    assert json.dumps(live.lua("return vim.tbl_keys(require('acp_lsp.chat').views)")) == json.dumps(
        [second]
    )
