"""Installer subprocesses (npm, pip) must not share the server's stdin, the editor's LSP pipe.

npm is Node, and Node turns an inherited stdin pipe non-blocking while it runs: the server's
own read of the pipe then fails and the server ends mid-install (seen as a cancelled
acp/installAgent in tests/e2e/test_registry.py).
"""

from __future__ import annotations

import os
import sys

import pytest

from acp_lsp.registry.install import _run

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="reads where fd 0 points from /proc/self/fd/0"
)


async def test_an_install_step_reads_dev_null_not_the_servers_stdin() -> None:
    read_end, write_end = os.pipe()  # stands in for the editor's pipe on the server's fd 0
    saved = os.dup(0)
    os.dup2(read_end, 0)
    try:
        out = await _run(
            [sys.executable, "-c", "import os; print(os.path.realpath('/proc/self/fd/0'))"],
            os.environ,
            "probe",
        )
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_end, write_end):
            os.close(fd)
    assert out.strip() == os.devnull
