"""Editor tools: which agents get them, and when openDiff is refused (acp_lsp/editor_tools/router.py)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from acp_lsp.config import load_settings
from acp_lsp.editor_tools.router import EditorTools, _read_only
from acp_lsp.sandbox import Sandbox
from acp_lsp.session import Session
from tests.support.platforms import needs_symlinks


def tools_for(settings: dict[str, Any]) -> tuple[EditorTools, Any]:
    loaded, problems = load_settings([settings])
    assert problems == []
    server: Any = SimpleNamespace(settings=loaded)
    return EditorTools(server), loaded


@pytest.mark.parametrize(
    ("settings", "demo", "claude"),
    [
        ({}, True, True),  # on by default
        ({"editorTools": {"enabled": False}}, False, False),
        ({"agents": {"demo": {"editorTools": False}}}, False, True),
        (
            {"editorTools": {"enabled": False}, "agents": {"claude": {"editorTools": True}}},
            False,
            True,
        ),
    ],
)
def test_the_agent_setting_wins_over_the_global_one(
    settings: dict[str, Any], demo: bool, claude: bool
) -> None:
    tools, loaded = tools_for(settings)
    assert tools.enabled_for(loaded.agents["demo"]) is demo
    assert tools.enabled_for(loaded.agents["claude"]) is claude


def test_timeout_must_be_positive() -> None:
    _, problems = load_settings([{"editorTools": {"timeoutS": 0}}])
    assert problems == ["editorTools.timeoutS: Input should be greater than 0"]


@pytest.mark.parametrize(
    ("mode", "refused"),
    [
        (None, False),
        ("default", False),
        ("acceptEdits", False),
        ("plan", True),
        ("read-only", True),
    ],
)
def test_open_diff_is_refused_in_modes_that_forbid_edits(mode: str | None, refused: bool) -> None:
    session = Session("s", "agent", "/ws")
    if mode is not None:
        session.set_current_mode(mode)
    assert _read_only(session) is refused


@needs_symlinks
def test_many_paths_are_judged_inside_or_out_as_one_path_is(tmp_path: Any) -> None:
    """Sandbox.inside (a workspace's answers, folder by folder) agrees with contains."""
    ws, other = tmp_path / "ws", tmp_path / "other"
    (ws / "pkg").mkdir(parents=True)
    other.mkdir()
    (ws / "pkg" / "a.py").write_text("")
    (other / "b.py").write_text("")
    (ws / "to-other.py").symlink_to(other / "b.py")
    (ws / "out").symlink_to(other)  # a folder link
    paths = {
        str(ws / "pkg" / "a.py"),
        str(ws / "pkg" / "new.py"),  # not written yet
        str(ws / "pkg" / ".." / "pkg" / "a.py"),
        str(ws / "pkg" / ".."),
        str(ws / "pkg" / ".." / ".." / "other" / "b.py"),
        str(ws / "to-other.py"),
        str(ws / "out" / "b.py"),
        str(other / "b.py"),
        "untitled:Untitled-1",
        "relative/a.py",
        "/nul\0byte",
    }
    sandbox = Sandbox([str(ws)])
    assert sandbox.inside(paths) == {
        str(ws / "pkg" / "a.py"),
        str(ws / "pkg" / "new.py"),
        str(ws / "pkg" / ".." / "pkg" / "a.py"),
        str(ws / "pkg" / ".."),
    }
    assert sandbox.inside(paths) == {p for p in paths if sandbox.contains(p)}


async def test_a_session_is_offered_the_tools_once_their_endpoint_is_up() -> None:
    # Qwen Code gives a remote MCP server 5 s and then goes on without it: on a loaded
    # machine the endpoint's start (the MCP SDK's import) took longer, and Qwen's model was
    # never told of the editor's tools (test_editor_tools_agents.py, once in a full run)
    from acp_lsp.tasks import TaskOwner

    loaded, _ = load_settings([{}])
    tasks = TaskOwner("test")
    tools = EditorTools(SimpleNamespace(settings=loaded, tasks=tasks))  # type: ignore[arg-type]
    try:
        token, server = await tools.reserve()
        assert tools._http is not None  # answering at once, not from the backlog later
        assert server["url"].endswith(f"/mcp/{token}")
    finally:
        tools._close()
        await tasks.close()
