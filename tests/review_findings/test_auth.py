"""Authentication (DESIGN §2 acp/authenticate: `{terminal: {command, args, env}}` for a
terminal-type auth method; reference/acp.md §3, schema ClientCapabilities.auth)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.review_findings.helpers import received, scripted_editor

pytestmark = pytest.mark.timeout(60)


async def test_initialize_advertises_terminal_auth(tmp_path: Path, workspace: Path) -> None:
    editor, log = await scripted_editor(tmp_path, workspace, [])
    await editor.new_session()
    await editor.shutdown_session()
    caps = received(log, "initialize")[0]["params"]["clientCapabilities"]
    assert caps.get("auth", {}).get("terminal") is True, caps
