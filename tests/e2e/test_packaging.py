"""acp-lsp as a user installs it: a wheel and an sdist built with `python -m build`, the wheel
installed into a fresh venv, and a session run through that venv's `acp-lsp` entry point
(`acp-lsp doctor` starts the real server and an agent through it). The built files are kept
in artifacts/dist/ (or $ACP_LSP_ARTIFACTS/dist) for CI to attach."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from acp_lsp import __version__

pytestmark = pytest.mark.timeout(600)

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("ACP_LSP_ARTIFACTS", ROOT / "artifacts")) / "dist"


def run(*argv: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv],
        capture_output=True,
        text=True,
        timeout=400,
        **kwargs,  # type: ignore[call-overload]
    )


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = run(sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", out, ROOT)
    if built.returncode != 0 and "No module named build" in built.stderr:
        pytest.fail("the 'build' package is missing: ./run setup installs the test extras")
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
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
    installed = run(venv / "bin" / "python", "-m", "pip", "install", "-q", wheel)
    assert installed.returncode == 0, installed.stderr[-2000:]
    exe = venv / "bin" / "acp-lsp"
    version = run(exe, "--version")
    assert version.stdout.strip() == f"acp-lsp {__version__}"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {
        "PATH": f"{venv / 'bin'}:{os.environ['PATH']}",
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "ACP_LSP_DATA_DIR": str(tmp_path / "data"),
        "ACP_DEMO_DELAY": "0",
    }
    # not this checkout: the venv's own acp_lsp (cwd and PYTHONPATH point elsewhere)
    doctor = run(exe, "doctor", "--agent", "demo", env=env, cwd=workspace)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    demo = next(line for line in doctor.stdout.splitlines() if "agent demo" in line)
    assert " ok " in demo and "session started" in demo
    where = run(
        venv / "bin" / "python",
        "-c",
        "import acp_lsp; print(acp_lsp.__file__)",
        env=env,
        cwd=workspace,
    )
    assert where.stdout.startswith(str(venv)), where.stdout
