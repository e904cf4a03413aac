"""Fixtures for the review-finding tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.e2e.conftest import DEMO_WORKSPACE


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A fresh copy of the demo workspace (src/app.py, src/util.py, …)."""
    ws = tmp_path / "ws"
    shutil.copytree(DEMO_WORKSPACE, ws)
    return ws
