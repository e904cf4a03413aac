"""How `./run tests` spreads the tests over its pytest-xdist workers (`--dist loadgroup`).

xdist's loadgroup sends each group (tests/conftest.py `xdist_groups`: the tests of one
module-scoped fixture) to one worker, and every other test on its own. On this 2-core machine
that alone is not enough: a code-server test group runs VS Code's server, its extension host,
Chromium and an agent, and four of them at once starve each other until their UI flows time
out. So at most ``HEAVY_AT_ONCE`` heavy groups run at a time, the longest first, and the other
workers take the light tests meanwhile (a worker with nothing it may take waits for a heavy
group to end).
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from xdist.scheduler import LoadGroupScheduling

HEAVY = (
    "tests/vscode/test_vscode_install.py",
    "tests/vscode/test_vscode_production.py",
    "vscode-build",
    "tests/vscode/test_vscode_editor_tools.py",
    "tests/vscode/test_vscode_bench.py",
)
"""Scope prefixes of the heavy groups (each starts code-server and Chromium), longest first."""


def heavy_at_once() -> int:
    return int(os.environ.get("ACP_LSP_TEST_HEAVY", "2"))


def rank(scope: str) -> int | None:
    """The heavy group's place in HEAVY (earlier starts first), or None for a light one."""
    return next((i for i, prefix in enumerate(HEAVY) if scope.startswith(prefix)), None)


class ResourceScheduling(LoadGroupScheduling):  # type: ignore[misc]
    """loadgroup, with at most ``heavy_at_once()`` heavy groups running at a time."""

    def __init__(self, config: pytest.Config, log: Any = None) -> None:
        super().__init__(config, log)
        self.limit = heavy_at_once()

    def _running_heavy(self) -> int:
        """Heavy groups under way. A worker runs a test only once it holds the next one (pytest
        tears fixtures down knowing what comes next), so a group's last test waits for more
        work: a group with one test left counts as ended, or its worker would wait forever."""
        return sum(
            1
            for work in self.assigned_work.values()
            for scope, tests in work.items()
            if rank(scope) is not None and list(tests.values()).count(False) > 1
        )

    def _pick(self) -> str | None:
        """The next scope a worker may take: the first heavy one (in HEAVY's order) while
        fewer than the limit run, else the first light one."""
        heavy = sorted(
            (rank(scope), i, scope)
            for i, scope in enumerate(self.workqueue)
            if rank(scope) is not None
        )
        if heavy and self._running_heavy() < self.limit:
            return heavy[0][2]
        return next((scope for scope in self.workqueue if rank(scope) is None), None)

    def _assign_work_unit(self, node: Any) -> None:
        scope = self._pick()
        if scope is None:
            return  # only heavy groups are left and enough run: this worker waits
        work_unit = self.workqueue.pop(scope)
        self.assigned_work.setdefault(node, {})[scope] = work_unit
        worker_collection = self.registered_collections[node]
        node.send_runtest_some(
            [worker_collection.index(nodeid) for nodeid, done in work_unit.items() if not done]
        )

    def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
        super().mark_test_complete(node, item_index, duration)
        # a heavy group that ended may let a waiting worker start the next one
        for other in self.nodes:
            if other is not node:
                self._reschedule(other)
