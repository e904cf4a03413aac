"""ACP Registry agents through the real server, offline: a registry index of our own with an
npx agent (codex-acp, from the npm registry), a uvx agent (this package's demo agent, from a
wheel built here) and a binary agent (a tar.gz served from a local file)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from acp_lsp import __version__
from acp_lsp import protocol as p
from acp_lsp.presets import PRODUCTION_AGENTS
from tests.agents import scripted_command
from tests.e2e.conftest import start_editor, with_fast_demo
from tests.support.lsp_editor import TestEditor

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[2]
CODEX = next(a for a in PRODUCTION_AGENTS if a.name == "codex")
CLOSED = "http://127.0.0.1:9/registry.json"  # nothing listens there: "no network"


def tiny_archive(tmp_path: Path, version: str, answer: str) -> tuple[str, str]:
    """A binary distribution: a tar.gz with an executable agent (a scripted ACP agent)."""
    script = {
        "on": {
            "session/prompt": [
                {
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": answer},
                    }
                }
            ]
        }
    }
    argv = scripted_command(script, tmp_dir=tmp_path)
    build = tmp_path / f"tiny-{version}"
    (build / "bin").mkdir(parents=True)
    exe = build / "bin" / "tiny-agent"
    exe.write_text("#!/bin/sh\nexec " + " ".join(f"'{a}'" for a in argv) + "\n", encoding="utf-8")
    exe.chmod(0o755)
    archive = tmp_path / f"tiny-agent-{version}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(build / "bin", arcname="bin")
    return archive.as_uri(), hashlib.sha256(archive.read_bytes()).hexdigest()


def binary_entry(agent_id: str, version: str, url: str, sha: str) -> dict[str, Any]:
    target = {"archive": url, "cmd": "./bin/tiny-agent", "sha256": sha}
    return {
        "id": agent_id,
        "name": f"Tiny {version}",
        "version": version,
        "description": "a scripted agent packed as a binary",
        "distribution": {
            "binary": {"linux-x86_64": target, "linux-aarch64": target, "darwin-aarch64": target}
        },
    }


def write_index(path: Path, agents: list[dict[str, Any]]) -> str:
    path.write_text(
        json.dumps({"version": "1.0.0", "agents": agents, "extensions": []}), encoding="utf-8"
    )
    return path.as_uri()


async def editor_with(tmp_path: Path, workspace: Path, url: str, **agents: Any) -> TestEditor:
    options = with_fast_demo({"registry": {"url": url}, "agents": agents})
    return await start_editor(tmp_path, workspace, "visual_studio_code", options)


async def error_of(coro: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as info:
        await coro
    return info.value


def by_name(listed: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["name"]: a for a in listed["agents"]}


async def test_a_binary_agent_installs_runs_pins_and_updates(
    tmp_path: Path, workspace: Path
) -> None:
    url1, sha1 = tiny_archive(tmp_path, "1.0.0", "hello from tiny 1.0")
    index = tmp_path / "registry.json"
    broken = {
        "id": "Broken Agent",
        "name": "x",
        "version": "1",
        "description": "d",
        "distribution": {},
    }
    bad_sum = binary_entry("badsum", "1.0.0", url1, "0" * 64)
    write_index(index, [binary_entry("tiny", "1.0.0", url1, sha1), bad_sum, broken])
    editor = await editor_with(
        tmp_path, workspace, index.as_uri(), pinned={"registry": "tiny", "version": "1.0.0"}
    )
    agents = by_name(await editor.acp(p.ACP_LIST_AGENTS, {"includeRegistry": True}))
    # configured under a name of its own, a registry agent is listed once, by that name
    assert "registry:tiny" not in agents and agents["registry:badsum"]["source"] == "registry"
    pinned = agents["pinned"]
    assert pinned["registryId"] == "tiny" and pinned["source"] == "config"
    assert pinned["installed"] is False and pinned["description"].startswith("a scripted agent")
    assert agents["registry:badsum"]["installed"] is False
    assert agents["registry:badsum"]["version"] == "1.0.0"
    assert not any("Broken" in name for name in agents)  # a bad entry is skipped, never fatal
    assert agents["demo"]["source"] == "config"
    # one pick away: a session with the registry agent installs it on first use
    snap = await editor.new_session(agent="registry:tiny")
    assert (await editor.prompt(snap["sessionId"], "hi"))["stopReason"] == "end_turn"
    assert editor.sessions[snap["sessionId"]].message_texts()[-1] == "hello from tiny 1.0"
    assert "Installing Tiny 1.0.0" in editor.progress_titles()
    installed = tmp_path / "data" / "agents" / "tiny" / "1.0.0" / "files" / "bin" / "tiny-agent"
    assert installed.is_file() and os.access(installed, os.X_OK)
    agents = by_name(await editor.acp(p.ACP_LIST_AGENTS, {"includeRegistry": True}))
    assert agents["pinned"]["installed"] is True and agents["pinned"]["version"] == "1.0.0"
    # a checksum that does not match is refused, saying so
    err = await error_of(editor.acp(p.ACP_INSTALL_AGENT, {"agent": "registry:badsum"}))
    assert err.code == p.AGENT_UNAVAILABLE and "sha256" in err.message
    assert not (tmp_path / "data" / "agents" / "badsum" / "1.0.0").exists()
    # a new version in the registry: updates are explicit, and a pin stays where it is
    url2, sha2 = tiny_archive(tmp_path, "1.1.0", "hello from tiny 1.1")
    write_index(index, [binary_entry("tiny", "1.1.0", url2, sha2)])
    assert await editor.acp(p.ACP_INSTALL_AGENT, {"agent": "pinned"}) == {
        "agent": "pinned",
        "version": "1.0.0",
        "installed": True,
    }
    kept = await editor.acp(p.ACP_UPDATE_AGENT, {"agent": "pinned"})
    assert kept == {
        "agent": "pinned",
        "previousVersion": "1.0.0",
        "version": "1.0.0",
        "updated": False,
    }
    updated = await editor.acp(p.ACP_UPDATE_AGENT, {"agent": "registry:tiny"})
    assert updated == {
        "agent": "registry:tiny",
        "previousVersion": "1.0.0",
        "version": "1.1.0",
        "updated": True,
    }
    snap = await editor.new_session(agent="registry:tiny")
    await editor.prompt(snap["sessionId"], "hi")
    assert editor.sessions[snap["sessionId"]].message_texts()[-1] == "hello from tiny 1.1"
    await editor.shutdown_session()
    assert not editor.schema_errors, editor.schema_errors


async def test_offline_the_cache_then_the_snapshot_is_used(tmp_path: Path, workspace: Path) -> None:
    url, sha = tiny_archive(tmp_path, "2.0.0", "cached")
    index = tmp_path / "registry.json"
    editor = await editor_with(
        tmp_path, workspace, write_index(index, [binary_entry("tiny", "2.0.0", url, sha)])
    )
    assert "registry:tiny" in by_name(
        await editor.acp(p.ACP_LIST_AGENTS, {"includeRegistry": True})
    )
    await editor.shutdown_session()
    # the network is gone: the cached index (with its time) is used
    editor = await editor_with(tmp_path, workspace, CLOSED)
    agents = by_name(await editor.acp(p.ACP_LIST_AGENTS, {"includeRegistry": True}))
    assert "registry:tiny" in agents and "registry:auggie" not in agents
    await editor.shutdown_session()
    # no cache either: the snapshot shipped in the package
    (tmp_path / "data" / "registry.json").unlink()
    editor = await editor_with(tmp_path, workspace, CLOSED)
    agents = by_name(await editor.acp(p.ACP_LIST_AGENTS, {"includeRegistry": True}))
    assert "registry:tiny" not in agents
    assert agents["registry:auggie"]["description"] and agents["registry:auggie"]["icon"].endswith(
        ".svg"
    )
    # presets show the registry entry they stand for
    assert agents["claude"]["registryId"] == "claude-acp" and agents["claude"]["source"] == "preset"
    await editor.shutdown_session()


@pytest.mark.timeout(900)  # a wheel build, a pip install and an npm install
def test_uvx_and_npx_entries(tmp_path: Path, workspace: Path) -> None:
    """Runs in its own event loop: building the wheel blocks for a while."""
    import asyncio

    wheels = tmp_path / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    if built.returncode != 0:
        pytest.skip(
            f"could not build the acp-lsp wheel (no network for the build backend?): {built.stderr[-300:]}"
        )
    npm_cache = ROOT / ".cache" / "agents" / "codex" / ".spec"
    entries = [
        {
            "id": "acp-lsp-demo",
            "name": "acp-lsp demo agent",
            "version": __version__,
            "description": "the built-in agent, from PyPI-style packaging",
            "distribution": {
                "uvx": {
                    "package": f"acp-lsp=={__version__}",
                    "args": ["demo-agent"],
                    "env": {"ACP_DEMO_DELAY": "0"},
                }
            },
        },
        {
            "id": "codex-acp",
            "name": "Codex",
            "version": CODEX.version,
            "description": "codex-acp from npm",
            "distribution": {"npx": {"package": CODEX.spec}},
        },
    ]
    url = write_index(tmp_path / "registry.json", entries)

    async def run() -> None:
        os.environ["PIP_FIND_LINKS"] = str(wheels)  # the server (and so pip) inherits it
        try:
            editor = await editor_with(tmp_path, workspace, url)
        finally:
            os.environ.pop("PIP_FIND_LINKS", None)
        # installed on first use: a pip install into a private venv, tens of seconds when loaded
        snap = await editor.acp(p.ACP_NEW_SESSION, {"agent": "registry:acp-lsp-demo"}, timeout=240)
        editor.adopt(snap)
        assert (await editor.prompt(snap["sessionId"], "hello"))["stopReason"] == "end_turn"
        assert (
            tmp_path / "data" / "agents" / "acp-lsp-demo" / __version__ / "venv" / "bin" / "acp-lsp"
        ).exists()
        if npm_cache.exists():  # npx: installed from npm into a private prefix, then run
            result = await editor.acp(
                p.ACP_INSTALL_AGENT, {"agent": "registry:codex-acp"}, timeout=400
            )
            assert result == {
                "agent": "registry:codex-acp",
                "version": CODEX.version,
                "installed": True,
            }
            err = await error_of(editor.new_session(agent="registry:codex-acp"))
            assert err.code == p.AUTH_REQUIRED and "CODEX_API_KEY" in err.message  # it ran
        await editor.shutdown_session()

    asyncio.run(run())
