"""The test suite's own xdist scheduler (tests/support/scheduling.py), run against workers that
behave as xdist's do: a worker runs a test only once it holds the next one (or is told to shut
down), so the last test of what it was sent waits for more work."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.support.scheduling import ResourceScheduling


class Config:
    def __init__(self, workers: int) -> None:
        self.values = {"tx": [f"{workers}*popen"], "loadscopereorder": True}
        self.option = type("Option", (), {"loadscopereorder": True})()

    def getvalue(self, name: str) -> Any:
        return self.values[name]


@dataclass(eq=False)
class Worker:
    """A fake xdist worker: runs what it holds but the last test, until it shuts down."""

    name: str
    queue: list[int] = field(default_factory=list)
    shutting_down: bool = False
    ran: list[str] = field(default_factory=list)

    @property
    def gateway(self) -> Any:
        return type("Gateway", (), {"id": self.name})()

    def send_runtest_some(self, indices: list[int]) -> None:
        self.queue.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True

    def runnable(self) -> bool:
        return len(self.queue) > 1 or (self.shutting_down and bool(self.queue))


def run(collection: list[str], workers: int, limit: int) -> tuple[list[Worker], list[str]]:
    """Schedule and run `collection`; every test's worker, and the heavy groups running at
    once after each step (the scheduler's own count)."""
    pytest.MonkeyPatch().setenv("ACP_LSP_TEST_HEAVY", str(limit))
    sched = ResourceScheduling(Config(workers))  # type: ignore[arg-type]
    nodes = [Worker(f"gw{i}") for i in range(workers)]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, collection)
    sched.schedule()
    overlap: list[str] = []
    for _ in range(10 * len(collection)):
        ready = [node for node in nodes if node.runnable()]
        if not ready:
            break
        node = ready[0]
        index = node.queue.pop(0)
        node.ran.append(collection[index])
        sched.mark_test_complete(node, index)
        running = {
            scope
            for n in nodes
            for scope, tests in sched.assigned_work.get(n, {}).items()
            if scope.startswith("tests/vscode/") and not all(tests.values())
        }
        overlap.append(",".join(sorted(running)))
    return nodes, overlap


def heavy(module: str, group: str, count: int) -> list[str]:
    return [f"tests/vscode/{module}::test_{i}@tests/vscode/{module}:{group}" for i in range(count)]


COLLECTION = [
    *heavy("test_vscode_install.py", "without_uv", 5),
    *heavy("test_vscode_production.py", "flow=claude", 4),
    *heavy("test_vscode_production.py", "flow=codex", 4),
    *heavy("test_vscode_editor_tools.py", "flow", 3),
    *[f"tests/unit/test_x.py::test_{i}" for i in range(30)],
]


ONLY_HEAVY = COLLECTION[:16]
"""No light test to run meanwhile: each worker holds the last test of a heavy group."""


@pytest.mark.parametrize("collection", [COLLECTION, ONLY_HEAVY], ids=["mixed", "only-heavy"])
@pytest.mark.parametrize(("workers", "limit"), [(4, 1), (4, 2), (2, 1), (3, 2), (6, 2)])
def test_every_test_runs_once_and_no_worker_waits_forever(
    collection: list[str], workers: int, limit: int
) -> None:
    nodes, _ = run(collection, workers, limit)
    ran = [test for node in nodes for test in node.ran]
    assert sorted(ran) == sorted(collection)


@pytest.mark.parametrize("limit", [1, 2])
def test_a_group_runs_on_one_worker_and_the_limit_holds(limit: int) -> None:
    nodes, overlap = run(COLLECTION, 4, limit)
    for group in ("without_uv", "flow=claude", "flow=codex", "editor_tools.py:flow"):
        holders = [n.name for n in nodes if any(group in t for t in n.ran)]
        assert len(holders) == 1, (group, holders)
    # a group whose last test waits on its worker counts as ended: at most one more
    assert max(len(step.split(",")) if step else 0 for step in overlap) <= limit + 1


def test_the_longest_heavy_group_starts_first() -> None:
    nodes, _ = run(COLLECTION, 4, 1)
    first = [node.ran[0] for node in nodes if node.ran]
    assert any("test_vscode_install.py" in test for test in first)
