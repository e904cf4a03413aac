"""Work-done progress while a turn runs (DESIGN §2 "Progress")."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from acp_lsp import protocol as p
from tests.review_findings.helpers import error_of, scripted_editor

pytestmark = pytest.mark.timeout(60)

IMAGE = {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}


async def test_progress_of_a_fast_turn_is_ended(tmp_path: Path, workspace: Path) -> None:
    # A turn that ends at once: the agent (no image capability) cannot take the prompt. Any
    # turn that ends before the editor answers the create request behaves the same.
    editor, _log = await scripted_editor(tmp_path, workspace, [])
    sid = (await editor.new_session())["sessionId"]
    error = await error_of(editor.prompt(sid, [{"type": "text", "text": "look"}, IMAGE]))
    assert error["code"] == p.INVALID_PARAMS
    await editor.acp(p.ACP_LIST_AGENTS)  # a round trip: the server has seen our create answer
    reports = {str(token): list(items) for token, items in editor.progress_reports.items()}
    await editor.shutdown_session()
    open_tokens = [
        token
        for token, items in reports.items()
        if any(isinstance(i, types.WorkDoneProgressBegin) for i in items)
        and not any(isinstance(i, types.WorkDoneProgressEnd) for i in items)
    ]
    assert open_tokens == [], f"progress begun and never ended: {reports}"


async def test_refused_prompt_leaves_no_user_message(tmp_path: Path, workspace: Path) -> None:
    editor, _log = await scripted_editor(tmp_path, workspace, [])
    sid = (await editor.new_session())["sessionId"]
    error = await error_of(editor.prompt(sid, [{"type": "text", "text": "look"}, IMAGE]))
    snap = await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    await editor.shutdown_session()
    assert error["code"] == p.INVALID_PARAMS
    assert snap["messages"] == [], "the refused prompt is in the transcript"
