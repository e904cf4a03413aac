"""End to end: real Neovim + the plugin + the real acp-lsp server + the demo agent."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.nvim.conftest import Editor

pytestmark = pytest.mark.timeout(60)


def test_prompt_streams_into_the_chat_buffer(live: Editor) -> None:
    live.lua("T.answer = 'Allow'")
    live.lua("T.new_session()")
    live.lua("T.record_lines()")
    live.lua("T.send('hello there')")
    live.wait("T.session().status == 'idle' and T.find_line('Done: read, edited, checked') ~= nil")

    text = live.chat()
    assert text.startswith("## You\nhello there\n")
    assert text.count("hello there") == 2  # the prompt once, plus the agent's thought quoting it
    assert "✓ Read src/app.py  [read · completed]" in text
    assert "✓ Edit src/app.py  [edit · completed]" in text
    assert "+# acp-lsp demo: reviewed in turn 1" in text
    assert "[execute · completed]" in text
    assert "│     21  src/app.py" in text  # terminal output, after the agent's edit was saved
    assert "Plan\n  ✓ Read src/app.py\n  ✓ Propose an edit to src/app.py" in text

    # Streaming: many small changes, each at or near the end; never a full re-render.
    events = live.lua("return T.line_events")
    assert len(events) > 10
    total = live.lua("return vim.api.nvim_buf_line_count(T.view().buf)")
    assert all(not (first == 0 and last_old > 1) for first, last_old, _ in events[1:])
    assert max(first for first, _, _ in events) > total // 2

    # The thought is folded; the usage, mode and title are in the winbar.
    row = live.lua("return T.find_line('▸ Thinking')")
    assert live.lua("return T.chat_foldclosed(...)", row + 1) == row
    bar = live.lua("return T.winbar()")
    assert "hello there" in bar and "idle" in bar and "tokens: 2700/200000" in bar


def test_permission_prompt_is_answered_from_the_editor(live: Editor, workspace: Path) -> None:
    live.lua("T.answer = 'manual'")
    live.lua("T.new_session()")
    live.lua("T.send('please edit')")
    live.wait("T.pending ~= nil")

    select = live.lua("return T.selects[#T.selects]")
    assert select["items"] == ["Allow", "Always allow", "Reject"]
    assert select["prompt"] == "Agent asks: [edit] Edit src/app.py (src/app.py:2)"
    live.wait("T.find_line('⚠ awaiting permission: Allow / Always allow / Reject') ~= nil")
    assert "⚠ 1 permission" in live.lua("return T.winbar()")

    live.lua("T.choose('Reject')")
    live.wait("T.session().status == 'idle'")
    text = live.chat()
    assert "awaiting permission" not in text
    assert "[edit · failed]" in text
    assert "reviewed in turn" not in (workspace / "src" / "app.py").read_text()
    print(text)
