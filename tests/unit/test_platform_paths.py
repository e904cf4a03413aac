"""Paths compared as each platform's file system compares them (acp_lsp.platform.paths), the
check under both sandboxes: Windows' rules tried here with ntpath and PureWindowsPath, its
``file:`` URIs with drive letters through pygls as it runs on Windows."""

from __future__ import annotations

import ntpath
import posixpath
from pathlib import PureWindowsPath

import pygls.uris
import pytest

from acp_lsp.platform.paths import within

WINDOWS = [
    (r"C:\Work\a.py", r"C:\Work", True),
    (r"c:\work\A.PY", r"C:\Work", True),  # any case
    ("C:/Work/src/a.py", r"C:\Work", True),  # either slash
    (r"C:\Work", r"c:\work", True),
    (r"C:\Workbench\a.py", r"C:\Work", False),  # a sibling sharing the prefix
    (r"D:\Work\a.py", r"C:\Work", False),  # another drive
    (r"C:\Work\a.py", "C:\\", True),  # a drive's root
    (r"\\server\share\ws\a.py", r"\\server\share\ws", True),  # UNC
    (r"\\server\other\a.py", r"\\server\share", False),
]


@pytest.mark.parametrize(("path", "root", "inside"), WINDOWS)
def test_windows_paths_compare_in_any_case_and_either_slash(
    path: str, root: str, inside: bool
) -> None:
    assert within(path, root, ntpath) is inside
    # the same answer as pathlib's Windows rules
    assert PureWindowsPath(path).is_relative_to(PureWindowsPath(root)) is inside


@pytest.mark.parametrize(
    ("path", "root", "inside"),
    [
        ("/ws/a.py", "/ws", True),
        ("/ws", "/ws", True),
        ("/WS/a.py", "/ws", False),  # case matters (Linux)
        ("/ws2/a.py", "/ws", False),
        ("/ws/a.py", "/", True),
    ],
)
def test_posix_paths_compare_exactly(path: str, root: str, inside: bool) -> None:
    assert within(path, root, posixpath) is inside


def test_a_windows_uri_with_a_drive_letter_lands_in_its_workspace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pygls.uris, "IS_WIN", True)
    # VS Code quotes the colon and lower-cases the drive; an agent names it as it likes
    path = pygls.uris.to_fs_path("file:///c%3A/Users/Ann/Work/src/main.py")
    assert path == r"c:\Users\Ann\Work\src\main.py"
    assert within(path, r"C:\Users\Ann\Work", ntpath)
    assert not within(path, r"C:\Users\Ann\Workbench", ntpath)
