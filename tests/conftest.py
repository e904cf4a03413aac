"""Every server the tests start keeps its session history in a throwaway data dir, never in
the user's ~/.local/share/acp-lsp. Under pytest-xdist (`./run tests` runs `-n`, `--dist
loadgroup`), tests that share a module-scoped fixture (one code-server, one built wheel) run on
one worker, so each such fixture is built once (`xdist_groups`)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

# the shared helpers' asserts say what they saw, as the tests' own do
pytest.register_assert_rewrite("tests.support")

# an example's speed is not its result: hypothesis's 200 ms deadline failed test_batcher's
# property once on a loaded machine (timed assertions do not belong in tests), and its
# "too slow to generate" check is a timing too
hypothesis_settings.register_profile(
    "acp-lsp", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.load_profile("acp-lsp")

from tests.model_server import ModelServer  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


SHARED_SCOPES = ("module", "package", "class")
"""Fixtures of these scopes are built once per worker that uses them (session fixtures are
built on every worker anyway)."""


FULL_ONLY = (
    "tests/reliability/",
    "tests/unit/test_bench_smoke.py",
    "tests/vscode/test_vscode",
    "tests/vscode/test_extension_build.py",
    "tests/nvim/",
    "tests/emacs/",
    "tests/e2e/test_production_",
    "tests/e2e/test_editor_tools_agents.py",
    "tests/e2e/test_packaging.py",
    "tests/e2e/test_release.py",
    "tests/e2e/test_registry.py",
)
"""Tests left to the full run: the fault-injection suite and the bench smoke runs (minutes of
CPU), and what needs the full run's installs: real editors, production agents, packaging and
release builds, registry installs."""


def pytest_configure(config: pytest.Config) -> None:
    os.environ["ACP_LSP_DATA_DIR"] = tempfile.mkdtemp(prefix="acp-lsp-test-data-")
    config.addinivalue_line(
        "markers",
        "quick: in `./run tests --quick` (lint, types, unit tests, end to end with the "
        "scripted agents); set from the test's path (FULL_ONLY) and the heavy and "
        "production markers",
    )
    config.addinivalue_line(
        "markers", "production: runs a production agent (full run only, as FULL_ONLY files)"
    )
    config.addinivalue_line(
        "markers",
        "heavy: a long test (soak, fuzz, 10 MB frames, a 300,000-file repository); full run only",
    )


def pytest_unconfigure(config: pytest.Config) -> None:
    # each process (controller, workers) made its own data folder: leave no trace in /tmp
    data = os.environ.get("ACP_LSP_DATA_DIR", "")
    if Path(data).name.startswith("acp-lsp-test-data-"):
        shutil.rmtree(data, ignore_errors=True)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """loadgroup with a bound on the code-server groups running at once (tests/support/
    scheduling.py)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from tests.support.scheduling import ResourceScheduling

    return ResourceScheduling(config, log)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """`-m quick` does not import the full run's modules (they hold no quick test): each
    xdist worker collects on its own, and the editors' and production agents' modules are
    a fifth of the collection's time."""
    if config.getoption("markexpr", "") != "quick":
        return None
    try:
        rel = collection_path.relative_to(REPO).as_posix()
    except ValueError:
        return None
    if collection_path.is_dir():
        rel += "/"
    return True if rel.startswith(FULL_ONLY) else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        if not path.startswith(FULL_ONLY) and not any(
            item.get_closest_marker(name) for name in ("heavy", "production")
        ):
            item.add_marker(pytest.mark.quick)
    xdist_groups(items)


def xdist_groups(items: list[pytest.Item]) -> None:
    """Tests with no group of their own that share a module-scoped fixture of the tests' own,
    directly or through another test (one code-server serving two fixtures), get one group:
    they run on one worker, where each such fixture is built once."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    shared_of: dict[int, list[str]] = {}
    for index, item in enumerate(items):
        if item.get_closest_marker("xdist_group") is not None:
            continue
        info = getattr(item, "_fixtureinfo", None)
        params = getattr(getattr(item, "callspec", None), "params", {})
        module = item.nodeid.split("::", 1)[0]
        keys = []
        for name, defs in info.name2fixturedefs.items() if info is not None else ():
            fixture = defs[-1]
            if fixture.scope in SHARED_SCOPES and fixture.baseid.startswith("tests/"):
                keys.append(f"{module}:{name}" + (f"={params[name]}" if name in params else ""))
        for key in keys[1:]:
            parent[root(key)] = root(keys[0])
        if keys:
            shared_of[index] = keys
    for index, keys in shared_of.items():
        group = root(keys[0])
        items[index].add_marker(pytest.mark.xdist_group(group))


@pytest.fixture
def model() -> Iterator[ModelServer]:
    """The scripted model server (tests/model_server) the production agents talk to."""
    with ModelServer() as server:
        yield server


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    time_by_folder(terminalreporter)
    list_artifacts(terminalreporter)


def time_by_folder(terminalreporter: pytest.TerminalReporter) -> None:
    """Where the run's time went: each folder's tests' time (setup, call and teardown), summed
    over the workers (so more than the wall time when they run side by side)."""
    totals: dict[str, float] = {}
    counts: dict[str, int] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if not isinstance(report, pytest.TestReport):
                continue
            folder = "/".join(report.nodeid.split("/")[:2])
            totals[folder] = totals.get(folder, 0.0) + report.duration
            if report.when == "call":
                counts[folder] = counts.get(folder, 0) + 1
    if not totals:
        return
    terminalreporter.section("time by folder (summed over workers)")
    for folder, seconds in sorted(totals.items(), key=lambda item: -item[1]):
        terminalreporter.write_line(
            f"{folder:<28} {counts.get(folder, 0):>5} tests {seconds:8.1f} s"
        )


def list_artifacts(terminalreporter: pytest.TerminalReporter) -> None:
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
