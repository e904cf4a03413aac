"""The Neovim demo (scripts/nvim-demo.sh runs Neovim with editors/neovim/demo/init.lua)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pynvim  # type: ignore[import-untyped]
import pytest

from tests.nvim.conftest import BOOT, HELPERS, NVIM, PLUGIN, REPO, SERVER_CMD, Editor

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def demo(workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Editor]:
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / "xdg" / var.lower()))
    monkeypatch.setenv("ACP_LSP_CMD", json.dumps(SERVER_CMD))
    monkeypatch.chdir(workspace)
    init = PLUGIN / "demo" / "init.lua"
    nvim = pynvim.attach(
        "child", argv=[str(NVIM), "--embed", "--headless", "--clean", "-n", "-u", str(init)]
    )
    nvim.exec_lua(BOOT, str(PLUGIN), str(HELPERS))  # test helpers; the plugin is loaded once
    try:
        yield Editor(nvim)
    finally:
        try:
            nvim.exec_lua("for _, c in ipairs(vim.lsp.get_clients()) do c:stop() end")
            nvim.quit()
        except (EOFError, OSError, pynvim.NvimError):
            pass
        nvim.close()


def test_demo_opens_a_session_with_a_prompt_ready(demo: Editor) -> None:
    demo.wait("T.session() ~= nil and vim.b.acp_prompt == true")
    assert demo.lua("return vim.api.nvim_get_current_line()").startswith("Look at @src/app.py")
    assert "demo: <C-s>" in demo.chat()
    names = demo.lua("return vim.tbl_map(vim.api.nvim_buf_get_name, vim.api.nvim_list_bufs())")
    assert any(n.endswith("src/app.py") for n in names)
    demo.lua("require('acp_lsp.chat.prompt').submit()")
    # The demo uses the default: the permission prompt is inline, answered with a key.
    demo.wait("T.find_line('⚠ allow? [1] Allow') ~= nil")
    demo.lua("vim.cmd('stopinsert') vim.api.nvim_set_current_win(T.chat_win())")
    demo.nvim.input("1")
    demo.wait("T.session().status == 'idle' and T.find_line('Done: read, edited, checked') ~= nil")


def test_launcher_script_is_valid_and_documents_itself() -> None:
    script = REPO / "scripts" / "nvim-demo.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    out = subprocess.run(
        ["bash", str(script), "--help"], capture_output=True, text=True, check=True
    )
    assert "--workspace DIR" in out.stdout and "set -euo" not in out.stdout
