"""The extension's own checks that need Node but no VS Code: strict type check, lint, and the
node:test unit tests of the webview's rendering logic, the session reducer and the settings
mapping (editors/vscode/src/test/unit/)."""

from __future__ import annotations

import re

import pytest

from tests.vscode.tools import (
    EXTENSION,
    VSCODE_BUILD,
    build_extension,
    extension_deps_missing,
    run_node,
)

pytestmark = [
    pytest.mark.xdist_group(VSCODE_BUILD),
    pytest.mark.skipif(extension_deps_missing() is not None, reason=extension_deps_missing() or ""),
]


@pytest.mark.timeout(180)
def test_typescript_is_strict_clean() -> None:
    result = run_node(
        ["node_modules/typescript/bin/tsc", "--noEmit", "-p", "."], cwd=EXTENSION, timeout=170
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.timeout(180)
def test_eslint_is_clean() -> None:
    result = run_node(["node_modules/eslint/bin/eslint.js", "src"], cwd=EXTENSION, timeout=170)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.timeout(180)
def test_unit_tests_pass() -> None:
    build_extension(tests=True)
    files = sorted(
        str(f.relative_to(EXTENSION)) for f in (EXTENSION / "out/test/unit").glob("*.test.js")
    )
    assert files, "no unit test files were built"
    result = run_node(["--test", "--test-reporter=tap", *files], cwd=EXTENSION, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    passed = re.search(r"^# pass (\d+)$", output, re.M)
    failed = re.search(r"^# fail (\d+)$", output, re.M)
    assert passed is not None and failed is not None, output
    # A collapsed build (no tests found) must not pass silently.
    assert int(passed.group(1)) >= 40, output
    assert int(failed.group(1)) == 0, output
