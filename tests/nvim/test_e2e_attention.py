"""Attention and notices in real Neovim: while Neovim has lost focus, a turn's end and a
permission question waiting are told (vim.notify; the terminal's desktop notification is the
OSC 777 / OSC 9 escape written to it); the agent's ACP session notices are shown with their
severity whether focused or not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.nvim.conftest import Editor
from tests.nvim.test_e2e_disk import answer, start

pytestmark = pytest.mark.timeout(90)

WARN, INFO = 3, 2  # vim.log.levels


def notice(severity: str, title: str, description: str | None = None) -> dict[str, object]:
    update: dict[str, object] = {"sessionUpdate": "notice", "severity": severity, "title": title}
    if description is not None:
        update["description"] = description
    return {"update": update}


def notifications(editor: Editor, needle: str) -> list[dict[str, object]]:
    found: list[dict[str, object]] = editor.lua(
        "local needle = ... "
        "return vim.tbl_filter(function(n) return n.msg:find(needle, 1, true) end, T.notifications)",
        needle,
    )
    return found


def test_a_turn_that_ends_while_away_is_told_and_not_when_focused(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    start(editor, workspace, tmp_path, {"on": {"session/prompt": [answer("Done.")]}})
    editor.lua("T.new_session()")
    editor.lua("T.send('first, while looking')")
    editor.wait("T.session().status == 'idle' and T.find_line('Done.') ~= nil")
    assert notifications(editor, "the turn ended") == []

    editor.lua("vim.api.nvim_exec_autocmds('FocusLost', {})")
    editor.lua("T.send('second, while away')")
    editor.wait("#vim.tbl_filter(function(n) return n.msg:find('the turn ended') end, "
                "T.notifications) > 0")  # fmt: skip
    [told] = notifications(editor, "the turn ended")
    assert str(told["msg"]).endswith(" (scripted): the turn ended"), told

    editor.lua("vim.api.nvim_exec_autocmds('FocusGained', {})")
    editor.lua("T.send('third, back again')")
    editor.wait("T.session().status == 'idle' and #T.chat_lines() > 0")
    editor.lua("T.wait_idle(10000)")
    assert len(notifications(editor, "the turn ended")) == 1


def test_notices_are_shown_with_their_severity(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    steps = [
        notice("warning", "Rate limited", "retrying in 5 s"),
        notice("info", "Context compacted"),
        answer("Done."),
    ]
    start(editor, workspace, tmp_path, {"on": {"session/prompt": steps}})
    editor.lua("T.new_session()")
    editor.lua("T.send('go')")
    editor.wait("T.session().status == 'idle' and T.find_line('Done.') ~= nil")
    shown = [(n["msg"], n["level"]) for n in notifications(editor, "acp-lsp: scripted:")]
    assert shown == [
        ("acp-lsp: scripted: Rate limited — retrying in 5 s", WARN),
        ("acp-lsp: scripted: Context compacted", INFO),
    ]
