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
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.vscode.tools import (
    CHROMIUM,
    CODE_SERVER,
    EXTENSION,
    REPO,
    TOOLS,
    build_extension,
    code_server_missing,
    node_env,
    package_vsix,
)

DRIVER = Path(__file__).with_name("driver.mjs")
SUITE = EXTENSION / "src" / "test" / "e2e" / "suite.ts"
ARTIFACTS = Path(os.environ.get("ACP_LSP_ARTIFACTS", REPO / "artifacts")) / "vscode"
EXTENSION_ID = "acp-lsp.acp-lsp"

SETTINGS = {
    "chat.disableAIFeatures": True,
    "workbench.startupEditor": "none",
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "telemetry.telemetryLevel": "off",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "update.mode": "none",
    "git.enabled": False,
    "workbench.tips.enabled": False,
    "files.hotExit": "off",
    "acpLsp.trace.server": os.environ.get("ACP_LSP_TRACE", "off"),
}

SAMPLE_APP = '''"""A tiny greeting application."""


def greet(name: str) -> str:
    return f"Hello, {name}!"


if __name__ == "__main__":
    print(greet("world"))
'''


def _names(path: Path, pattern: str) -> list[str]:
    return re.findall(pattern, path.read_text(encoding="utf-8"), re.M)


HARNESS_TESTS = _names(SUITE, r'^test\(\s*"([^"]+)"')
UI_CHECKS = [n for n in _names(DRIVER, r'check\(\s*"([^"]+)"') if n != "ui flow"]


@dataclass
class CodeServer:
    url: str
    root: Path
    proc: subprocess.Popen[bytes]
    log: Path
    env: dict[str, str]

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop code-server with everything it started (extension hosts, language servers)."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        # The leader is gone; give the rest of the group the same signal once more.
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return


@pytest.fixture(scope="module")
def code_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CodeServer]:
    reason = code_server_missing()
    if reason is not None:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("vscode")
    vsix = package_vsix(root)
    build_extension(tests=True)  # after packaging: the harness loads the unpacked folder

    for sub in ("xdg/data", "xdg/config", "xdg/cache", "xdg/state", "user/User", "ext"):
        (root / sub).mkdir(parents=True)
    (root / "user" / "User" / "settings.json").write_text(json.dumps(SETTINGS), encoding="utf-8")
    for name in ("harness-ws", "ui-ws"):
        (root / name / "src").mkdir(parents=True)
        (root / name / "src" / "app.py").write_text(SAMPLE_APP, encoding="utf-8")
    port = _free_port()
    (root / "config.yaml").write_text(f"bind-addr: 127.0.0.1:{port}\n", encoding="utf-8")

    env = node_env()
    env.update(
        {
            "XDG_DATA_HOME": str(root / "xdg" / "data"),
            "XDG_CONFIG_HOME": str(root / "xdg" / "config"),
            "XDG_CACHE_HOME": str(root / "xdg" / "cache"),
            "XDG_STATE_HOME": str(root / "xdg" / "state"),
            "ACP_LSP_PYTHON": sys.executable,
            "ACP_LSP_TEST_RESULTS": str(root / "harness-results.json"),
        }
    )
    common = [
        "--config",
        str(root / "config.yaml"),
        "--user-data-dir",
        str(root / "user"),
        "--extensions-dir",
        str(root / "ext"),
    ]
    install = subprocess.run(
        [str(CODE_SERVER), *common, "--install-extension", str(vsix)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert install.returncode == 0, (
        f"--install-extension failed:\n{install.stdout}\n{install.stderr}"
    )

    log = root / "code-server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                str(CODE_SERVER),
                *common,
                "--bind-addr",
                f"127.0.0.1:{port}",
                "--auth",
                "none",
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                "--disable-getting-started-override",
                "--vscode-option",
                "enable-smoke-test-driver",
                "--reconnection-grace-time",
                "5",
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = CodeServer(f"http://127.0.0.1:{port}", root, proc, log, env)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{server.url}/healthz", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"code-server did not come up:\n{server.log_tail()}")
                time.sleep(0.2)
        yield server
    finally:
        _kill_group(proc)


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
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()  # only this run's screenshots count
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
    ):
        shot = ARTIFACTS / name
        assert shot.exists(), f"{shot} missing:\n{ui['output']}"
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
