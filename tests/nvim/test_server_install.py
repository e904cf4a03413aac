"""The server comes with the plugin: a Neovim user who adds the README's lazy.nvim spec and has
no `acp-lsp` anywhere gets the server at the plugin's version, installed from this checkout,
and a first session with the demo agent that answers, with no setting touched.

Real Neovim, lazy.nvim installing the plugin from this checkout (as tests/nvim/test_lazy_install.py
does), HOME and XDG dirs in tmp, PATH without any acp-lsp. Two machines:
- uv on PATH (a directory with only `uv`): the first `:Acp new` installs the server with uv,
  then runs the session; the spec's `build` step (`:Lazy build`) installs it again.
- no uv: the `build` step makes a private venv with Python's venv + pip.
The installs fetch the server's dependencies from the package index: a test skips, saying so,
when the index cannot be reached."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pynvim  # type: ignore[import-untyped]
import pytest

from acp_lsp import __version__
from tests.e2e.test_packaging import UNREACHABLE
from tests.nvim.conftest import PLUGIN, Editor, close
from tests.nvim.test_lazy_install import start_lazy_nvim

pytestmark = pytest.mark.timeout(600)

INSTALL_MS = 480_000  # a cold install downloads the server's dependencies


def clean_path(tmp_path: Path, *, uv: bool) -> str:
    """PATH with no acp-lsp (nor uv unless asked), a Python 3.11+ as `python3`, and `uv` alone
    in a directory of its own when asked."""
    drop = ("acp-lsp", "uv", "uvx")
    dirs = [d for d in os.environ["PATH"].split(os.pathsep) if d]
    dirs = [d for d in dirs if not any((Path(d) / name).exists() for name in drop)]
    python = tmp_path / "python-only"
    python.mkdir()
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    (python / "python3").symlink_to(base)
    dirs.insert(0, str(python))
    if uv:
        found = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
        if not Path(found).exists():
            pytest.skip("uv is not installed (./run setup installs the test extras)")
        only = tmp_path / "uv-only"
        only.mkdir()
        (only / "uv").symlink_to(found)
        dirs.insert(0, str(only))
    path = os.pathsep.join(dirs)
    if shutil.which("git", path=path) is None:
        pytest.skip("git is needed for lazy.nvim's bootstrap and is not on PATH")
    return path


@contextmanager
def lazy_nvim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, uv: bool
) -> Iterator[pynvim.Nvim]:
    """The README's lazy.nvim spec in a clean config, HOME in tmp, PATH without acp-lsp."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    for var in ("VIRTUAL_ENV", "UV_CACHE_DIR", "PIP_CACHE_DIR", "UV_PYTHON", "PYTHONPATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", clean_path(tmp_path, uv=uv))
    nv = start_lazy_nvim(tmp_path, monkeypatch)
    try:
        yield nv
    finally:
        close(nv)


def log(nvim: pynvim.Nvim) -> str:
    return "\n".join(nvim.exec_lua("return require('acp_lsp.log').lines()"))


def skip_if_unreachable(nvim: pynvim.Nvim) -> None:
    text = log(nvim)
    if "installing the server failed" in text and UNREACHABLE.search(text):
        lines = [line for line in text.splitlines() if UNREACHABLE.search(line)]
        pytest.skip(f"the package index cannot be reached ({lines[-1].strip()})")


def installed(nvim: pynvim.Nvim) -> dict[str, str]:
    """The plugin's record of its install; the server it installed must run."""
    stamp = nvim.exec_lua("return require('acp_lsp.install').installed()")
    assert stamp, log(nvim)
    return dict(stamp)


def build(nvim: pynvim.Nvim) -> None:
    """lazy.nvim runs the spec's `build` step (`:Lazy! build` waits for it)."""
    nvim.command("Lazy! build acp-lsp")
    skip_if_unreachable(nvim)
    tasks = nvim.exec_lua(
        "local p = require('lazy.core.config').plugins['acp-lsp'] "
        "return vim.tbl_map(function(t) return { name = t.name, errors = t:has_errors(), "
        "output = t:output() } end, p._.tasks or {})"
    )
    assert [t["name"] for t in tasks] == ["build"], tasks
    assert not any(t["errors"] for t in tasks), tasks


def first_session_answers(nvim: pynvim.Nvim) -> None:
    """`:Acp new` on the default agent (the README's opts: the demo), then a prompt the agent
    answers (its thought quotes the prompt)."""
    nvim.command("Acp new")
    started = nvim.exec_lua(
        f"return vim.wait({INSTALL_MS}, function() "
        "local s = require('acp_lsp.sessions').current() "
        "return s ~= nil or require('acp_lsp.log').lines()[1] ~= nil "
        "and table.concat(require('acp_lsp.log').lines(), '\\n'):find('failed') ~= nil end, 50)"
    )
    skip_if_unreachable(nvim)
    assert started and nvim.exec_lua("return require('acp_lsp.sessions').current() ~= nil"), log(
        nvim
    )
    nvim.exec_lua(
        "require('acp_lsp.actions').send(require('acp_lsp.sessions').current(), 'hello there')"
    )
    chat = (
        "local s = require('acp_lsp.sessions').current() "
        "local v = require('acp_lsp.chat').views[s.id] "
        "return table.concat(vim.api.nvim_buf_get_lines(v.buf, 0, -1, false), '\\n')"
    )
    answered = nvim.exec_lua(
        "local chat = ... return vim.wait(30000, function() "
        "local _, n = assert(loadstring(chat))():gsub('hello there', '') return n >= 2 end, 20)",
        chat,
    )
    assert answered, nvim.exec_lua(chat) + "\n" + log(nvim)
    nvim.command("Acp cancel")


def checkhealth(nvim: pynvim.Nvim) -> str:
    nvim.command("checkhealth acp_lsp")
    report = "\n".join(nvim.current.buffer[:])
    assert "ERROR" not in report and "WARNING" not in report, report
    assert f"OK plugin version {__version__}" in report
    assert f"OK server version: acp-lsp {__version__}" in report
    return report


def the_server_cmd(nvim: pynvim.Nvim) -> list[str]:
    return list(nvim.exec_lua("return vim.lsp.get_clients({ name = 'acp_lsp' })[1].config.cmd"))


def test_with_uv_the_first_session_installs_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with lazy_nvim(tmp_path, monkeypatch, uv=True) as nvim:
        assert nvim.exec_lua("return vim.fn.executable('acp-lsp')") == 0
        first_session_answers(nvim)
        stamp = installed(nvim)
        assert stamp["method"] == "uv" and stamp["version"] == __version__
        venv = nvim.exec_lua("return require('acp_lsp.install').venv()")
        assert the_server_cmd(nvim) == [f"{venv}/bin/acp-lsp"]
        assert not (Path(venv) / "bin" / "pip").exists()  # uv's venv, not Python's
        report = checkhealth(nvim)
        assert f"installed by the plugin with uv for version {__version__}" in report

        # The build step installs it again (as after an update), and the server still runs.
        before = (Path(venv) / "bin" / "acp-lsp").stat().st_mtime_ns
        build(nvim)
        assert (Path(venv) / "bin" / "acp-lsp").stat().st_mtime_ns != before
        assert installed(nvim)["method"] == "uv"
        checkhealth(nvim)
        # :Acp install, for other plugin managers, does the same (its message is the second that
        # says the running server stays).
        nvim.command("Acp install")
        assert nvim.exec_lua(
            f"return vim.wait({INSTALL_MS}, function() local _, n = table.concat("
            "require('acp_lsp.log').lines(), '\\n'):gsub('the running server stays', '') "
            "return n == 2 end, 50)"
        ), log(nvim)

        # After a plugin update (its install recorded for another version), the next start
        # installs the server again before starting it.
        record = Path(venv).parent / "install.json"
        record.write_text(json.dumps({**installed(nvim), "version": "0.0.1"}), encoding="utf-8")
        nvim.exec_lua("vim.lsp.stop_client(vim.lsp.get_clients({ name = 'acp_lsp' }), true)")
        assert nvim.exec_lua(
            "return vim.wait(10000, function() return require('acp_lsp.client').get() == nil end)"
        )
        nvim.command("Acp new")
        restarted = nvim.exec_lua(
            f"return vim.wait({INSTALL_MS}, function() local c = require('acp_lsp.client').get() "
            "return c ~= nil and c.initialized end, 50)"
        )
        skip_if_unreachable(nvim)
        assert restarted, log(nvim)
        assert installed(nvim)["version"] == __version__
        installs = log(nvim).count(f"installing the server (acp-lsp {__version__}) with uv")
        assert installs == 4, log(nvim)  # the first start, build, :Acp install, after the update


def test_without_uv_the_build_step_makes_a_private_venv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with lazy_nvim(tmp_path, monkeypatch, uv=False) as nvim:
        assert nvim.exec_lua("return vim.fn.executable('acp-lsp') + vim.fn.executable('uv')") == 0
        build(nvim)
        stamp = installed(nvim)
        assert stamp["method"] == "venv" and stamp["version"] == __version__
        assert stamp["source"] == str(PLUGIN.parent.parent)  # this checkout
        venv = Path(nvim.exec_lua("return require('acp_lsp.install').venv()"))
        assert (venv / "bin" / "pip").exists()  # Python's venv
        assert (venv / "pyvenv.cfg").is_file()

        first_session_answers(nvim)
        assert the_server_cmd(nvim) == [str(venv / "bin" / "acp-lsp")]
        report = checkhealth(nvim)
        assert f"installed by the plugin with venv for version {__version__}" in report


def test_the_first_start_without_uv_or_python_311_says_what_is_missing(
    editor: Editor, tmp_path: Path
) -> None:
    old = tmp_path / "old-python"
    old.mkdir()
    (old / "python3").write_text("#!/bin/sh\necho 3.9\n")
    (old / "python3").chmod(0o755)
    editor.lua("vim.env.PATH = ... require('acp_lsp').setup({})", str(old))
    editor.lua("pcall(vim.cmd, 'Acp new')")  # an error message fails an API command call
    editor.wait("#T.notifications >= 2")
    notes = editor.lua("return vim.tbl_map(function(n) return n.msg end, T.notifications)")
    missing = (
        "acp: cannot install the server: it needs uv or Python 3.11+ on PATH, "
        "and there is neither (python3 is 3.9)"
    )
    assert notes[0] == missing
    assert notes[1].endswith(missing[len("acp: ") :]), notes  # the session could not start
    assert editor.lua("return require('acp_lsp.client').get()") is None


def test_checkhealth_warns_on_a_server_of_another_version(editor: Editor, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "acp-lsp").write_text('#!/bin/sh\n[ "$1" = --version ] && echo "acp-lsp 0.0.9"\n')
    (other / "acp-lsp").chmod(0o755)
    editor.lua("vim.env.PATH = ... .. ':' .. vim.env.PATH require('acp_lsp').setup({})", str(other))
    editor.cmd("checkhealth acp_lsp")
    report = "\n".join(editor.nvim.current.buffer[:])
    assert f"OK plugin version {__version__}" in report
    assert f"OK server: acp-lsp ({other}/acp-lsp, found on PATH)" in report
    assert f"WARNING server version: acp-lsp 0.0.9, not the plugin version {__version__}" in report
    assert "ADVICE:\n    - :Acp install installs the server at the plugin version" in report


# A real server that says it is another version and speaks another acp protocol version.
PRETEND = (
    "import sys, acp_lsp, acp_lsp.protocol as p; acp_lsp.__version__ = {version!r}; "
    "p.PROTOCOL_VERSION = {protocol}; from acp_lsp.__main__ import main; sys.exit(main())"
)


@pytest.mark.parametrize(
    ("version", "protocol", "warnings"),
    [
        (
            __version__,
            1,
            [],
        ),
        (
            "0.0.9",
            0,
            [
                "acp: the server speaks acp protocol 0, older than the 1 this plugin needs: "
                "run :Acp install",
                f"acp: the server is acp-lsp 0.0.9, older than this plugin ({__version__}): "
                "run :Acp install",
            ],
        ),
        (
            "9.0.0",
            2,
            [
                "acp: the server speaks acp protocol 2, newer than the 1 this plugin needs: "
                "update the plugin",
                f"acp: the server is acp-lsp 9.0.0, newer than this plugin ({__version__}): "
                "update the plugin",
            ],
        ),
    ],
)
def test_the_plugin_warns_when_the_server_is_older_or_newer(
    editor: Editor, workspace: Path, version: str, protocol: int, warnings: list[str]
) -> None:
    editor.cmd(f"cd {workspace}")
    code = PRETEND.format(version=version, protocol=protocol)
    editor.lua("T.setup(...)", [sys.executable, "-c", code])
    editor.lua(
        "T.started = false require('acp_lsp.client').with_client(function(c) T.started = c ~= nil end)"
    )
    editor.wait("T.started")
    assert editor.lua("return require('acp_lsp.client').get().server_info") == {
        "name": "acp-lsp",
        "version": version,
    }
    notes = editor.lua(
        "return vim.tbl_map(function(n) return n.msg end, vim.tbl_filter(function(n) "
        "return n.level == vim.log.levels.WARN end, T.notifications))"
    )
    assert notes == warnings
