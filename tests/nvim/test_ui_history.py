"""The session history and the registry agent picker in real Neovim against the real server."""

from __future__ import annotations

import pytest

from tests.nvim.conftest import SERVER_CMD, Editor

pytestmark = pytest.mark.timeout(90)

NOWHERE = "http://127.0.0.1:9/registry.json"  # nothing listens: the shipped snapshot is used


def pick(editor: Editor, command: str, choice_prefix: str) -> list[str]:
    """Run a command that opens a picker; choose the first item starting with the prefix."""
    editor.lua("T.answer = 'manual'; T.pending = nil")
    editor.cmd(command)
    editor.wait("T.pending ~= nil")
    names: list[str] = editor.lua("return T.pending.names")
    chosen = next((n for n in names if n.startswith(choice_prefix)), None)
    assert chosen is not None, names
    editor.lua("T.choose(...)", chosen)
    return names


def test_history_search_open_resume_export_rename_delete(live: Editor) -> None:
    live.lua("T.new_session()")
    live.lua("T.send('/help')")
    live.wait("T.session().status == 'idle' and T.find_line('I am the acp-lsp demo agent') ~= nil")
    sid = live.lua("return T.session().id")
    live.cmd("Acp close")
    live.wait("require('acp_lsp.sessions').by_id[a[1]] == nil", sid)

    # searched by message text, listed with agent and state; opened read-only at once
    names = pick(live, "Acp history help", "")
    assert len(names) == 1 and "demo" in names[0] and "stored" in names[0], names
    live.wait("T.pending ~= nil")  # the actions of the picked session
    actions = live.lua("return T.pending.names")
    assert actions == ["Open (read-only)", "Resume", "Rename…", "Export as Markdown", "Delete…"]
    live.lua("T.choose('Open (read-only)')")
    live.wait(
        "T.session() ~= nil and T.session().id == a[1] and T.session().status == 'stored'", sid
    )
    assert live.lua("return T.find_line('I am the acp-lsp demo agent')") is not None
    assert live.lua("return T.find_line('read-only')") is not None

    # a search that matches nothing says so
    live.lua("T.notifications = {}")
    live.cmd("Acp history no-such-words-anywhere")
    live.wait("#T.notifications > 0")
    assert "no session matches" in live.lua("return T.notifications[1].msg")

    # resumed under the same id: the conversation goes on
    pick(live, "Acp history help", "")
    live.wait("T.pending ~= nil")
    live.lua("T.choose('Resume')")
    live.wait("T.session().id == a[1] and T.session().status == 'idle'", sid)
    live.lua("T.send('/plan')")
    # the turn is over once the demo agent has named the resumed session after it
    live.wait("T.session().status == 'idle' and T.session().title == '/plan'")

    # exported as Markdown into a buffer of its own
    pick(live, "Acp history help", "")
    live.wait("T.pending ~= nil")
    live.lua("T.choose('Export as Markdown')")
    live.wait("vim.bo.filetype == 'markdown'")
    text = "\n".join(live.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert "I am the acp-lsp demo agent" in text and "/help" in text

    # renamed: the new title is what the history lists
    pick(live, "Acp history help", "")
    live.wait("T.pending ~= nil")
    live.lua("vim.ui.input = function(_, cb) cb('Help tour') end")
    live.lua("T.choose('Rename…')")
    live.wait("require('acp_lsp.sessions').by_id[a[1]].title == 'Help tour'", sid)
    names = pick(live, "Acp history help", "Help tour")

    # deleted after asking: gone from the history
    live.wait("T.pending ~= nil")
    live.lua("T.choose('Delete…')")
    live.wait("T.pending ~= nil")
    live.lua("T.choose('Delete')")
    live.wait("require('acp_lsp.sessions').by_id[a[1]] == nil", sid)
    live.lua("T.notifications = {}")
    live.cmd("Acp history help")
    live.wait("#T.notifications > 0")
    assert "no session matches" in live.lua("return T.notifications[1].msg")


def test_agent_picker_lists_registry_agents(editor: Editor, workspace: object) -> None:
    editor.cmd(f"cd {workspace}")
    editor.lua("T.setup(...)", SERVER_CMD, {"registry": {"url": NOWHERE}})
    editor.lua("T.answer = 'manual'; T.pending = nil")
    editor.cmd("Acp agents all")
    editor.wait("T.pending ~= nil", timeout_ms=40000)
    names: list[str] = editor.lua("return T.pending.names")
    editor.lua("T.choose(nil)")
    demo = next(n for n in names if "[demo]" in n)
    assert "default" in demo
    registry = [n for n in names if "(registry" in n]
    assert registry, names
    assert all("not installed" in n for n in registry if "[registry:" in n)
    assert any("[registry:" in n and " — " in n for n in registry)  # with a description
    assert any("[claude]" in n for n in names)  # the presets stay in the list
