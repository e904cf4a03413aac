"""How long a turn's prompt waits for its folder's first snapshot (acp_lsp/editor/disk_sync.py).

An agent with no model round trip (a scripted one, a quick tool) changes a file the moment it
has the prompt; a change made before the folder's "before" tree exists passes for part of it
and is never shown. A small folder's first snapshot is therefore waited for, however slow the
machine; a huge one's is not (its agent needs a model round trip before any change).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from acp_lsp.disk.shadow import ShadowRepo
from acp_lsp.editor import disk_sync
from acp_lsp.editor.disk_sync import DiskSync
from acp_lsp.editor.review import ReviewManager
from acp_lsp.sandbox import Sandbox
from acp_lsp.session import Session
from acp_lsp.tasks import TaskOwner

SLOW_S = 0.6


class Files:
    """The editor's files: nothing open, nothing written by the bridge."""

    def current_text(self, path: str) -> str | None:
        return None

    def is_own(self, path: str, blob: str | None) -> bool:
        return False


async def first_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The folder's first snapshot takes ``SLOW_S`` (a loaded machine); the agent writes as
    soon as the prompt is out. Returns the tool calls the turn published."""
    folder = tmp_path / "ws"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text("print('hello')\n")
    monkeypatch.setenv("ACP_LSP_DATA_DIR", str(tmp_path / "data"))
    scan = ShadowRepo._add_all

    async def slow_scan(repo: ShadowRepo) -> None:
        await asyncio.sleep(SLOW_S)
        await scan(repo)

    monkeypatch.setattr(ShadowRepo, "_add_all", slow_scan)
    monkeypatch.setattr(disk_sync, "BASELINE_WAIT_S", 0.05)
    published: list[dict[str, Any]] = []
    tasks = TaskOwner("test")
    files: Any = Files()
    sync = DiskSync(
        files=files,
        review=ReviewManager(files, lambda s, u: None, lambda s: Sandbox([str(folder)])),
        publish=lambda s, updates: published.extend(u["toolCall"] for u in updates),
        notify=lambda method, params: None,
        warn=lambda text: None,
        sandbox=lambda s: Sandbox([str(folder)]),
        enabled=lambda: True,
        plain=lambda: False,
        tasks=tasks,
    )
    checkpointed = asyncio.Event()
    sync.checkpointed = lambda s: checkpointed.set()
    session = Session("s1", "scripted", str(folder))
    try:
        session.add_user_prompt([{"type": "text", "text": "change the greeting"}])
        session.begin_turn()
        sync.session_started(session)
        await sync.turn_started(session)
        (folder / "src" / "app.py").write_text("print('howdy')\n")  # at once: no model
        await sync.turn_ended(session)
        await asyncio.wait_for(checkpointed.wait(), 30)
    finally:
        sync.forget(session.session_id)
        await tasks.close()
    return published


async def test_a_small_folders_first_prompt_waits_for_a_slow_first_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    published = await first_turn(tmp_path, monkeypatch)
    assert [(c["title"], c["kind"]) for c in published] == [("Files changed on disk", "edit")]


async def test_a_huge_folders_first_prompt_does_not_wait_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the other side of the rule, so that the one above can fail: past LARGE_FOLDERS the
    # prompt goes out after BASELINE_WAIT_S, and a change that quick is not told apart
    monkeypatch.setattr(disk_sync, "LARGE_FOLDERS", 1)
    assert await first_turn(tmp_path, monkeypatch) == []
