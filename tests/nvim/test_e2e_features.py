"""End to end: context, slash commands, sessions, modes, health, vim.lsp.enable()."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.nvim.conftest import SERVER_CMD, Editor

pytestmark = pytest.mark.timeout(60)


def test_selection_goes_as_an_embedded_resource(live: Editor) -> None:
    live.cmd("edit src/app.py")
    live.lua("T.new_session()")
    live.cmd("1,3Acp prompt /explain this")
    live.wait("T.session().status == 'idle' and T.find_line('You attached') ~= nil")
    text = live.chat()
    assert "You attached `app.py#L1:3` (3 lines)." in text
    assert "📎 src/app.py:1-3" in text  # the prompt as shown in the chat


def test_at_file_mention_goes_as_a_resource_link(live: Editor) -> None:
    live.lua("T.new_session()")
    live.lua("T.send('/explain @src/util.py please')")
    live.wait("T.session().status == 'idle' and T.find_line('You referenced') ~= nil")
    text = live.chat()
    assert "You referenced `src/util.py`." in text
    assert "✓ Read src/util.py  [read · completed]" in text


def test_slash_commands_complete_while_typing(live: Editor) -> None:
    live.lua("T.new_session()")
    live.wait("T.session().commands ~= nil")
    live.lua("local _, input = T.chat_windows() vim.api.nvim_set_current_win(input)")
    live.nvim.input("i/")
    live.poll("#vim.fn.complete_info({ 'items' }).items > 0")
    assert live.lua("return vim.fn.complete_info({ 'mode' }).mode") == "omni"
    words = live.lua(
        "return vim.tbl_map(function(i) return i.word end, vim.fn.complete_info({'items'}).items)"
    )
    assert words == ["/explain", "/edit", "/run", "/plan", "/help"]
    live.nvim.input("<C-e><Esc>")

    # The omnifunc narrows by what was typed; `@` completes workspace files.
    live.lua("T.set_line('/ex')")
    assert live.lua("return require('acp_lsp.chat.prompt').omnifunc(1, '')") == 0
    items = live.lua("return require('acp_lsp.chat.prompt').omnifunc(0, '/ex')")
    assert [i["word"] for i in items] == ["/explain"]
    assert items[0]["menu"] == "Read a file and explain it"
    files = live.lua("return require('acp_lsp.chat.prompt').omnifunc(0, '@util')")
    assert [i["word"] for i in files] == ["@src/util.py"]


def test_prompt_input_sends_with_enter(live: Editor) -> None:
    live.lua("T.new_session()")
    live.lua("local _, input = T.chat_windows() vim.api.nvim_set_current_win(input)")
    live.lua("vim.api.nvim_buf_set_lines(0, 0, -1, false, { '/help' })")
    live.nvim.input("<CR>")
    live.wait("T.session().status == 'idle' and T.find_line('I am the acp-lsp demo agent') ~= nil")
    assert live.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == [""]
    assert live.chat().startswith("## You\n/help\n")


def test_mode_switch(live: Editor) -> None:
    live.lua("T.new_session()")
    modes = live.lua(
        "return vim.tbl_map(function(m) return m.id end, T.session().modes.availableModes)"
    )
    assert len(modes) > 1
    target = modes[-1]
    live.cmd(f"Acp mode {target}")
    live.wait("T.session().modes.currentModeId == a[1]", target)
    name = live.lua(
        "local id = ... return vim.iter(T.session().modes.availableModes)"
        ":find(function(m) return m.id == id end).name",
        target,
    )
    assert f"mode: {name}" in live.lua("return T.winbar()")


def test_config_option_sets_the_model(live: Editor) -> None:
    live.lua("T.new_session()")
    options = live.lua(
        "return vim.tbl_map(function(o) return o.id end, T.session().config_options)"
    )
    assert "model" in options
    live.cmd("Acp config model demo-small")
    live.wait("T.winbar():find('model: ') ~= nil and T.session().config_options ~= nil")
    live.wait(
        "vim.iter(T.session().config_options):find(function(o) return o.id == 'model' end)"
        ".currentValue == 'demo-small'"
    )


def test_config_picker_groups_options_by_category(live: Editor) -> None:
    live.lua("T.new_session()")
    live.lua("T.answer = 'manual'; T.pending = nil")
    live.cmd("Acp config")
    live.wait("T.pending ~= nil")
    names = live.lua("return T.pending.names")
    live.lua("T.choose(nil)")
    # the agent lists Verbosity first; the model (category "model") is shown first, labelled
    assert names[0].startswith("[Model] Model: "), names
    assert any(n.startswith("Verbosity: ") for n in names[1:]), names


def test_server_exit_marks_sessions_failed(live: Editor) -> None:
    live.lua("T.new_session()")
    nvim_pid = live.lua("return vim.fn.getpid()")
    servers = [
        int(proc.name)
        for proc in Path("/proc").iterdir()
        if proc.name.isdigit()
        and _parent(proc) == nvim_pid
        and b"acp_lsp" in _read(proc / "cmdline")
    ]
    assert len(servers) == 1
    os.kill(servers[0], signal.SIGKILL)
    live.wait("T.session().status == 'failed'")
    assert live.lua("return T.find_line('acp-lsp exited')") is not None


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _parent(proc: Path) -> int:
    stat = _read(proc / "stat").decode(errors="replace")
    return int(stat.rpartition(")")[2].split()[1]) if ")" in stat else -1


def test_sessions_pick_loads_a_closed_session(live: Editor) -> None:
    live.lua("T.new_session()")
    live.lua("T.send('/help')")
    live.wait("T.session().status == 'idle' and T.find_line('I am the acp-lsp demo agent') ~= nil")
    sid = live.lua("return T.session().id")
    live.cmd("Acp close")
    live.wait("require('acp_lsp.sessions').by_id[a[1]] == nil", sid)
    live.lua("T.answer = 1")
    live.cmd("Acp sessions")
    live.wait(
        "T.session() ~= nil and T.session().id == a[1] and T.find_line('I am the acp-lsp') ~= nil",
        sid,
    )
    assert live.chat().startswith("## You\n/help")


def test_checkhealth_reports_server_and_agents(live: Editor) -> None:
    live.lua("T.new_session()")
    live.cmd("checkhealth acp_lsp")
    text = "\n".join(live.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert "OK Neovim 0.11.4" in text
    assert "OK server version: acp-lsp 0.1.0" in text
    assert "OK server running" in text
    assert "OK agent demo (Demo (built-in, offline), acp): default, running" in text
    assert "permission questions: vim.ui.select" in text  # the tests' T.setup chooses select
    assert "OK statusline shows acp_lsp.statusline()" in text
    # acp-lsp doctor's checks, as rows of the report
    assert "OK doctor: data dir: " in text and "writable" in text
    assert "OK doctor: workspace config: " in text


def test_vim_lsp_enable_alone_starts_the_server(editor: Editor, workspace: Path) -> None:
    editor.cmd(f"cd {workspace}")
    editor.lua("vim.lsp.config('acp_lsp', { cmd = ... }) vim.lsp.enable('acp_lsp')", SERVER_CMD)
    editor.cmd("edit README.md")
    editor.wait(
        "#vim.lsp.get_clients({ name = 'acp_lsp', bufnr = 0 }) == 1 "
        "and vim.lsp.get_clients({ name = 'acp_lsp' })[1].initialized"
    )
    client = "vim.lsp.get_clients({ name = 'acp_lsp' })[1]"
    assert editor.lua(f"return {client}.server_capabilities.experimental.acp.version") == 1
    assert editor.lua(f"return {client}.capabilities.experimental.acp") == {
        "requestPermission": True,
        "saveDocument": True,
        "elicitation": True,
        "editorTools": editor.lua("return require('acp_lsp.editor_tools').TOOLS"),
    }
    assert editor.lua(f"return {client}.root_dir") == str(workspace)
    # No warnings about the (empty) settings.
    assert editor.lua("return require('acp_lsp.log').lines()") == []
    # A file without filetype is attached too (the server reads open buffers).
    editor.cmd("edit notes.unknownext")
    editor.wait("#vim.lsp.get_clients({ name = 'acp_lsp', bufnr = 0 }) == 1")
