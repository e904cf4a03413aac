"""Installing a registry agent into the data dir, pinned to one version.

npx packages go into a private npm prefix, uvx packages into a private venv, binaries are
downloaded (sha256-checked when the registry gives a checksum) and unpacked. What to run is
written to ``.installed.json`` last, so a half-finished install is never mistaken for one.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import shutil
import stat
import sys
import tarfile
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx

from acp_lsp.registry.entries import Distribution, RegistryEntry, package_name

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]
Report = Callable[[str], None]
MARKER = ".installed.json"


class InstallError(Exception):
    pass


def install_dir(root: Path, agent_id: str, version: str) -> Path:
    return root / agent_id / version


def installed(root: Path, agent_id: str, version: str | None = None) -> JsonObject | None:
    """What an earlier install recorded (``{command, args, env, version}``), newest first."""
    base = root / agent_id
    versions = (
        [version]
        if version
        else sorted(
            (p.name for p in base.iterdir() if (p / MARKER).is_file()) if base.is_dir() else [],
            key=_version_key,
            reverse=True,
        )
    )
    for v in versions:
        marker = base / v / MARKER
        try:
            found: JsonObject = json.loads(marker.read_text(encoding="utf-8"))
            return found
        except (OSError, ValueError):
            continue
    return None


def _version_key(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


async def _run(argv: list[str], env: Mapping[str, str], what: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        # never the server's own stdin (the editor's LSP pipe): npm is Node, and Node turns
        # an inherited stdin non-blocking, which ends the server's read of the pipe
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=dict(env),
        start_new_session=True,
    )
    out, _ = await proc.communicate()
    text = out.decode("utf-8", "replace")
    if proc.returncode != 0:
        tail = " | ".join(failure_lines(text))
        raise InstallError(f"{what} failed (exit {proc.returncode}): {tail}")
    return text


_NOISE = ("npm notice", "npm error A complete log", "npm error code", "npm error errno")


def failure_lines(output: str, keep: int = 3) -> list[str]:
    """The lines that say why a package install failed: npm ends its output with update
    notices and the path of its log, which told the user nothing (an E404, a version that does
    not exist, a failed install script were never shown)."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    telling = [
        line
        for line in lines
        if not line.startswith(_NOISE) and line not in ("npm error", "npm ERR!")
    ]
    return (telling or lines)[-keep:]


async def install(
    entry: RegistryEntry,
    version: str | None,
    root: Path,
    env: Mapping[str, str],
    report: Report,
) -> JsonObject:
    """Install ``entry`` (at ``version``, default the registry's) and return how to run it."""
    dist = entry.distribution()
    if dist is None:
        raise InstallError(f"registry agent {entry.id!r} has no distribution for this platform")
    name, pinned = package_name(dist.package, dist.kind) if dist.package else ("", None)
    version = version or pinned or entry.version
    target = install_dir(root, entry.id, version)
    done = installed(root, entry.id, version)
    if done is not None:
        return done
    if target.exists():
        shutil.rmtree(target)  # a half-finished earlier try
    target.mkdir(parents=True)
    try:
        if dist.kind == "npx":
            run = await _npm(name, version, target, env, report)
        elif dist.kind == "uvx":
            run = await _pip(name, version, target, env, report)
        else:
            run = await _binary(entry, dist, target, report)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    run["args"] = [*run.get("args", []), *dist.args]
    run["env"] = dict(dist.env)
    run["version"] = version
    run["kind"] = dist.kind
    (target / MARKER).write_text(json.dumps(run), encoding="utf-8")
    return run


async def _npm(
    package: str, version: str, target: Path, env: Mapping[str, str], report: Report
) -> JsonObject:
    npm = shutil.which("npm", path=env.get("PATH"))
    if npm is None:
        raise InstallError("npm is not installed: it is needed for npx registry agents (Node 20+)")
    report(f"npm install {package}@{version}")
    (target / "package.json").write_text('{"name": "acp-lsp-agent", "private": true}')
    await _run(
        [
            npm,
            "install",
            "--prefix",
            str(target),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            f"{package}@{version}",
        ],
        env,
        f"npm install {package}@{version}",
    )
    meta = json.loads((target / "node_modules" / package / "package.json").read_text("utf-8"))
    bins = meta.get("bin")
    if isinstance(bins, str):
        bins = {package.rsplit("/", 1)[-1]: bins}
    if not isinstance(bins, dict) or not bins:
        raise InstallError(f"{package}@{version} ships no executable (package.json has no bin)")
    # npx runs the bin named like the package, or the only one
    short = package.rsplit("/", 1)[-1]
    name = short if short in bins else next(iter(bins))
    return {"command": str(target / "node_modules" / ".bin" / name), "args": []}


async def _pip(
    package: str, version: str, target: Path, env: Mapping[str, str], report: Report
) -> JsonObject:
    report(f"creating a venv for {package}=={version}")
    venv = target / "venv"
    await _run([sys.executable, "-m", "venv", str(venv)], env, "python -m venv")
    report(f"pip install {package}=={version}")
    await _run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            f"{package}=={version}",
        ],
        env,
        f"pip install {package}=={version}",
    )
    script = venv / "bin" / package
    if not script.exists():  # uvx runs the console script named like the package
        raise InstallError(f"{package}=={version} has no console script named {package!r}")
    return {"command": str(script), "args": []}


async def _download(url: str, dest: Path) -> None:
    if url.startswith("file://"):
        await asyncio.to_thread(shutil.copyfile, url.removeprefix("file://"), dest)
        return
    async with (
        httpx.AsyncClient(timeout=60, follow_redirects=True) as client,
        client.stream("GET", url) as response,
    ):
        response.raise_for_status()
        with dest.open("wb") as fh:
            async for chunk in response.aiter_bytes():
                fh.write(chunk)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _unpack(archive: Path, dest: Path) -> None:
    name = archive.name
    if name.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")):
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")  # no absolute paths, no escaping links
    elif name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                if member.startswith("/") or ".." in Path(member).parts:
                    raise InstallError(f"{archive.name}: unsafe path {member!r}")
            zf.extractall(dest)
    else:  # a bare executable
        shutil.copyfile(archive, dest / name)


async def _binary(
    entry: RegistryEntry, dist: Distribution, target: Path, report: Report
) -> JsonObject:
    archive = target / ("download-" + dist.archive.rstrip("/").rsplit("/", 1)[-1])
    report(f"downloading {dist.archive}")
    try:
        await _download(dist.archive, archive)
    except (httpx.HTTPError, OSError) as exc:
        raise InstallError(f"download of {dist.archive} failed: {exc}") from None
    if dist.sha256 is not None:
        got = await asyncio.to_thread(_sha256, archive)
        if got.lower() != dist.sha256.lower():
            raise InstallError(
                f"{dist.archive}: sha256 {got} does not match the registry's {dist.sha256}"
            )
    report(f"unpacking {archive.name.removeprefix('download-')}")
    unpacked = target / "files"
    unpacked.mkdir()
    await asyncio.to_thread(_unpack, archive, unpacked)
    archive.unlink()
    command = (unpacked / dist.cmd).resolve()
    if not command.is_relative_to(unpacked.resolve()) or not command.is_file():
        raise InstallError(f"registry agent {entry.id!r}: {dist.cmd} is not in the archive")
    command.chmod(command.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return {"command": str(command), "args": []}


def env_for_install(environ: Mapping[str, str]) -> dict[str, str]:
    """npm and pip need the network settings and caches of the user, not only PATH."""
    keep = (
        "PATH",
        "HOME",
        "USER",
        "LANG",
        "TMPDIR",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "NODE_EXTRA_CA_CERTS",
        "PIP_CERT",
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
        "PIP_FIND_LINKS",
        "npm_config_registry",
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "NO_PROXY",
        "https_proxy",
        "http_proxy",
        "no_proxy",
        "XDG_CACHE_HOME",
    )
    return {k: environ[k] for k in keep if k in environ} | {"PIP_DISABLE_PIP_VERSION_CHECK": "1"}
