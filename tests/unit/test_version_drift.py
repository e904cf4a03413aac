"""One version: the server (acp_lsp/__init__.py, pyproject.toml, `acp-lsp --version`), the VS
Code extension (package.json, package-lock.json), the Neovim plugin (version.lua, its
rockspec) and the Emacs package (its Version header) carry the same version, and the
CHANGELOG has a section for it. A file that drifts is named (scripts/release_versions.py does
the reading; `./run release` runs it too)."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from acp_lsp import __version__

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "release_versions", ROOT / "scripts" / "release_versions.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


versions = _load()


def test_every_file_carries_the_one_version() -> None:
    assert versions.source_version() == __version__
    assert versions.drift() == []


def test_the_changelog_has_a_section_for_the_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[?{re.escape(__version__)}\]?( |$)", changelog, re.MULTILINE), (
        f"CHANGELOG.md has no '## {__version__}' section"
    )


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The files that carry the version, copied so one can be made to drift."""
    files = ["acp_lsp/__init__.py", "pyproject.toml", "editors/vscode/package.json"]
    files += ["editors/vscode/package-lock.json", "editors/neovim/lua/acp_lsp/version.lua"]
    files.append("editors/emacs/acp-lsp.el")
    files.append(str(versions.rockspec().relative_to(ROOT)))
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tmp_path / name)
    return tmp_path


def _drift(root: Path) -> list[str]:
    # the copy has no package to run; the CLI is checked on the real tree above
    return list(versions.drift(root, skip=("acp-lsp --version",)))


def test_a_copy_agrees(copy: Path) -> None:
    assert _drift(copy) == []


def test_a_drifted_package_json_is_named(copy: Path) -> None:
    manifest = copy / "editors/vscode/package.json"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(
        text.replace(f'"version": "{__version__}"', '"version": "9.9.9"', 1), "utf-8"
    )
    assert _drift(copy) == [
        f"editors/vscode/package.json: 9.9.9 (expected {__version__} from acp_lsp/__init__.py)"
    ]


def test_a_drifted_lua_version_is_named(copy: Path) -> None:
    (copy / "editors/neovim/lua/acp_lsp/version.lua").write_text("return '0.0.1'\n", "utf-8")
    (problem,) = _drift(copy)
    assert problem.startswith("editors/neovim/lua/acp_lsp/version.lua: 0.0.1")


def test_a_rockspec_of_another_version_is_named(copy: Path) -> None:
    spec = versions.rockspec(copy)
    spec.rename(spec.with_name("acp-lsp.nvim-9.9.9-1.rockspec"))
    (problem,) = _drift(copy)
    assert problem.startswith("editors/neovim/acp-lsp.nvim-9.9.9-1.rockspec:")


def test_a_drifted_emacs_header_is_named(copy: Path) -> None:
    el = copy / "editors/emacs/acp-lsp.el"
    el.write_text(el.read_text("utf-8").replace(f";; Version: {__version__}", ";; Version: 0.0.3"))
    (problem,) = _drift(copy)
    assert problem.startswith("editors/emacs/acp-lsp.el: 0.0.3")


def test_a_static_pyproject_version_must_agree(copy: Path) -> None:
    pyproject = copy / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(
        text.replace('dynamic = ["version"]', 'version = "0.0.2"', 1), encoding="utf-8"
    )
    (problem,) = _drift(copy)
    assert problem.startswith("pyproject.toml: 0.0.2")
