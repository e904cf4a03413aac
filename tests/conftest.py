"""Every server the tests start keeps its session history in a throwaway data dir, never in
the user's ~/.local/share/acp-lsp."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.model_server import ModelServer

REPO = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    os.environ["ACP_LSP_DATA_DIR"] = tempfile.mkdtemp(prefix="acp-lsp-test-data-")


@pytest.fixture
def model() -> Iterator[ModelServer]:
    """The scripted model server (tests/model_server) the production agents talk to."""
    with ModelServer() as server:
        yield server


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """With ACP_LSP_LIST_ARTIFACTS set (.ci/run sets it): the files the tests left for CI to
    attach (wheel and sdist, the .vsix, screenshots), listed before pytest's closing line."""
    if not os.environ.get("ACP_LSP_LIST_ARTIFACTS"):
        return
    root = Path(os.environ.get("ACP_LSP_ARTIFACTS", REPO / "artifacts"))
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
    terminalreporter.section("artifacts")
    for path in files:
        shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        terminalreporter.write_line(f"{shown}  ({path.stat().st_size:,} bytes)")
    if not files:
        terminalreporter.write_line(f"none in {root}")
