"""acp-lsp as a user installs it: a wheel and an sdist built with `python -m build`, the wheel
installed into a fresh venv, and a session run through that venv's `acp-lsp` entry point
(`acp-lsp doctor` starts the real server and an agent through it). The same wheel installed
the two one-command ways the README gives, `pipx install` and `uvx --from` / `uv tool install`
(pipx and uv come with the test extras), each into its own home in tmp. The built files are
kept in artifacts/dist/ (or $ACP_LSP_ARTIFACTS/dist) for CI to attach, and the VS Code
extension's .vsix in artifacts/vscode/. The installs fetch
the dependencies from the package index: when it cannot be reached they skip, saying so."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from acp_lsp import __version__
from tests.vscode.tools import EXTENSION, VSCODE_BUILD, extension_deps_missing, package_vsix

pytestmark = pytest.mark.timeout(600)

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("ACP_LSP_ARTIFACTS", ROOT / "artifacts")) / "dist"
VSCODE_ARTIFACTS = ARTIFACTS.parent / "vscode"
# where a venv keeps its programs
VENV_BIN = "Scripts" if sys.platform == "win32" else "bin"


# What pip, pipx and uv print when the package index cannot be reached.
UNREACHABLE = re.compile(
    r"(?i)connection (refused|reset|error|aborted)|failed to (fetch|establish)|tcp connect error"
    r"|name resolution|name or service not known|network is unreachable|timed out"
    r"|no matching distribution|could not find a version|offline"
)


def run(*argv: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv],
        capture_output=True,
        text=True,
        timeout=400,
        **kwargs,  # type: ignore[call-overload]
    )


def installed_or_skip(result: subprocess.CompletedProcess[str], what: str) -> None:
    """Fail on a broken install; skip (printing why) when only the index was out of reach."""
    output = result.stdout + result.stderr
    if result.returncode != 0 and UNREACHABLE.search(output):
        lines = [line.strip() for line in output.splitlines() if UNREACHABLE.search(line)]
        reason = f"{what}: the package index cannot be reached ({lines[-1]})"
        print(reason, file=sys.stderr)
        pytest.skip(reason)
    assert result.returncode == 0, f"{what} failed:\n{output[-3000:]}"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = run(sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", out, ROOT)
    if built.returncode != 0 and "No module named build" in built.stderr:
        pytest.fail("the 'build' package is missing: ./run setup installs the test extras")
    installed_or_skip(built, "python -m build (fetches hatchling)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for path in out.iterdir():
        shutil.copy2(path, ARTIFACTS / path.name)
    return out


def test_wheel_and_sdist_hold_the_package(dist: Path) -> None:
    (wheel,) = dist.glob(f"acp_lsp-{__version__}-py3-none-any.whl")
    (sdist,) = dist.glob(f"acp_lsp-{__version__}.tar.gz")
    names = zipfile.ZipFile(wheel).namelist()
    assert "acp_lsp/__main__.py" in names and "acp_lsp/registry/snapshot.json" in names
    assert not [n for n in names if n.startswith("tests/")]
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "acp-lsp = acp_lsp.__main__:main" in zipfile.ZipFile(wheel).read(entry).decode()
    with tarfile.open(sdist) as tar:
        members = tar.getnames()
    assert f"acp_lsp-{__version__}/pyproject.toml" in members
    assert f"acp_lsp-{__version__}/acp_lsp/server.py" in members


def test_the_wheel_in_a_fresh_venv_runs_a_session(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    venv = tmp_path / "venv"
    assert run(sys.executable, "-m", "venv", venv).returncode == 0
    installed = run(venv / VENV_BIN / "python", "-m", "pip", "install", "-q", wheel)
    installed_or_skip(installed, "pip install <wheel>")
    exe = venv / VENV_BIN / "acp-lsp"
    version = run(exe, "--version")
    assert version.stdout.strip() == f"acp-lsp {__version__}"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {
        "PATH": f"{venv / VENV_BIN}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "ACP_LSP_DATA_DIR": str(tmp_path / "data"),
        "ACP_DEMO_DELAY": "0",
        # Windows programs need SYSTEMROOT (Winsock, under asyncio's event loop)
        **{name: os.environ[name] for name in ("SYSTEMROOT",) if name in os.environ},
    }
    # not this checkout: the venv's own acp_lsp (cwd and PYTHONPATH point elsewhere)
    doctor = run(exe, "doctor", "--agent", "demo", env=env, cwd=workspace)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    demo = next(line for line in doctor.stdout.splitlines() if "agent demo" in line)
    assert " ok " in demo and "session started" in demo
    where = run(
        venv / VENV_BIN / "python",
        "-c",
        "import acp_lsp; print(acp_lsp.__file__)",
        env=env,
        cwd=workspace,
    )
    assert where.stdout.startswith(str(venv)), where.stdout


class User:
    """A user with nothing installed yet: home, XDG dirs, acp-lsp's data dir and a project
    folder in tmp; tools put commands into ~/.local/bin."""

    def __init__(self, tmp_path: Path, **env: str) -> None:
        self.home = tmp_path / "home"
        self.bin_dir = self.home / ".local" / "bin"
        self.workspace = tmp_path / "ws"
        self.workspace.mkdir()
        self.env = dict(os.environ)
        for name in ("PYTHONPATH", "VIRTUAL_ENV", "PIPX_HOME", "PIPX_BIN_DIR", "UV_TOOL_DIR"):
            self.env.pop(name, None)
        self.env.update(
            {
                "HOME": str(self.home),
                "XDG_CONFIG_HOME": str(self.home / ".config"),
                "XDG_DATA_HOME": str(self.home / ".local" / "share"),
                "XDG_STATE_HOME": str(self.home / ".local" / "state"),
                "XDG_CACHE_HOME": str(self.home / ".cache"),
                "ACP_LSP_DATA_DIR": str(self.home / "acp-lsp-data"),
                "ACP_DEMO_DELAY": "0",
                **env,
            }
        )

    def run(self, *argv: str | Path) -> subprocess.CompletedProcess[str]:
        return run(*argv, env=self.env, cwd=self.workspace)

    def assert_acp_lsp_on_path_runs_a_session(self) -> None:
        self.env["PATH"] = f"{self.bin_dir}{os.pathsep}{self.env['PATH']}"
        found = shutil.which("acp-lsp", path=self.env["PATH"])  # acp-lsp.exe on Windows
        assert found is not None and Path(found).with_suffix("") == self.bin_dir / "acp-lsp"
        assert_runs_a_session(self, ["acp-lsp"])


def assert_runs_a_session(user: User, argv: list[str | Path]) -> None:
    """`acp-lsp --version` and `acp-lsp doctor` (the real server and the demo agent) through
    the installed command, as the user runs them."""
    version = user.run(*argv, "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"acp-lsp {__version__}"
    doctor = user.run(*argv, "doctor", "--agent", "demo")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    demo = next(line for line in doctor.stdout.splitlines() if "agent demo" in line)
    assert " ok " in demo and "session started" in demo, doctor.stdout


def tool_bin(name: str) -> Path:
    """pipx / uv from the test extras, beside this interpreter."""
    exe = Path(sys.executable).parent / name
    if not exe.exists():
        pytest.fail(f"{name} is missing: ./run setup installs the test extras")
    return exe


def test_pipx_install_puts_acp_lsp_on_the_path(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    home = tmp_path / "home"
    user = User(
        tmp_path,
        PIPX_HOME=str(home / "pipx"),
        PIPX_BIN_DIR=str(home / ".local" / "bin"),
        PIPX_MAN_DIR=str(home / "man"),
        # pipx picks uv when it finds it; most users have the pip backend (uv has its own test)
        PIPX_DEFAULT_BACKEND="pip",
    )
    installed = user.run(tool_bin("pipx"), "install", wheel)
    installed_or_skip(installed, "pipx install")
    assert f"installed package acp-lsp {__version__}" in installed.stdout
    assert "- acp-lsp" in installed.stdout
    listed = user.run(tool_bin("pipx"), "list", "--short")
    assert listed.stdout.split() == ["acp-lsp", __version__]
    user.assert_acp_lsp_on_path_runs_a_session()


def test_uvx_runs_the_wheel_and_uv_tool_installs_it(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    home = tmp_path / "home"
    user = User(
        tmp_path,
        UV_TOOL_DIR=str(home / "uv-tools"),
        UV_TOOL_BIN_DIR=str(home / ".local" / "bin"),
        UV_CACHE_DIR=str(home / "uv-cache"),
        # this Python; uv must not fetch one of its own
        UV_PYTHON=sys.executable,
        UV_PYTHON_DOWNLOADS="never",
    )
    uvx: list[str | Path] = [tool_bin("uvx"), "--from", wheel, "acp-lsp"]
    installed_or_skip(user.run(*uvx, "--version"), "uvx --from <wheel> acp-lsp")
    assert_runs_a_session(user, uvx)

    installed = user.run(tool_bin("uv"), "tool", "install", wheel)
    installed_or_skip(installed, "uv tool install")
    assert "Installed 1 executable: acp-lsp" in installed.stdout + installed.stderr
    user.assert_acp_lsp_on_path_runs_a_session()


@pytest.mark.xdist_group(VSCODE_BUILD)
def test_the_vsix_holds_the_bundled_extension(tmp_path: Path) -> None:
    """The .vsix a VS Code user installs (`code --install-extension`), kept in
    artifacts/vscode/ for CI; tests/vscode installs the same build into code-server."""
    reason = extension_deps_missing()
    if reason is not None:
        pytest.skip(reason)
    manifest = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    vsix = package_vsix(tmp_path, fresh=True)
    with zipfile.ZipFile(vsix) as zf:
        names = set(zf.namelist())
        packaged = json.loads(zf.read("extension/package.json"))
    assert (packaged["publisher"], packaged["name"]) == ("acp-lsp", "acp-lsp")
    assert packaged["version"] == manifest["version"]
    main = "extension/" + packaged["main"].removeprefix("./")
    assert main in names and "extension/dist/webview.js" in names
    # The bundle only: no sources, tests or node_modules.
    assert not [n for n in names if n.endswith(".ts") or "node_modules/" in n or "/test/" in n]
    VSCODE_ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copy2(vsix, VSCODE_ARTIFACTS / f"acp-lsp-{manifest['version']}.vsix")
