"""The release a maintainer cuts: `./run release` (scripts/release.sh) into a tmp folder makes
every artifact of this version (wheel, sdist, .vsix, the Neovim rock with its rockspec and
source tarball), passes every check it runs, writes SHA256SUMS that `sha256sum -c` verifies,
and prints the manual publish commands. The rock installs with luarocks and carries the
version. The GitHub Actions workflows pass actionlint, and the release workflow runs on this
version's tag. The bridge names itself and its version in `initialize`'s serverInfo. The
release is kept in artifacts/release/<version>/ (or under $ACP_LSP_ARTIFACTS) for CI."""

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
from lsprotocol import types
from pytest_lsp import ClientServerConfig

from acp_lsp import __version__
from tests.e2e.conftest import server_env
from tests.support.lsp_editor import SERVER_COMMAND, TestEditor, capabilities
from tests.vscode.tools import VSCODE_BUILD, extension_deps_missing, node

# the release builds the .vsix in editors/vscode
pytestmark = pytest.mark.xdist_group(VSCODE_BUILD)

ROOT = Path(__file__).resolve().parents[2]
V = __version__
KEPT = Path(os.environ.get("ACP_LSP_ARTIFACTS", ROOT / "artifacts")) / "release" / V
ARTIFACTS = {
    f"acp_lsp-{V}-py3-none-any.whl",
    f"acp_lsp-{V}.tar.gz",
    f"acp-lsp-{V}.vsix",
    f"acp-lsp.nvim-{V}-1.rockspec",
    f"acp-lsp.nvim-{V}.tar.gz",
    f"acp-lsp.nvim-{V}-1.all.rock",
}
CHECKS = [
    f"one version, {V}, in every file that carries it",
    f"CHANGELOG.md has a section for {V}",
    "twine check --strict: wheel and sdist",
    "check-wheel-contents",
    "LICENSE in the wheel and the sdist",
    f"vsce package: acp-lsp-{V}.vsix with the server's wheel",
    "Open VSX checks",
    f"luarocks lint acp-lsp.nvim-{V}-1.rockspec",
    f"luarocks make + pack: acp-lsp.nvim-{V}-1.all.rock",
    "SHA256SUMS over 6 artifacts verifies",
]


def release(
    *args: str | Path, timeout: float = 420, root: Path = ROOT, github_repository: str = ""
) -> subprocess.CompletedProcess[str]:
    # this interpreter builds the wheel, also the one the .vsix ships (bundle-server.mjs)
    env = {**os.environ, "PYTHON": sys.executable, "ACP_LSP_BUILD_PYTHON": sys.executable}
    # on GitHub, --real also checks that the rockspec names that repository
    env["GITHUB_REPOSITORY"] = github_repository
    return subprocess.run(
        ["bash", str(root / "scripts" / "release.sh"), *map(str, args)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    reason = extension_deps_missing()
    if reason is not None:
        pytest.skip(reason)
    tools = subprocess.run(
        ["bash", str(ROOT / "scripts" / "release-tools.sh")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if shutil.which("luarocks") is None:
        pytest.skip(f"luarocks could not be installed: {tools.stderr.strip()[-300:]}")
    out = tmp_path_factory.mktemp("release") / V
    done = release("--out", out)
    assert done.returncode == 0, f"./run release failed:\n{done.stdout}\n{done.stderr[-4000:]}"
    shutil.rmtree(KEPT, ignore_errors=True)
    shutil.copytree(out, KEPT)
    return out, done.stdout


@pytest.mark.timeout(600)
def test_release_builds_every_artifact_and_every_check_passes(dist: tuple[Path, str]) -> None:
    out, stdout = dist
    assert {p.name for p in out.iterdir()} == ARTIFACTS | {"SHA256SUMS"}
    passed = [line.removeprefix("ok: ") for line in stdout.splitlines() if line.startswith("ok: ")]
    assert passed == CHECKS
    assert stdout.splitlines()[-1] == f"release {V}: 6 artifacts, all checks passed"
    for command in ("twine upload", "vsce publish", "ovsx publish", "luarocks upload"):
        assert command in stdout, f"no manual publish command with {command!r}"


def test_the_checksums_verify_and_catch_a_changed_file(
    dist: tuple[Path, str], tmp_path: Path
) -> None:
    out, _ = dist
    listed = (out / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    assert sorted(line.split("  ", 1)[1] for line in listed) == sorted(ARTIFACTS)
    check = subprocess.run(
        ["sha256sum", "-c", "SHA256SUMS"], cwd=out, capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert sorted(check.stdout.splitlines()) == sorted(f"{name}: OK" for name in ARTIFACTS)
    # a download that changed on the way is caught
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    with (copy / f"acp-lsp.nvim-{V}.tar.gz").open("ab") as f:
        f.write(b"\0")
    bad = subprocess.run(
        ["sha256sum", "-c", "SHA256SUMS"], cwd=copy, capture_output=True, text=True, check=False
    )
    assert bad.returncode != 0 and f"acp-lsp.nvim-{V}.tar.gz: FAILED" in bad.stdout


def test_the_artifacts_carry_the_version_and_the_license(dist: tuple[Path, str]) -> None:
    out, _ = dist
    with zipfile.ZipFile(out / f"acp-lsp-{V}.vsix") as vsix:
        names = vsix.namelist()
        vsix_license = vsix.read("extension/LICENSE.txt").decode()
        manifest = vsix.read("extension.vsixmanifest").decode()
    assert f"extension/server/acp_lsp-{V}-py3-none-any.whl" in names
    with zipfile.ZipFile(out / f"acp_lsp-{V}-py3-none-any.whl") as wheel:
        license_text = wheel.read(f"acp_lsp-{V}.dist-info/licenses/LICENSE").decode()
    assert license_text == (ROOT / "LICENSE").read_text(encoding="utf-8")
    # the marketplaces show the .vsix's own license file
    assert vsix_license == license_text and "<License>extension/LICENSE.txt</License>" in manifest
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    with tarfile.open(out / f"acp-lsp.nvim-{V}.tar.gz") as plugin:
        member = plugin.extractfile(f"acp-lsp.nvim-{V}/LICENSE")
        assert member is not None and member.read().decode() == license_text
        names = plugin.getnames()
    assert f"acp-lsp.nvim-{V}/lua/acp_lsp/init.lua" in names
    # what git ignores stays out; the rockspec travels beside its source, not in it
    assert not [n for n in names if "__pycache__" in n or n.endswith(".rockspec")]


def test_the_open_vsx_check_refuses_a_manifest_the_registry_would(
    dist: tuple[Path, str], tmp_path: Path
) -> None:
    """The same .vsix with its manifest's license dropped and a version that is not semver."""
    out, _ = dist
    bad = tmp_path / "bad.vsix"
    with zipfile.ZipFile(out / f"acp-lsp-{V}.vsix") as src, zipfile.ZipFile(bad, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "extension/package.json":
                manifest = json.loads(data)
                del manifest["license"]
                manifest["version"] = "1.0"
                data = json.dumps(manifest).encode()
            dst.writestr(item, data)
    exe = node()
    assert exe is not None
    check = subprocess.run(
        [exe, str(ROOT / "scripts" / "release_ovsx.mjs"), str(ROOT / ".cache" / "ovsx"), str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert check.returncode == 1, check.stdout + check.stderr
    assert "Open VSX would refuse acp-lsp.acp-lsp 1.0:" in check.stderr
    for problem in ("ovsx: no license", "version '1.0' is not semver"):
        assert problem in check.stderr
    assert f"extension.vsixmanifest names acp-lsp.acp-lsp {V}" in check.stderr


def test_the_rock_installs_with_luarocks(dist: tuple[Path, str], tmp_path: Path) -> None:
    out, _ = dist
    tree = tmp_path / "tree"
    rock = out / f"acp-lsp.nvim-{V}-1.all.rock"
    installed = subprocess.run(
        ["luarocks", "install", "--tree", str(tree), "--deps-mode=none", str(rock)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    (version_lua,) = tree.glob("share/lua/*/acp_lsp/version.lua")
    assert f"return '{V}'" in version_lua.read_text(encoding="utf-8")
    (plugin,) = tree.glob(f"lib/luarocks/rocks-*/acp-lsp.nvim/{V}-1/plugin/acp_lsp.lua")
    assert plugin.is_file()


def test_a_real_release_needs_the_version_tag(tmp_path: Path) -> None:
    tagged = subprocess.run(
        ["git", "tag", "--points-at", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True
    )
    if f"v{V}" in tagged.stdout.split() and not dirty.stdout:
        pytest.skip(f"HEAD is tagged v{V} on a clean tree: --real would build")
    done = release("--real", "--out", tmp_path / "out", timeout=60)
    assert done.returncode == 1
    assert "--real needs" in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.fixture
def tagged_clone(dist: tuple[Path, str], tmp_path: Path) -> Path:
    """What the release workflow checks out: a fresh clone of HEAD, tagged v<version>, clean."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    subprocess.run(["git", "-C", str(clone), "tag", f"v{V}"], check=True)
    # what a fresh checkout installs, taken from this one (git ignores both)
    (clone / ".cache").symlink_to(ROOT / ".cache")
    (clone / "editors/vscode/node_modules").symlink_to(ROOT / "editors/vscode/node_modules")
    return clone


def test_a_real_release_refuses_a_rockspec_of_another_repository(
    tagged_clone: Path, tmp_path: Path
) -> None:
    done = release(
        "--real", "--out", tmp_path / "out", root=tagged_clone, github_repository="a/fork"
    )
    assert done.returncode == 1
    assert "the rockspec's source url is not github.com/a/fork's release" in done.stderr


@pytest.mark.timeout(600)
def test_a_real_release_from_a_tagged_clone(tagged_clone: Path, tmp_path: Path) -> None:
    clone = tagged_clone
    done = release("--real", "--out", tmp_path / "out", root=clone)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr[-4000:]}"
    assert "ok: clean tree, HEAD tagged v" + V in done.stdout
    assert done.stdout.splitlines()[-1] == f"release {V}: 6 artifacts, all checks passed"
    assert {p.name for p in (tmp_path / "out").iterdir()} == ARTIFACTS | {"SHA256SUMS"}


def test_the_workflows_pass_actionlint() -> None:
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert [p.name for p in workflows] == ["ci.yml", "release.yml"]
    actionlint = Path(sys.executable).parent / "actionlint"
    if not actionlint.exists():
        pytest.fail("actionlint is missing: ./run setup installs the test extras")
    done = subprocess.run(
        [str(actionlint), "-no-color", *map(str, workflows)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _tag_filter(pattern: str) -> re.Pattern[str]:
    """GitHub's filter pattern syntax: * is anything but /, + repeats what stands before it."""
    regex = re.escape(pattern).replace(r"\*", "[^/]*").replace(r"\+", "+")
    regex = regex.replace(r"\[", "[").replace(r"\]", "]").replace(r"\-", "-")
    return re.compile(regex)


def test_the_release_workflow_runs_on_this_versions_tag() -> None:
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    (tags,) = re.findall(r"^\s+tags: \[\"([^\"]+)\"\]$", text, re.MULTILINE)
    pattern = _tag_filter(tags)
    assert pattern.fullmatch(f"v{V}")
    assert pattern.fullmatch("v1.12.0-rc.1")
    for other in (V, "latest", "v1", "nightly-1.0.0"):
        assert not pattern.fullmatch(other), other
    assert "./run release --real" in text and "gh release upload" in text
    assert 'scripts/release-notes.sh "${TAG#v}"' in text
    # the CI workflow runs the same entry point as the project's CI
    assert "bash .ci/run" in (ROOT / ".github" / "workflows" / "ci.yml").read_text("utf-8")


def test_the_release_notes_are_the_versions_changelog_section(tmp_path: Path) -> None:
    def notes(version: str, changelog: Path) -> subprocess.CompletedProcess[str]:
        script = ROOT / "scripts" / "release-notes.sh"
        return subprocess.run(
            ["bash", str(script), version, str(changelog)], capture_output=True, text=True
        )

    changelog = tmp_path / "CHANGELOG.md"
    changelog.write_text(
        "# Changelog\n\n## Unreleased (1.3.0)\n- next\n\n## 1.2.0 — 2027-01-02\n- this\n\n"
        "## 1.2.0-rc.1\n- its candidate\n\n## [1.1.0]\n- before\n",
        encoding="utf-8",
    )
    assert notes("1.2.0", changelog).stdout == "## 1.2.0 — 2027-01-02\n- this\n\n"
    assert notes("1.1.0", changelog).stdout == "## [1.1.0]\n- before\n"
    for missing in ("1.3.0", "1.2", "2.0.0"):
        assert notes(missing, changelog).returncode == 1, missing
    mine = notes(V, ROOT / "CHANGELOG.md")
    assert mine.returncode == 0 and mine.stdout.startswith(f"## {V}")


async def test_initialize_names_the_server_and_its_version(tmp_path: Path) -> None:
    config = ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=TestEditor, server_env=server_env(tmp_path)
    )
    editor = await config.start()
    assert isinstance(editor, TestEditor)
    try:
        result = await editor.initialize_session(
            types.InitializeParams(capabilities=capabilities("neovim", rich=True))
        )
        assert result.server_info == types.ServerInfo(name="acp-lsp", version=V)
    finally:
        await editor.shutdown_session()
