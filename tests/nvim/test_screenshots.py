"""Screenshots of the Neovim front end as a user sees it: a real Neovim TUI in tmux, driven over
its RPC socket against the real server and demo agent; tmux's screen (with colours) becomes a
PNG through headless Chromium (tests/nvim/screenshot.py). Each test asserts what the screen
shows. PNGs go to $ACP_LSP_SCREENSHOTS (default artifacts/nvim/; docs/screenshots/ holds
committed ones). Skips with the reason when tmux or Chromium is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pynvim  # type: ignore[import-untyped]
import pytest

from tests.nvim import screenshot
from tests.nvim.conftest import BOOT, HELPERS, NVIM, PLUGIN, REPO, SERVER_CMD, Editor

pytestmark = pytest.mark.timeout(120)

COLS, ROWS = 160, 50
OUT = Path(os.environ.get("ACP_LSP_SCREENSHOTS", REPO / "artifacts" / "nvim"))


class Tui(Editor):
    """A Neovim in a tmux pane: the Editor API plus the screen."""

    def __init__(self, nvim: pynvim.Nvim, socket: str) -> None:
        super().__init__(nvim)
        self.socket = socket

    def screen(self, escapes: bool = False) -> str:
        return screenshot.capture("acp", self.socket, escapes)

    def settle(self) -> None:
        self.cmd("redraw!")
        time.sleep(0.4)  # tmux has drawn what Neovim wrote

    def shot(self, name: str, must_show: list[str]) -> str:
        """Screenshot once the screen shows every string; returns the plain screen."""
        deadline = time.monotonic() + 10
        while True:
            text = self.screen()
            missing = [s for s in must_show if s not in text]
            if not missing or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert not missing, f"not on screen: {missing}\n{text}"
        browser = screenshot.chromium()
        assert browser is not None
        page = screenshot.ansi_to_html(self.screen(escapes=True), name)
        OUT.mkdir(parents=True, exist_ok=True)
        png = OUT / f"nvim-{name}.png"
        screenshot.render_png(browser, page, png, int(COLS * 8.45) + 18, int(ROWS * 17.5) + 24)
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        return text


@pytest.fixture
def tui(tmp_path: Path) -> Iterator[Tui]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (scripts/test.sh installs the Debian package)")
    if screenshot.chromium() is None:
        pytest.skip("no Chromium (scripts/setup-vscode.sh puts one in .cache, or Debian chromium)")
    ws = tmp_path / "ws"
    shutil.copytree(REPO / "acp_lsp" / "demo" / "workspace", ws)
    env = {"ACP_LSP_DATA_DIR": str(tmp_path / "data"), "COLORTERM": "truecolor"}
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[var] = str(tmp_path / "xdg" / var.lower())
        Path(env[var]).mkdir(parents=True)
    sock = str(tmp_path / "nvim.sock")
    socket = f"acp-lsp-shots-{os.getpid()}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    subprocess.run(
        [*tmux, "new-session", "-d", "-s", "acp", "-x", str(COLS), "-y", str(ROWS), "-c", str(ws),
         "env", *(f"{k}={v}" for k, v in env.items()),
         str(NVIM), "--clean", "-n", "-i", "NONE", "--listen", sock],
        check=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while not os.path.exists(sock):
            assert time.monotonic() < deadline, "Neovim did not start in tmux"
            time.sleep(0.05)
        nvim = pynvim.attach("socket", path=sock)
        nvim.exec_lua("_G.REAL_SELECT = vim.ui.select")  # before the helpers replace it
        nvim.exec_lua(BOOT, str(PLUGIN), str(HELPERS))
        ui = Tui(nvim, socket)
        ui.lua("vim.o.termguicolors = true vim.o.laststatus = 2")
        yield ui
        try:
            ui.lua("for _, c in ipairs(vim.lsp.get_clients()) do c:stop() end")
            ui.lua("vim.wait(3000, function() return #vim.lsp.get_clients() == 0 end, 10)")
            nvim.command("qa!")
        except (EOFError, OSError, pynvim.NvimError):
            pass
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


def test_chat_with_a_streamed_answer_a_tool_call_and_its_diff(tui: Tui) -> None:
    tui.lua("T.setup(...)", SERVER_CMD)
    tui.cmd("edit src/app.py")
    tui.lua("T.answer = 'Allow'")
    tui.lua("T.new_session()")
    tui.lua("T.send('please edit')")
    tui.wait("T.session().status == 'idle' and T.find_line('I added a review note') ~= nil")
    tui.lua(
        "local chat, input = T.chat_windows() vim.api.nvim_win_set_height(input, 3) "
        "vim.api.nvim_win_call(chat, function() "
        "vim.api.nvim_win_set_cursor(0, { T.find_line('please edit'), 0 }) vim.cmd('normal! zt') end)"
    )
    tui.settle()
    tui.shot("chat", ["please edit", "Edit src/app.py", "┌ src/app.py", "I added a review note"])


def test_permission_question_inline_in_the_chat(tui: Tui) -> None:
    tui.lua("T.permission_ui = 'inline'")
    tui.lua("T.setup(...)", SERVER_CMD)
    tui.cmd("edit src/app.py")
    tui.lua("T.new_session()")
    tui.lua("T.send('please edit')")
    tui.wait("T.find_line('⚠ allow?') ~= nil")
    tui.settle()
    tui.shot("permission", ["⚠ allow? [1] Allow  [2] Always allow  [3] Reject"])
    tui.lua("vim.api.nvim_set_current_win(T.chat_win())")
    tui.nvim.input("3")  # answered from the chat; the screen moves on
    tui.poll("T.session().status == 'idle'", timeout_s=20)


def test_context_attachments_listed_above_the_prompt(tui: Tui) -> None:
    tui.lua("T.setup(...)", SERVER_CMD)
    tui.cmd("edit src/util.py")
    tui.lua("T.new_session()")
    tui.lua("T.send('/plan')")
    assert tui.lua("return T.wait_idle(20000)")
    tui.lua(
        "vim.diagnostic.set(vim.api.nvim_create_namespace('t'), 0, {"
        " { lnum = 0, col = 0, message = 'unused import', severity = 2, source = 'lint' } })"
    )
    tui.cmd("Acp add diagnostics")
    tui.cmd("Acp add folder src")
    tui.cmd("1,3Acp add selection")
    tui.lua("local _, input = T.chat_windows() vim.api.nvim_set_current_win(input)")
    tui.lua("vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'Why is this import unused?' })")
    tui.settle()
    tui.shot(
        "context", ["📎 1. diagnostics src/util.py (1)", "📎 2. src/", "📎 3. src/util.py:1-3"]
    )


def test_history_picker_lists_stored_sessions(tui: Tui) -> None:
    tui.lua("T.setup(...)", SERVER_CMD)
    for prompt in ("/help", "/plan", "/explain"):
        tui.lua("T.new_session()")
        tui.lua("T.send(...)", prompt)
        assert tui.lua("return T.wait_idle(20000)")
        if prompt == "/help":
            tui.cmd("Acp rename What the demo agent can do")
    tui.lua("vim.ui.select = _G.REAL_SELECT")  # Neovim's own picker, as a user has it
    tui.nvim.input(":Acp history<CR>")
    tui.shot("history", ["Session history", "What the demo agent can do", "/plan", "Type number"])
    subprocess.run(["tmux", "-L", tui.socket, "send-keys", "-t", "acp", "Escape"], check=True)
    tui.poll("vim.fn.mode() == 'n'")


def test_restore_checkpoint_lists_the_files_before_it_asks(tui: Tui) -> None:
    tui.lua("T.setup(...)", SERVER_CMD)
    tui.cmd("edit src/app.py")
    original = tui.lua("return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n')")
    tui.lua("T.answer = 'Allow'")
    tui.lua("T.new_session()")
    tui.lua("T.send('please edit')")
    tui.wait("T.session().status == 'idle' and T.find_line('I added a review note') ~= nil")
    tui.lua("vim.ui.select = _G.REAL_SELECT")  # Neovim's own picker, as a user has it
    tui.lua(
        "local chat = T.chat_windows() vim.api.nvim_set_current_win(chat) "
        "vim.api.nvim_win_set_cursor(chat, { T.find_line('please edit'), 0 })"
    )
    tui.nvim.input("gz")
    tui.shot("checkpoint", ["Restore 1 file to before this message?", "restore src/app.py"])
    subprocess.run(["tmux", "-L", tui.socket, "send-keys", "-t", "acp", "1", "Enter"], check=True)
    tui.poll(
        "table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr('src/app.py'), 0, -1, false), "
        f"'\\n') == {original!r}"
    )
