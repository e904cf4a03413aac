"""The file-access sandbox: what an agent may touch, judged after symlinks and ``..``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_lsp.sandbox import MissingPathError, Sandbox, SandboxError
from tests.support.platforms import needs_symlinks


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "main.py").write_text("print(1)\n")
    extra = tmp_path / "extra"
    extra.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    return {"work": work, "extra": extra, "outside": outside}


def test_file_inside_the_root_resolves_to_itself(tree: dict[str, Path]) -> None:
    box = Sandbox([str(tree["work"])])
    path = str(tree["work"] / "src" / "main.py")
    assert box.resolve(path) == os.path.realpath(path)
    assert box.contains(path)


def test_root_itself_is_inside(tree: dict[str, Path]) -> None:
    box = Sandbox([str(tree["work"])])
    assert box.resolve(str(tree["work"])) == os.path.realpath(tree["work"])


def test_dotdot_escaping_the_root_is_refused(tree: dict[str, Path]) -> None:
    box = Sandbox([str(tree["work"])])
    sneaky = f"{tree['work']}/src/../../outside/secret.txt"
    with pytest.raises(SandboxError) as info:
        box.resolve(sneaky)
    message = str(info.value)
    assert sneaky in message
    assert "outside the workspace" in message
    assert str(tree["work"].resolve()) in message  # names what is allowed
    assert not box.contains(sneaky)


def test_dotdot_staying_inside_is_fine(tree: dict[str, Path]) -> None:
    box = Sandbox([str(tree["work"])])
    path = f"{tree['work']}/src/../src/main.py"
    assert box.resolve(path) == str((tree["work"] / "src" / "main.py").resolve())


def test_sibling_with_common_prefix_is_outside(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work2").mkdir()
    box = Sandbox([str(tmp_path / "work")])
    with pytest.raises(SandboxError):
        box.resolve(str(tmp_path / "work2" / "x.txt"))


@needs_symlinks
def test_symlink_inside_pointing_outside_is_refused(tree: dict[str, Path]) -> None:
    link = tree["work"] / "link"
    link.symlink_to(tree["outside"])
    box = Sandbox([str(tree["work"])])
    with pytest.raises(SandboxError, match="outside the workspace"):
        box.resolve(str(link / "secret.txt"))
    file_link = tree["work"] / "secret-link.txt"
    file_link.symlink_to(tree["outside"] / "secret.txt")
    with pytest.raises(SandboxError):
        box.resolve(str(file_link))


@needs_symlinks
def test_dangling_symlink_pointing_outside_is_refused(tree: dict[str, Path]) -> None:
    # Writing through it would create a file outside the workspace.
    link = tree["work"] / "new.txt"
    link.symlink_to(tree["outside"] / "does-not-exist-yet.txt")
    box = Sandbox([str(tree["work"])])
    with pytest.raises(SandboxError):
        box.resolve(str(link))


@needs_symlinks
def test_symlink_inside_pointing_inside_resolves_to_target(tree: dict[str, Path]) -> None:
    link = tree["work"] / "alias"
    link.symlink_to(tree["work"] / "src")
    box = Sandbox([str(tree["work"])])
    assert box.resolve(str(link / "main.py")) == str((tree["work"] / "src" / "main.py").resolve())


def test_absolute_path_elsewhere_is_refused(tree: dict[str, Path]) -> None:
    box = Sandbox([str(tree["work"])])
    with pytest.raises(SandboxError, match="/etc/passwd"):
        box.resolve("/etc/passwd")
    assert not box.contains("/etc/passwd")


@pytest.mark.parametrize("path", ["~/secrets", "~root/.ssh/id_rsa", "~"])
def test_tilde_paths_are_refused(tree: dict[str, Path], path: str) -> None:
    box = Sandbox([str(tree["work"])], allow_outside=True)
    with pytest.raises(SandboxError, match="~"):
        box.resolve(path)


def test_nul_byte_is_refused_even_when_outside_is_allowed(tree: dict[str, Path]) -> None:
    box = Sandbox([str(tree["work"])], allow_outside=True)
    with pytest.raises(SandboxError, match="NUL"):
        box.resolve(f"{tree['work']}/src/main.py\0.txt")


@pytest.mark.parametrize("path", ["src/main.py", "./src/main.py", "", "../outside"])
def test_relative_paths_are_refused_even_when_outside_is_allowed(
    tree: dict[str, Path], path: str
) -> None:
    box = Sandbox([str(tree["work"])], allow_outside=True)
    with pytest.raises(SandboxError, match="relative"):
        box.resolve(path)
    assert not box.contains(path)


def test_additional_roots_are_allowed(tree: dict[str, Path]) -> None:
    box = Sandbox([str(tree["work"]), str(tree["extra"])])
    assert box.resolve(str(tree["extra"] / "notes.md")) == str(
        (tree["extra"] / "notes.md").resolve()
    )
    with pytest.raises(SandboxError) as info:
        box.resolve(str(tree["outside"] / "secret.txt"))
    assert str(tree["extra"].resolve()) in str(info.value)


def test_allow_outside_permits_any_absolute_path(tree: dict[str, Path]) -> None:
    box = Sandbox([str(tree["work"])], allow_outside=True)
    secret = tree["outside"] / "secret.txt"
    assert box.resolve(str(secret)) == str(secret.resolve())
    # contains() still answers the containment question.
    assert not box.contains(str(secret))


def test_not_yet_existing_file_in_allowed_dir(tree: dict[str, Path]) -> None:
    box = Sandbox([str(tree["work"])])
    new = tree["work"] / "new" / "deeper" / "file.txt"
    assert box.resolve(str(new)) == str(tree["work"].resolve() / "new" / "deeper" / "file.txt")
    with pytest.raises(MissingPathError, match="does not exist"):
        box.resolve(str(new), must_exist=True)


def test_must_exist_accepts_existing_file(tree: dict[str, Path]) -> None:
    box = Sandbox([str(tree["work"])])
    path = tree["work"] / "src" / "main.py"
    assert box.resolve(str(path), must_exist=True) == str(path.resolve())


def test_missing_path_error_is_a_sandbox_error() -> None:
    assert issubclass(MissingPathError, SandboxError)


@needs_symlinks
def test_symlinked_root_accepts_both_spellings(tree: dict[str, Path], tmp_path: Path) -> None:
    root_link = tmp_path / "ws-link"
    root_link.symlink_to(tree["work"])
    box = Sandbox([str(root_link)])
    assert box.roots == [str(tree["work"].resolve())]
    real = str((tree["work"] / "src" / "main.py").resolve())
    assert box.resolve(str(root_link / "src" / "main.py")) == real
    assert box.resolve(str(tree["work"] / "src" / "main.py")) == real
    with pytest.raises(SandboxError):
        box.resolve(str(root_link / ".." / "outside" / "secret.txt"))


def test_relative_root_is_rejected() -> None:
    with pytest.raises(ValueError):
        Sandbox(["relative/root"])


def test_duplicate_roots_collapse(tree: dict[str, Path]) -> None:
    box = Sandbox([str(tree["work"]), f"{tree['work']}/src/.."])
    assert box.roots == [str(tree["work"].resolve())]
