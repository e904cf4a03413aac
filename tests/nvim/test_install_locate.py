"""The Neovim installer on Linux, macOS and Windows (issue 36): acp_lsp.locate's choices of
Python, uv and the venv's programs, run in real Neovim on fake file systems (a set of the files
that exist), platform by platform; then install.plan() with the platform set to Windows and a
fake `py.exe` launcher on PATH, which really runs here (a shell script), so the `py -3` command
line is checked through the probe and into the venv step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.nvim.conftest import Editor

# Runs locate's pure functions against a fake file system: `files` are the files that exist.
FAKE_FS = """
local what, sysname, env, files, arg = ...
local L = require('acp_lsp.locate')
local there = {}
for _, f in ipairs(files) do there[f] = true end
local function exists(f) return there[f] == true end
if what == 'pythons' then
  return vim.tbl_map(function(p) return p.cmd end, L.pythons(L.python_search(sysname, env), sysname, env, exists))
elseif what == 'search' then
  return vim.tbl_map(function(c) return table.concat(c, ' ') end, L.python_search(sysname, env))
elseif what == 'uv' then
  return L.find_tool('uv', sysname, env, exists) or vim.NIL
elseif what == 'which' then
  return L.which(arg, sysname, env, exists) or vim.NIL
end
return { L.venv_bin(arg, 'acp-lsp', sysname), L.venv_bin(arg, 'python', sysname) }
"""

WIN_ENV = {
    "PATH": r'C:\Windows\system32;C:\Windows;"C:\Program Files\Git\cmd"',
    "LOCALAPPDATA": r"C:\Users\ann\AppData\Local",
    "ProgramFiles": r"C:\Program Files",
    "USERPROFILE": r"C:\Users\ann",
}
MAC_ENV = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "HOME": "/Users/ann"}
LINUX_ENV = {"PATH": "/home/ann/.local/bin:/usr/local/bin:/usr/bin:/bin", "HOME": "/home/ann"}


def locate(editor: Editor, what: str, sysname: str, env: dict[str, str], *files: str) -> Any:
    return editor.lua(FAKE_FS, what, sysname, env, list(files), None)


def test_linux_searches_path_only_in_the_same_order(editor: Editor) -> None:
    assert locate(editor, "search", "Linux", LINUX_ENV) == [
        "python3",
        "python3.14",
        "python3.13",
        "python3.12",
        "python3.11",
        "python",
    ]
    found = locate(
        editor,
        "pythons",
        "Linux",
        LINUX_ENV,
        "/usr/bin/python3.12",
        "/usr/local/bin/python3",
        "/usr/bin/python3",
        "/opt/homebrew/bin/python3.13",
    )
    assert found == [["/usr/local/bin/python3"], ["/usr/bin/python3.12"]]
    uv = ("/usr/bin/uv", "/home/ann/.cargo/bin/uv")
    assert locate(editor, "uv", "Linux", LINUX_ENV, *uv) == "/usr/bin/uv"
    assert locate(editor, "uv", "Linux", {"PATH": "/bin"}, *uv) is None  # no usual folders
    assert editor.lua(FAKE_FS, "bin", "Linux", {}, [], "/d/venv") == [
        "/d/venv/bin/acp-lsp",
        "/d/venv/bin/python",
    ]


def test_windows_tries_py_3_then_python_org_folders(editor: Editor) -> None:
    found = locate(
        editor,
        "pythons",
        "Windows_NT",
        WIN_ENV,
        "C:/Windows/py.exe",
        "C:/Users/ann/AppData/Local/Programs/Python/Python312/python.exe",
        "C:/Program Files/Python314/python.exe",
    )
    assert found == [
        ["C:/Windows/py.exe", "-3"],
        ["C:/Program Files/Python314/python.exe"],
        ["C:/Users/ann/AppData/Local/Programs/Python/Python312/python.exe"],
    ]
    # A per-user install's launcher is off PATH; only .exe/.com are programs (a .cmd needs a shell).
    launcher = "C:/Users/ann/AppData/Local/Programs/Python/Launcher/py.exe"
    assert locate(editor, "pythons", "Windows_NT", WIN_ENV, launcher, "C:/Windows/py.cmd") == [
        [launcher, "-3"]
    ]
    git = "C:/Program Files/Git/cmd/git.exe"
    assert editor.lua(FAKE_FS, "which", "Windows_NT", WIN_ENV, [git], "git") == git
    assert locate(editor, "uv", "Windows_NT", WIN_ENV, "C:/Users/ann/.local/bin/uv.exe") == (
        "C:/Users/ann/.local/bin/uv.exe"
    )
    assert editor.lua(FAKE_FS, "bin", "Windows_NT", {}, [], "C:/Users/ann/nvim-data/venv") == [
        "C:/Users/ann/nvim-data/venv/Scripts/acp-lsp.exe",
        "C:/Users/ann/nvim-data/venv/Scripts/python.exe",
    ]
    assert locate(editor, "search", "Windows_NT", {"PATH": ""}) == ["py -3", "python3", "python"]


def test_macos_finds_homebrew_and_python_org_never_apples_stub(editor: Editor) -> None:
    found = locate(
        editor,
        "pythons",
        "Darwin",
        MAC_ENV,
        "/usr/bin/python3",
        "/opt/homebrew/bin/python3",
        "/opt/homebrew/bin/python3.13",
        "/usr/local/bin/python3.12",
        "/Library/Frameworks/Python.framework/Versions/3.11/bin/python3",
    )
    assert found == [
        ["/opt/homebrew/bin/python3.13"],
        ["/opt/homebrew/bin/python3"],
        ["/usr/local/bin/python3.12"],
        ["/Library/Frameworks/Python.framework/Versions/3.11/bin/python3"],
    ]
    assert locate(editor, "pythons", "Darwin", MAC_ENV, "/usr/bin/python3") == []
    # Versioned names on PATH come first; a file met again is tried once.
    brew_env = {**MAC_ENV, "PATH": "/opt/homebrew/bin:/usr/bin"}
    brew = ("/opt/homebrew/bin/python3.12", "/opt/homebrew/bin/python3")
    assert locate(editor, "pythons", "Darwin", brew_env, *brew) == [[brew[0]], [brew[1]]]
    assert locate(editor, "uv", "Darwin", MAC_ENV, "/Users/ann/.local/bin/uv") == (
        "/Users/ann/.local/bin/uv"
    )
    assert editor.lua(FAKE_FS, "bin", "Darwin", {}, [], "/Users/ann/venv")[0] == (
        "/Users/ann/venv/bin/acp-lsp"
    )


def test_the_windows_plan_runs_py_3_and_the_venvs_scripts(editor: Editor, tmp_path: Path) -> None:
    launcher = tmp_path / "win"
    launcher.mkdir()
    # A stand-in launcher: Python 3.13 only when asked for -3 (as `py -3` picks a Python 3).
    (launcher / "py.exe").write_text('#!/bin/sh\n[ "$1" = -3 ] && echo 3.13 && exit 0\nexit 1\n')
    (launcher / "py.exe").chmod(0o755)
    plan = editor.lua(
        "local dir = ... vim.env.PATH = dir vim.env.LOCALAPPDATA = nil vim.env.USERPROFILE = nil "
        "local install = require('acp_lsp.install') install.sysname = 'Windows_NT' "
        "local plan, err = install.plan() "
        "return { plan = plan, err = err, venv = install.venv(), exe = install.exe() }",
        str(launcher),
    )
    assert plan.get("err") is None, plan
    venv = plan["venv"]
    assert plan["plan"]["method"] == "venv"
    assert plan["plan"]["steps"][0] == [f"{launcher}/py.exe", "-3", "-m", "venv", venv]
    assert plan["plan"]["steps"][1][:2] == [f"{venv}/Scripts/python.exe", "-m"]
    assert plan["exe"] == f"{venv}/Scripts/acp-lsp.exe"


def test_without_python_the_message_says_how_to_get_one_there(editor: Editor) -> None:
    # Nothing exists (the file check says no to all), so this machine's Pythons do not count.
    code = (
        "local sysname = ... vim.fn.executable = function() return 0 end "
        "local install = require('acp_lsp.install') install.sysname = sysname "
        "local _, err = install.plan() return err"
    )
    assert editor.lua(code, "Linux") == "it needs uv or Python 3.11+ on PATH, and there is neither"
    assert editor.lua(code, "Darwin") == (
        "it needs uv or Python 3.11+ on PATH, and there is neither; "
        "install brew install python@3.13 or uv, or python.org's installer"
    )
    assert editor.lua(code, "Windows_NT").endswith(
        "; install python.org's installer (with the py launcher), or winget install Python.Python.3.13"
    )
