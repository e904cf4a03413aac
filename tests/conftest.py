"""Every server the tests start keeps its session history in a throwaway data dir, never in
the user's ~/.local/share/acp-lsp."""

from __future__ import annotations

import os
import tempfile

import pytest


def pytest_configure(config: pytest.Config) -> None:
    os.environ["ACP_LSP_DATA_DIR"] = tempfile.mkdtemp(prefix="acp-lsp-test-data-")
