"""Skip marks for what a platform lacks, each saying why (docs/platforms.md counts them)."""

from __future__ import annotations

import sys

import pytest

needs_symlinks = pytest.mark.skipif(
    sys.platform == "win32",
    reason="making a symlink needs a privilege or Developer Mode on Windows",
)
