"""Secrets never reach the editor (DESIGN §2 "Configuration": apiKey and expanded ${env:…}
values never appear in logs, snapshots or results)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_lsp import protocol as p
from tests.e2e.conftest import start_editor, with_fast_demo
from tests.review_findings.helpers import error_of, everything_sent, scripted_editor

pytestmark = pytest.mark.timeout(60)

SECRET = "sk-review-7f3a9c1e5b"


async def test_agent_error_quoting_a_secret_is_redacted_everywhere(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEW_SECRET", SECRET)
    # An agent whose upstream rejects the key and quotes it back (a common 401 message).
    steps = [
        {
            "error": {
                "code": -32603,
                "message": f"invalid x-api-key {SECRET}",
                "data": {"details": f"401 for key {SECRET}"},
            }
        }
    ]
    editor, _log = await scripted_editor(
        tmp_path, workspace, steps, env={"API_TOKEN": "${env:REVIEW_SECRET}"}
    )
    sid = (await editor.new_session())["sessionId"]
    error = await error_of(editor.prompt(sid, "go"))
    assert error["code"] == p.AGENT_ERROR
    assert SECRET not in error["message"]  # control: the message itself is scrubbed
    await editor.wait_for(lambda: editor.status_values(sid)[-1:] == ["idle"])
    sent = everything_sent(editor, error)
    await editor.shutdown_session()
    assert SECRET not in sent, "the API key reached the editor"


async def test_start_failure_quoting_a_secret_is_redacted_in_list_agents(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEW_SECRET", SECRET)
    script = {"on": {"initialize": [{"error": {"code": -32603, "message": f"bad key {SECRET}"}}]}}
    editor, _log = await scripted_editor(
        tmp_path, workspace, [], script=script, env={"API_TOKEN": "${env:REVIEW_SECRET}"}
    )
    error = await error_of(editor.new_session())
    assert error["code"] == p.AGENT_UNAVAILABLE
    agents = await editor.acp(p.ACP_LIST_AGENTS)
    sent = everything_sent(editor, error, agents)
    await editor.shutdown_session()
    assert SECRET not in sent, "the API key reached the editor"


async def test_env_value_expanded_in_an_agent_url_is_a_secret(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEW_URL_TOKEN", SECRET)
    agents = {"remote": {"url": "http://127.0.0.1:9/t/${env:REVIEW_URL_TOKEN}"}}
    editor = await start_editor(
        tmp_path, workspace, "visual_studio_code", with_fast_demo({"agents": agents})
    )
    error = await error_of(editor.new_session(agent="remote"))
    agents_listed = await editor.acp(p.ACP_LIST_AGENTS)
    sent = everything_sent(editor, error, agents_listed)
    await editor.shutdown_session()
    assert error["code"] == p.AGENT_UNAVAILABLE, error
    assert SECRET not in sent, "the expanded ${env:…} value reached the editor"
