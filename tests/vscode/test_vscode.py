"""Real VS Code end to end: code-server 4.139.1 on Node 24, Debian's Chromium, playwright-core,
the real acp-lsp server (`python -m acp_lsp`) and its demo agent.

One isolated code-server serves the whole module (memory: ~1.5 GB with Chromium; always killed
as a process group). On it:

- the packaged `.vsix` is installed with `code-server --install-extension`;
- VS Code's own extension-test harness runs editors/vscode/src/test/e2e/suite.ts inside the
  real extension host (tests/vscode/driver.mjs harness); every test of that suite is one
  pytest test here, read from the results file it writes;
- tests/vscode/driver.mjs ui uses the chat webview as a person would and saves screenshots to
  artifacts/vscode/ (or $ACP_LSP_ARTIFACTS/vscode); each of its checks is one pytest test here.

Skipped, with the reason, only when scripts/setup-vscode.sh has not been run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.vscode import tools
from tests.vscode.tools import (
    CHROMIUM,
    EXTENSION,
    REPO,
    TOOLS,
    VSCODE_BUILD,
    CodeServer,
    build_extension,
    code_server_missing,
    kill_group,
    package_vsix,
    start_code_server,
)

# builds the extension's tests in editors/vscode and loads the extension from there
pytestmark = pytest.mark.xdist_group(VSCODE_BUILD)

DRIVER = Path(__file__).with_name("driver.mjs")
E2E = EXTENSION / "src" / "test" / "e2e"
SUITES = [E2E / "suite.ts", E2E / "panels.ts", E2E / "diskSync.ts"]  # in index.ts's order
ARTIFACTS = Path(os.environ.get("ACP_LSP_ARTIFACTS", REPO / "artifacts")) / "vscode"
EXTENSION_ID = "acp-lsp.acp-lsp"

SETTINGS = {**tools.SETTINGS, "acpLsp.trace.server": os.environ.get("ACP_LSP_TRACE", "off")}

SAMPLE_APP = '''"""A tiny greeting application."""


def greet(name: str) -> str:
    return f"Hello, {name}!"


if __name__ == "__main__":
    print(greet("world"))
'''


def _names(path: Path, pattern: str) -> list[str]:
    return re.findall(pattern, path.read_text(encoding="utf-8"), re.M)


HARNESS_TESTS = [name for suite in SUITES for name in _names(suite, r'^test\(\s*"([^"]+)"')]
UI_CHECKS = [n for n in _names(DRIVER, r'check\(\s*"([^"]+)"') if n != "ui flow"]


@pytest.fixture(scope="module")
def code_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CodeServer]:
    reason = code_server_missing()
    if reason is not None:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("vscode")
    vsix = package_vsix(root)
    build_extension(tests=True)  # after packaging: the harness loads the unpacked folder
    for name in ("harness-ws", "ui-ws"):
        (root / name / "src").mkdir(parents=True)
        (root / name / "src" / "app.py").write_text(SAMPLE_APP, encoding="utf-8")
    # The bench's flood agent, for a turn longer than the chat keeps in its DOM.
    (root / "ui-ws" / "acp-lsp.toml").write_text(
        f"[agents.flood]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(REPO / 'bench' / 'agents' / 'flood_agent.py')])}\n",
        encoding="utf-8",
    )
    try:
        server = start_code_server(
            root, vsix, SETTINGS, {"ACP_LSP_TEST_RESULTS": str(root / "harness-results.json")}
        )
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        yield server
    finally:
        kill_group(server.proc)


def _driver(server: CodeServer, mode: str, workspace: Path, timeout: float) -> tuple[int, str, str]:
    env = dict(server.env)
    env.update(
        {
            "ACP_LSP_VSCODE_TOOLS": str(TOOLS),
            "CODE_SERVER_URL": server.url,
            "ACP_LSP_WORKSPACE": str(workspace),
            "ACP_LSP_EXTENSION_DIR": str(EXTENSION),
            "ACP_LSP_ARTIFACTS": str(ARTIFACTS),
            "CHROMIUM": str(CHROMIUM),
            "ACP_LSP_HARNESS_TIMEOUT_MS": str(int((timeout - 10) * 1000)),
        }
    )
    node = shutil.which("node", path=env["PATH"])
    assert node is not None
    try:
        result = subprocess.run(
            [node, str(DRIVER), mode],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        return 124, str(exc.stdout or ""), f"driver timed out\n{exc.stderr or ''}"
    return result.returncode, result.stdout, result.stderr


@pytest.fixture(scope="module")
def harness(code_server: CodeServer) -> dict[str, Any]:
    """Run the extension's e2e suite once in VS Code's extension-test harness."""
    code, out, err = _driver(code_server, "harness", code_server.root / "harness-ws", 240)
    results_file = code_server.root / "harness-results.json"
    results: list[dict[str, Any]] = []
    if results_file.exists():
        results = json.loads(results_file.read_text(encoding="utf-8"))
    return {
        "exit": code,
        "results": {r["name"]: r for r in results},
        "output": f"{out}\n{err}\n--- code-server log ---\n{code_server.log_tail()}",
    }


@pytest.fixture(scope="module")
def ui(code_server: CodeServer) -> dict[str, Any]:
    """Use the chat webview through Chromium once; one result per check."""
    for pattern in ("chat-*.png", "session-*.png", "failure.png"):
        for old in ARTIFACTS.glob(pattern):
            old.unlink()  # only this run's screenshots count (other modules' stay)
    code, out, err = _driver(code_server, "ui", code_server.root / "ui-ws", 180)
    checks: dict[str, dict[str, Any]] = {}
    for line in out.splitlines():
        if line.startswith("{"):
            item = json.loads(line)
            checks[item["name"]] = item
    return {"exit": code, "checks": checks, "output": f"{out}\n{err}"}


@pytest.mark.timeout(300)
def test_vsix_installs_into_code_server(code_server: CodeServer) -> None:
    installed = [p.name for p in (code_server.root / "ext").iterdir()]
    assert any(name.startswith(f"{EXTENSION_ID}-") for name in installed), installed


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", HARNESS_TESTS)
def test_in_vscode(harness: dict[str, Any], name: str) -> None:
    result = harness["results"].get(name)
    assert result is not None, f"the harness did not run this test:\n{harness['output']}"
    assert result["ok"], result.get("error")


@pytest.mark.timeout(300)
def test_harness_exit_code_reports_the_verdict(harness: dict[str, Any]) -> None:
    all_ok = bool(harness["results"]) and all(r["ok"] for r in harness["results"].values())
    assert harness["exit"] == (0 if all_ok else 1), harness["output"]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", UI_CHECKS)
def test_chat_view(ui: dict[str, Any], name: str) -> None:
    check = ui["checks"].get(name)
    failure = ui["checks"].get("ui flow")
    assert check is not None, (
        f"the UI flow stopped before this check: "
        f"{failure['detail'] if failure else ''}\n{ui['output']}"
    )
    assert check["ok"], check["detail"]


@pytest.mark.timeout(300)
def test_screenshots_of_the_chat_view_are_saved(ui: dict[str, Any]) -> None:
    for name in (
        "chat-slash-completion.png",
        "chat-attachments.png",
        "chat-permission.png",
        "chat-after-turn.png",
        "chat-tabs.png",
        "chat-tabs-reloaded.png",
        "chat-restore-checkpoint.png",
        "chat-queue.png",
        "editor-hunk-lens.png",
        "chat-edit-resend.png",
    ):
        shot = ARTIFACTS / name
        assert shot.exists(), f"{shot} missing:\n{ui['output']}"
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
