"""Where the history is stored: the ``history.path`` setting, else ``history.sqlite3`` in the
platform's data folder (``acp_lsp.platform.dirs``: ``$ACP_LSP_DATA_DIR`` first everywhere)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from acp_lsp.platform.dirs import data_dir

__all__ = ["data_dir", "history_path"]


def history_path(configured: str | None, environ: Mapping[str, str]) -> Path:
    if configured:
        return Path(configured).expanduser()
    return data_dir(environ) / "history.sqlite3"
