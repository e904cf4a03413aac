"""Where the registry index comes from: the network (a setting), else the cache in the data
dir (with the time it was fetched), else the snapshot shipped in the package.

The network is asked at most once per ``max_age`` unless a caller insists (an explicit
update); a failure falls back silently to what is at hand and says so in ``Index.note``.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

import httpx

from acp_lsp.registry.entries import RegistryEntry, parse_index

log = logging.getLogger(__name__)

DEFAULT_URL = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json"
SNAPSHOT = Path(__file__).with_name("snapshot.json")


@dataclass
class Index:
    entries: dict[str, RegistryEntry]
    source: str  # network | cache | snapshot
    fetched_at: float | None
    problems: list[str] = field(default_factory=list)
    note: str = ""


def _parse(data: Any, source: str, fetched_at: float | None) -> Index:
    entries, problems = parse_index(data)
    for problem in problems:
        log.info("%s", problem)
    return Index(entries, source, fetched_at, problems)


async def _fetch(url: str, timeout: float) -> Any:
    if url.startswith("file://"):
        # url2pathname: "file:///C:/x" is C:\\x on Windows, /C:/x nowhere
        path = url2pathname(urlparse(url).path)
        return json.loads(Path(path).read_text(encoding="utf-8"))
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=True) as client:
        response = await client.get(url)
        response.raise_for_status()
        return response.json()


async def load_index(
    url: str,
    cache_file: Path,
    *,
    max_age: float = 24 * 3600,
    refresh: bool = False,
    timeout: float = 5.0,
) -> Index:
    cached: Any = None
    fetched_at: float | None = None
    try:
        blob = json.loads(cache_file.read_text(encoding="utf-8"))
        cached, fetched_at = blob["index"], float(blob["fetchedAt"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    fresh = fetched_at is not None and time.time() - fetched_at < max_age
    note = ""
    if refresh or not fresh:
        try:
            data = await _fetch(url, timeout)
            index = _parse(data, "network", time.time())
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_file.with_suffix(".tmp")
            tmp.write_text(json.dumps({"fetchedAt": index.fetched_at, "url": url, "index": data}))
            tmp.replace(cache_file)
            return index
        except (httpx.HTTPError, OSError, ValueError) as exc:
            note = f"registry {url} unreachable ({type(exc).__name__}: {exc})"
            log.info("%s; using %s", note, "the cache" if cached is not None else "the snapshot")
    if cached is not None:
        try:
            index = _parse(cached, "cache", fetched_at)
            index.note = note
            return index
        except ValueError as exc:
            log.warning("registry cache %s is unusable: %s", cache_file, exc)
    snapshot = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    index = _parse(snapshot, "snapshot", None)
    index.note = note or "registry cache empty"
    return index


def snapshot_date() -> str:
    return str(json.loads(SNAPSHOT.read_text(encoding="utf-8")).get("snapshotDate", "?"))
