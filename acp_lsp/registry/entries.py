"""Registry entries (the ACP Registry's ``registry.json`` FORMAT), validated one by one.

A bad entry is skipped with a reason; the rest of the index stays usable.
"""

from __future__ import annotations

import platform
import re
from dataclasses import dataclass, field
from typing import Any

JsonObject = dict[str, Any]

_ID = re.compile(r"^[a-z][a-z0-9-]*$")
_VERSION = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+")
KINDS = ("npx", "uvx", "binary")


@dataclass(frozen=True)
class Distribution:
    kind: str  # npx | uvx | binary
    package: str = ""  # npx/uvx: the package, maybe with @version / ==version
    archive: str = ""  # binary: the archive URL for this platform
    cmd: str = ""  # binary: the executable inside the archive
    sha256: str | None = None  # binary: when the registry gives one
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RegistryEntry:
    id: str
    name: str
    version: str
    description: str
    icon: str | None
    repository: str | None
    distributions: tuple[Distribution, ...]
    raw: JsonObject

    def distribution(self) -> Distribution | None:
        """The way to run it here: npx, then uvx, then a binary for this platform."""
        for kind in KINDS:
            for dist in self.distributions:
                if dist.kind == kind:
                    return dist
        return None


def platform_key() -> str:
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "windows"}.get(
        platform.system(), platform.system().lower()
    )
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(
        platform.machine().lower(), platform.machine().lower()
    )
    return f"{system}-{machine}"


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{what}: expected a list of strings")
    return tuple(value)


def _env(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{what}: expected an object of strings")
    return dict(value)


def parse_entry(raw: Any, here: str | None = None) -> RegistryEntry:
    """One entry, or ValueError naming what is wrong."""
    if not isinstance(raw, dict):
        raise ValueError("not an object")
    for key in ("id", "name", "version", "description"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise ValueError(f"{key}: missing or not a string")
    if not _ID.match(raw["id"]):
        raise ValueError(f"id: {raw['id']!r} is not lowercase letters, digits and hyphens")
    if not _VERSION.match(raw["version"]):
        raise ValueError(f"version: {raw['version']!r} is not a semantic version")
    dist = raw.get("distribution")
    if not isinstance(dist, dict) or not dist:
        raise ValueError("distribution: missing")
    found: list[Distribution] = []
    for kind, spec in dist.items():
        if kind in ("npx", "uvx"):
            if not isinstance(spec, dict) or not isinstance(spec.get("package"), str):
                raise ValueError(f"distribution.{kind}.package: missing")
            found.append(
                Distribution(
                    kind,
                    package=spec["package"],
                    args=_strings(spec.get("args"), f"distribution.{kind}.args"),
                    env=_env(spec.get("env"), f"distribution.{kind}.env"),
                )
            )
        elif kind == "binary":
            if not isinstance(spec, dict):
                raise ValueError("distribution.binary: not an object")
            target = spec.get(here or platform_key())
            if target is None:
                continue  # nothing for this platform: another distribution may do
            if not isinstance(target.get("archive"), str) or not isinstance(target.get("cmd"), str):
                raise ValueError("distribution.binary: archive and cmd are required")
            sha = target.get("sha256")
            found.append(
                Distribution(
                    "binary",
                    archive=target["archive"],
                    cmd=target["cmd"],
                    sha256=sha if isinstance(sha, str) else None,
                    args=_strings(target.get("args"), "distribution.binary.args"),
                    env=_env(target.get("env"), "distribution.binary.env"),
                )
            )
        else:
            raise ValueError(f"distribution.{kind}: unknown distribution type")
    icon, repo = raw.get("icon"), raw.get("repository")
    return RegistryEntry(
        id=raw["id"],
        name=raw["name"],
        version=raw["version"],
        description=raw["description"],
        icon=icon if isinstance(icon, str) else None,
        repository=repo if isinstance(repo, str) else None,
        distributions=tuple(found),
        raw=raw,
    )


def parse_index(data: Any) -> tuple[dict[str, RegistryEntry], list[str]]:
    """Entries by id and the reasons entries were skipped."""
    if not isinstance(data, dict) or not isinstance(data.get("agents"), list):
        raise ValueError("not a registry index: no 'agents' list")
    entries: dict[str, RegistryEntry] = {}
    problems: list[str] = []
    for i, raw in enumerate(data["agents"]):
        name = raw.get("id") if isinstance(raw, dict) else None
        try:
            entry = parse_entry(raw)
        except ValueError as exc:
            problems.append(f"registry entry {name or f'#{i}'}: {exc} (skipped)")
            continue
        if entry.distribution() is None:
            problems.append(f"registry entry {entry.id}: no distribution for {platform_key()}")
        entries[entry.id] = entry
    return entries, problems


def package_name(package: str, kind: str) -> tuple[str, str | None]:
    """``@scope/pkg@1.2.3`` → (``@scope/pkg``, ``1.2.3``); ``pkg==1.2`` likewise."""
    if kind == "npx":
        at = package.rfind("@")
        if at > 0:
            return package[:at], package[at + 1 :]
        return package, None
    for sep in ("==", "@"):
        if sep in package:
            name, _, version = package.partition(sep)
            return name, version
    return package, None
