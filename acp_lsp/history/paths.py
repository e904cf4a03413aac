"""Where acp-lsp keeps its data: ``$ACP_LSP_DATA_DIR``, else ``$XDG_DATA_HOME/acp-lsp``, else
``~/.local/share/acp-lsp``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def data_dir(environ: Mapping[str, str]) -> Path:
    if environ.get("ACP_LSP_DATA_DIR"):
        return Path(environ["ACP_LSP_DATA_DIR"]).expanduser()
    if environ.get("XDG_DATA_HOME"):
        return Path(environ["XDG_DATA_HOME"]).expanduser() / "acp-lsp"
    return Path(environ.get("HOME", "~")).expanduser() / ".local" / "share" / "acp-lsp"


def history_path(configured: str | None, environ: Mapping[str, str]) -> Path:
    if configured:
        return Path(configured).expanduser()
    return data_dir(environ) / "history.sqlite3"
