"""The server comes with the extension (issue 28): a machine with no `acp-lsp` on PATH (HOME and
XDG dirs in tmp, no ACP_LSP_PYTHON; VS Code's extension host takes PATH from a login shell,
which here is /etc/profile's plus ~/.local/bin when it exists, as Debian's ~/.profile has it), the packaged `.vsix` (which ships the acp-lsp wheel of its version) installed in
code-server, no setting touched. tests/vscode/install.mjs opens the chat, asks the demo agent
`/help`, restarts the server and asks again. Two machines:

- `uv` on PATH (in ~/.local/bin, where uv's installer puts it): the extension runs
  `uv tool run --offline --from <shipped wheel> acp-lsp` once uv has the dependencies cached;
- no `uv`: it installs the wheel into a private venv in its global storage with a Python 3.11+
  from PATH (Debian's /usr/bin/python3), once: the restart reuses it.

The server's dependencies come from the package index (pip's and uv's configuration on this
machine); acp-lsp itself only from the wheel. Skipped, with the reason, without
scripts/setup-vscode.sh, without uv in the test extras, or without a Python 3.11+ with venv in
/usr/bin.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.vscode import tools
from tests.vscode.tools import (
    assert_check,
    code_server_missing,
    kill_group,
    package_vsix,
    run_driver,
    start_code_server,
)

DRIVER = Path(__file__).with_name("install.mjs")
SYSTEM_PATH = "/usr/bin:/bin"
UV = Path(sys.executable).with_name("uv")
EXTENSION_ID = "acp-lsp.acp-lsp"


def _version() -> str:
    data = json.loads((tools.EXTENSION / "package.json").read_text(encoding="utf-8"))
    return str(data["version"])


def _system_python_missing() -> str | None:
    probe = "import sys, venv, ensurepip; assert sys.version_info >= (3, 11)"
    for name in ("python3.11", "python3"):
        exe = shutil.which(name, path=SYSTEM_PATH)
        if (
            exe
            and subprocess.run([exe, "-c", probe], capture_output=True, check=False).returncode == 0
        ):
            return None
    return f"no Python 3.11+ with venv and ensurepip on {SYSTEM_PATH}"


@pytest.fixture(scope="module")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reason = code_server_missing()
    if reason is not None:
        pytest.skip(reason)
    return package_vsix(tmp_path_factory.mktemp("vsix"))


PROFILE = """# Debian's ~/.profile: a user's private bin on PATH
if [ -d "$HOME/.local/bin" ] ; then
    PATH="$HOME/.local/bin:$PATH"
fi
"""


def _login_path(home: Path) -> str:
    """PATH as a login shell gives it (VS Code's extension host takes its environment so)."""
    result = subprocess.run(
        ["bash", "-lc", 'printf %s "$PATH"'],
        env={"HOME": str(home), "PATH": SYSTEM_PATH, "SHELL": "/bin/bash"},
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def _server_pids(root: Path) -> list[int]:
    """Running acp-lsp servers of this machine: Python processes running an acp-lsp from under
    `root` (the venv's, or the one uv made in its cache)."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "python" in Path(argv[0]).name and any(
            a.startswith(str(root)) and a.endswith("/bin/acp-lsp") for a in argv[1:2]
        ):
            pids.append(int(proc.name))
    return pids


def _servers(root: Path, expected: int) -> list[int]:
    """The servers left running once the old ones have had time to end (bounded)."""
    deadline = time.monotonic() + 15
    while len(pids := _server_pids(root)) > expected and time.monotonic() < deadline:
        time.sleep(0.5)
    return pids


OLD_SERVER = f"""#!/bin/sh
# acp-lsp from this checkout, calling itself 0.0.9: a configured server of another version
exec {sys.executable} -c "import acp_lsp; acp_lsp.__version__ = '0.0.9'; \\
from acp_lsp.__main__ import main; raise SystemExit(main())" "$@"
"""


def _run(root: Path, vsix: Path, *, uv: bool, old_server: bool = False) -> dict[str, Any]:
    """code-server on a machine with (or without) uv in ~/.local/bin; the driver's checks and
    what the extension logged and left in its global storage."""
    home = root / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".profile").write_text(PROFILE, encoding="utf-8")
    if uv:
        (home / ".local" / "bin" / "uv").symlink_to(UV)
    login_path = _login_path(home)
    assert shutil.which("acp-lsp", path=login_path) is None, f"acp-lsp is on {login_path}"
    assert (shutil.which("uv", path=login_path) is not None) == uv, login_path
    node = tools.node()
    assert node is not None
    path = f"{Path(node).parent}{os.pathsep}{home / '.local' / 'bin'}{os.pathsep}{SYSTEM_PATH}"
    (root / "ws").mkdir()
    (root / "ws" / "notes.txt").write_text("a workspace\n", encoding="utf-8")
    env = {"PATH": path, "HOME": str(home), "SHELL": "/bin/bash", "ACP_LSP_PYTHON": ""}
    for name in ("VIRTUAL_ENV", "PYTHONPATH"):
        env[name] = ""
    try:
        server = start_code_server(root, vsix, tools.SETTINGS, env)
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        drive = tools.driver_env(server, root / "ws", ACP_LSP_INSTALL_TIMEOUT_MS="300000")
        if old_server:
            script = root / "old-acp-lsp"
            script.write_text(OLD_SERVER, encoding="utf-8")
            script.chmod(0o755)
            drive["ACP_LSP_OLD_SERVER"] = str(script)
            drive["ACP_LSP_USER_SETTINGS"] = str(root / "user" / "User" / "settings.json")
            drive["ACP_LSP_EXTENSION_VERSION"] = _version()
        run = run_driver(DRIVER, drive, 540)
        (root / "driver.log").write_text(run.stderr, encoding="utf-8")  # kept for a failure
        # the reload to the old server ends the bundled one: none of its servers may be left
        servers = _servers(root, 0 if old_server else 1)
    finally:
        kill_group(server.proc)
    logs = "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in sorted((root / "user" / "logs").rglob("*.log"))
        if "ACP Agents" in p.name or "acp-lsp" in str(p.parent.name)
    )
    storage = root / "user" / "User" / "globalStorage" / EXTENSION_ID
    return {
        "checks": run.checks,
        "servers": servers,
        "log": logs,
        "storage": storage,
        "output": f"{run.stdout}\n{run.stderr}\n--- extension log ---\n{logs[:3000]}\n...\n{logs[-3000:]}\n--- code-server ---\n{server.log_tail()}",
    }


@pytest.fixture(scope="module")
def with_uv(vsix: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if not UV.exists():
        pytest.skip(f"uv is not installed beside {sys.executable} (the test extras)")
    root = tmp_path_factory.mktemp("install-uv")
    run = _run(root, vsix, uv=True, old_server=True)
    run["uv"] = root / "home" / ".local" / "bin" / "uv"
    return run


@pytest.fixture(scope="module")
def without_uv(vsix: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    reason = _system_python_missing()
    if reason is not None:
        pytest.skip(reason)
    return _run(tmp_path_factory.mktemp("install-venv"), vsix, uv=False)


CHECKS = [
    "the server starts with no setting: the agent picker lists the demo agent",
    "the first session answers",
    "after a restart the server answers again",
]


def _check(run: dict[str, Any], name: str) -> None:
    assert_check(run["checks"], name, run["output"])


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", CHECKS)
def test_first_session_with_uv(with_uv: dict[str, Any], name: str) -> None:
    _check(with_uv, name)


@pytest.mark.timeout(900)
def test_uv_runs_the_shipped_wheel(with_uv: dict[str, Any]) -> None:
    version = _version()
    started = f"starting acp-lsp: {with_uv['uv']} tool run --offline --from "
    wheel = f"/server/acp_lsp-{version}-py3-none-any.whl acp-lsp"
    lines = [line for line in with_uv["log"].splitlines() if started in line]
    assert len(lines) >= 2 and all(wheel in line for line in lines), with_uv["output"]
    assert "installing acp-lsp" not in with_uv["log"], "a venv was made although uv is on PATH"
    assert (with_uv["storage"] / "uv" / "acp-lsp-version").read_text().strip() == version


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", CHECKS)
def test_first_session_without_uv(without_uv: dict[str, Any], name: str) -> None:
    _check(without_uv, name)


@pytest.mark.timeout(900)
def test_private_venv_is_installed_once_and_reused(without_uv: dict[str, Any]) -> None:
    version = _version()
    venv = without_uv["storage"] / "server-venv"
    assert (venv / "acp-lsp-version").read_text().strip() == version
    assert without_uv["log"].count(f"installing acp-lsp {version} into {venv}") == 1, without_uv[
        "output"
    ]
    starts = without_uv["log"].count(f"starting acp-lsp: {venv / 'bin' / 'acp-lsp'}")
    assert starts >= 2, without_uv["output"]


@pytest.mark.timeout(900)
def test_a_restart_leaves_one_server_running(without_uv: dict[str, Any]) -> None:
    servers = without_uv["servers"]
    assert len(servers) == 1, f"acp-lsp processes: {servers}\n{without_uv['output']}"


@pytest.mark.timeout(900)
def test_no_uv_server_is_left_after_a_restart_and_a_reload(with_uv: dict[str, Any]) -> None:
    servers = with_uv["servers"]
    assert servers == [], f"acp-lsp processes: {servers}\n{with_uv['output']}"


@pytest.mark.timeout(900)
def test_a_configured_server_of_another_version_is_a_warning(with_uv: dict[str, Any]) -> None:
    _check(with_uv, "a configured server of another version is a warning naming both versions")
