"""Where acp-lsp keeps its data and user config on each platform (acp_lsp.platform.dirs):
Linux exactly as before, macOS and Windows in their own folders, ACP_LSP_DATA_DIR first."""

from __future__ import annotations

import sys
from pathlib import Path, PureWindowsPath

import pytest

from acp_lsp.config import user_config_path
from acp_lsp.platform.dirs import config_dir, data_dir

HOME = {"HOME": "/home/u"}


def test_linux_keeps_the_xdg_folders() -> None:
    assert data_dir(HOME, "linux") == Path("/home/u/.local/share/acp-lsp")
    assert data_dir({**HOME, "XDG_DATA_HOME": "/x/data"}, "linux") == Path("/x/data/acp-lsp")
    assert config_dir(HOME, "linux") == Path("/home/u/.config/acp-lsp")
    assert config_dir({**HOME, "XDG_CONFIG_HOME": "/x/cfg"}, "linux") == Path("/x/cfg/acp-lsp")
    if sys.platform == "linux":  # this platform's folder (macOS and Windows: below)
        assert user_config_path(HOME) == Path("/home/u/.config/acp-lsp/config.toml")


@pytest.mark.parametrize("system", ["linux", "darwin", "win32"])
def test_the_data_dir_setting_comes_first_everywhere(system: str) -> None:
    assert data_dir({**HOME, "ACP_LSP_DATA_DIR": "/d"}, system) == Path("/d")


@pytest.mark.skipif(sys.platform == "win32", reason="~ is USERPROFILE there, not HOME")
def test_macos_uses_application_support(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/Users/u")
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    expected = Path("/Users/u/Library/Application Support/acp-lsp")
    assert data_dir({}, "darwin") == expected
    assert config_dir({}, "darwin") == expected


def test_windows_uses_local_app_data(monkeypatch: pytest.MonkeyPatch) -> None:
    # platformdirs asks Windows for the known folder; this variable stands in for the answer
    monkeypatch.setenv("WIN_PD_OVERRIDE_LOCAL_APPDATA", r"C:\Users\u\AppData\Local")
    expected = PureWindowsPath(r"C:\Users\u\AppData\Local\acp-lsp")
    assert PureWindowsPath(data_dir({}, "win32")) == expected
    assert PureWindowsPath(config_dir({}, "win32")) == expected
