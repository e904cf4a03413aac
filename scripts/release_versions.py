"""The one version and every file that repeats it.

acp_lsp/__init__.py holds the version; pyproject.toml reads it from there (hatch dynamic
version). The VS Code extension's package.json and package-lock.json, the Neovim plugin's
version.lua and its rockspec, and `acp-lsp --version` must say the same. Run as a script it
prints the version, or names each file that drifted and exits 1 (`./run release` uses it;
tests/unit/test_version_drift.py imports it).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "acp_lsp/__init__.py"
ROCKSPEC_NAME = re.compile(r"^acp-lsp\.nvim-(.+)-(\d+)\.rockspec$")


def source_version(root: Path = ROOT) -> str:
    text = (root / SOURCE).read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    if found is None:
        raise ValueError(f"{SOURCE}: no __version__ line")
    return found.group(1)


def _pyproject(root: Path) -> str:
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    project = data["project"]
    if "version" in project:
        return str(project["version"])
    path = data.get("tool", {}).get("hatch", {}).get("version", {}).get("path")
    # dynamic: the same string as the source, or a pointer elsewhere (drift)
    return source_version(root) if path == SOURCE else f"read from {path!r}"


def _package_json(root: Path) -> str:
    return str(json.loads((root / "editors/vscode/package.json").read_text("utf-8"))["version"])


def _package_lock(root: Path) -> str:
    lock = json.loads((root / "editors/vscode/package-lock.json").read_text("utf-8"))
    top, own = lock["version"], lock["packages"][""]["version"]
    return str(top) if top == own else f"{top} (packages[''] says {own})"


def _version_lua(root: Path) -> str:
    text = (root / "editors/neovim/lua/acp_lsp/version.lua").read_text("utf-8")
    found = re.search(r"""^return\s+['"]([^'"]+)['"]""", text, re.MULTILINE)
    return found.group(1) if found else "no `return '<version>'` line"


def _emacs(root: Path) -> str:
    text = (root / "editors/emacs/acp-lsp.el").read_text("utf-8")
    found = re.search(r"^;; Version: (\S+)$", text, re.MULTILINE)
    return found.group(1) if found else "no ';; Version:' header"


def rockspec(root: Path = ROOT) -> Path:
    """The one rockspec in editors/neovim (named acp-lsp.nvim-<version>-<rev>.rockspec)."""
    found = sorted((root / "editors/neovim").glob("*.rockspec"))
    if len(found) != 1:
        raise ValueError(f"editors/neovim: expected one rockspec, found {[p.name for p in found]}")
    return found[0]


def _rockspec(root: Path) -> str:
    path = rockspec(root)
    named = ROCKSPEC_NAME.match(path.name)
    text = path.read_text("utf-8")
    inside = re.search(r'^version = "(.+)-(\d+)"$', text, re.MULTILINE)
    if named is None or inside is None:
        return f"{path.name}: not acp-lsp.nvim-<version>-<rev>.rockspec with a version line"
    if named.groups() != inside.groups():
        return f"named {named.group(1)}, says {inside.group(1)}"
    # the source is that version's release tarball
    version = inside.group(1)
    if f"/v{version}/acp-lsp.nvim-{version}.tar.gz" not in text:
        return f"{version} (its source url is another version's)"
    return version


def _cli(root: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "acp_lsp", "--version"],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return out.stdout.strip().removeprefix("acp-lsp ") or f"failed: {out.stderr.strip()[-200:]}"


READERS = {
    "pyproject.toml": _pyproject,
    "editors/vscode/package.json": _package_json,
    "editors/vscode/package-lock.json": _package_lock,
    "editors/neovim/lua/acp_lsp/version.lua": _version_lua,
    "editors/neovim/<the rockspec>": _rockspec,
    "editors/emacs/acp-lsp.el": _emacs,
    "acp-lsp --version": _cli,
}


def drift(root: Path = ROOT, skip: tuple[str, ...] = ()) -> list[str]:
    """One line per place that does not carry the source's version, naming its file."""
    version = source_version(root)
    lines = []
    for where, read in READERS.items():
        if where in skip:
            continue
        try:
            found = read(root)
        except (OSError, ValueError, KeyError) as exc:
            found = f"unreadable: {exc}"
        if found != version:
            if where.endswith("<the rockspec>"):
                names = [p.name for p in (root / "editors/neovim").glob("*.rockspec")]
                where = "editors/neovim/" + ", ".join(names or ["(no rockspec)"])
            lines.append(f"{where}: {found} (expected {version} from {SOURCE})")
    return lines


def main() -> int:
    problems = drift()
    if problems:
        sys.stderr.write("version drift:\n  " + "\n  ".join(problems) + "\n")
        return 1
    sys.stdout.write(source_version() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
