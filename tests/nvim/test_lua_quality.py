"""The Lua side: formatted (stylua), linted (luacheck), and its protocol mirror matching
acp_lsp/protocol.py. Tools come from editors/neovim/scripts/install-lua-tools.sh."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from acp_lsp import protocol as p
from tests.nvim.conftest import PLUGIN, REPO, Editor

pytestmark = pytest.mark.timeout(60)


def tool(name: str) -> str:
    local = REPO / ".cache" / "lua-tools" / "node_modules" / ".bin" / name
    found = shutil.which(name) or (str(local) if local.exists() else None)
    if found is None:
        pytest.skip(f"{name} not installed (editors/neovim/scripts/install-lua-tools.sh)")
    return found


def run(cmd: list[str], cwd: Path) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_stylua_formatting() -> None:
    run([tool("stylua"), "--check", "."], PLUGIN)
    run(
        [tool("stylua"), "--check", "--config-path", str(PLUGIN / ".stylua.toml"), "helpers.lua"],
        Path(__file__).parent,
    )


def test_luacheck() -> None:
    run([tool("luacheck"), "--no-color", "-q", "."], PLUGIN)


def test_protocol_mirror_matches_the_server(editor: Editor) -> None:
    lua = editor.lua("return require('acp_lsp.protocol')")
    assert sorted(lua["requests"].values()) == sorted(p.EDITOR_REQUESTS)
    assert sorted(lua["notifications"].values()) == sorted(p.SERVER_NOTIFICATIONS)
    assert sorted(lua["server_requests"].values()) == sorted(p.SERVER_REQUESTS)
    for name, code in lua["errors"].items():
        assert getattr(p, name.upper()) == code, name
    assert set(lua["errors"].values()) >= set(p.ERROR_CODES.values())
    assert tuple(lua["statuses"]) == p.SESSION_STATUSES
    assert lua["VERSION"] == p.PROTOCOL_VERSION
    assert set(lua["client_capability"]) == {
        p.CLIENT_CAP_REQUEST_PERMISSION,
        p.CLIENT_CAP_SAVE_DOCUMENT,
        p.CLIENT_CAP_ELICITATION,
    }
    # Every notification and server request has a handler in the client config.
    handlers = editor.lua("return vim.tbl_keys(require('acp_lsp.config').lsp_config().handlers)")
    assert set(p.SERVER_NOTIFICATIONS) | set(p.SERVER_REQUESTS) <= set(handlers)
