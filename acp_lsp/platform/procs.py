"""The process reader of this platform: /proc on Linux (cheaper for the 0.2 s tree note,
bench/bench_process_tree.py), psutil elsewhere. Both give :class:`Proc`."""

from __future__ import annotations

import sys

from acp_lsp.platform.proc import Proc

if sys.platform == "linux":
    from acp_lsp.platform.procs_proc import descendants, read, scan
else:
    from acp_lsp.platform.procs_psutil import descendants, read, scan

__all__ = ["Proc", "descendants", "read", "scan"]
