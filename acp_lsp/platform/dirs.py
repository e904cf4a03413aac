"""Where acp-lsp keeps its data and reads its user config, per platform.

``$ACP_LSP_DATA_DIR`` first everywhere. Linux (and other Unixes) keep the XDG folders exactly:
``$XDG_DATA_HOME/acp-lsp``, else ``~/.local/share/acp-lsp``; ``$XDG_CONFIG_HOME/acp-lsp``,
else ``~/.config/acp-lsp``. macOS and Windows get their own folders through platformdirs:
``~/Library/Application Support/acp-lsp`` and ``%LOCALAPPDATA%\\acp-lsp`` (not roaming: the
history and the agents installed there are this machine's).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from platformdirs.api import PlatformDirsABC

APP = "acp-lsp"


def data_dir(environ: Mapping[str, str], system: str = sys.platform) -> Path:
    if environ.get("ACP_LSP_DATA_DIR"):
        return Path(environ["ACP_LSP_DATA_DIR"]).expanduser()
    native = _native(system)
    if native is not None:
        return Path(native.user_data_dir)
    if environ.get("XDG_DATA_HOME"):
        return Path(environ["XDG_DATA_HOME"]).expanduser() / APP
    return Path(environ.get("HOME", "~")).expanduser() / ".local" / "share" / APP


def config_dir(environ: Mapping[str, str], system: str = sys.platform) -> Path:
    native = _native(system)
    if native is not None:
        return Path(native.user_config_dir)
    base = environ.get("XDG_CONFIG_HOME") or str(Path(environ.get("HOME", "~")) / ".config")
    return Path(base).expanduser() / APP


def _native(system: str) -> PlatformDirsABC | None:
    """platformdirs for macOS or Windows (imported only there: Linux starts without it)."""
    if system == "darwin":
        from platformdirs.macos import MacOS

        return MacOS(APP, appauthor=False)
    if system == "win32":
        from platformdirs.windows import Windows

        return Windows(APP, appauthor=False, roaming=False)
    return None
