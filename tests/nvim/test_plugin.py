"""The plugin in real Neovim without a server: session model, rendering, permissions,
follow-along, saving, options, commands, docs. Handlers are called the way the LSP client
calls them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.nvim.conftest import PLUGIN, Editor

pytestmark = pytest.mark.timeout(30)

SNAPSHOT = {
    "sessionId": "s1",
    "agent": "demo",
    "cwd": "/ws",
    "status": "idle",
    "seq": 3,
    "messages": [
        {"messageId": "u1", "role": "user", "content": [{"type": "text", "text": "fix it"}]},
        {"role": "agent", "content": [{"type": "text", "text": "Sure.\nDone."}]},
    ],
    "toolCalls": [
        {
            "toolCallId": "t1",
            "title": "Edit x.py",
            "kind": "edit",
            "status": "completed",
            "locations": [{"path": "/ws/x.py", "line": 2}],
            "content": [
                {"type": "diff", "path": "/ws/x.py", "oldText": "a\nb\n", "newText": "a\nc\n"}
            ],
            "review": {"status": "pending"},
        }
    ],
    "timeline": [{"message": 0}, {"toolCall": "t1"}, {"message": 1}],
    "commands": [{"name": "help", "description": "List commands"}],
    "usage": {"used": 10, "size": 100},
}


def load(editor: Editor, snapshot: dict[str, object] = SNAPSHOT) -> None:
    editor.lua(
        "local s = require('acp_lsp.sessions').load_snapshot(vim.json.decode(...)) "
        "require('acp_lsp.chat').open(s)",
        json.dumps(snapshot),
    )


def update(editor: Editor, seq: int, *updates: dict[str, object], sid: str = "s1") -> None:
    editor.lua(
        "require('acp_lsp.handlers').session_update(nil, vim.json.decode(...), {})",
        json.dumps({"sessionId": sid, "seq": seq, "updates": list(updates)}),
    )


def chunk(kind: str, text: str, **extra: object) -> dict[str, object]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}, **extra}


def test_snapshot_renders_its_timeline(editor: Editor) -> None:
    load(editor)
    assert editor.chat() == "\n".join(
        [
            "## You",
            "fix it",
            "",
            "✓ Edit x.py  [edit · completed]",
            "  ↳ x.py:2",
            "  ┌ x.py",
            "  @@ -1,2 +1,2 @@",
            "   a",
            "  -b",
            "  +c",
            "  review: pending  (ga accept · gr reject)",
            "",
            "Sure.",
            "Done.",
        ]
    )
    assert editor.lua("return T.winbar()") == "demo · idle · tokens: 10/100"


def test_updates_apply_in_order_and_old_seqs_are_dropped(editor: Editor) -> None:
    load(editor)
    update(editor, 3, chunk("agent_message_chunk", "STALE"))
    update(editor, 4, chunk("agent_message_chunk", " More"), chunk("agent_message_chunk", " text"))
    update(editor, 4, chunk("agent_message_chunk", "DUPLICATE"))
    update(
        editor,
        5,
        {
            "sessionUpdate": "tool_call",
            "toolCall": {
                "toolCallId": "t2",
                "title": "Run",
                "kind": "execute",
                "status": "in_progress",
                "content": [],
            },
        },
        {"sessionUpdate": "something_new", "x": 1},
    )
    update(
        editor,
        6,
        {
            "sessionUpdate": "tool_call",
            "toolCall": {
                "toolCallId": "t2",
                "title": "Run tests",
                "kind": "execute",
                "status": "completed",
            },
            "contentAppend": [
                {"type": "content", "content": {"type": "text", "text": "ok"}},
                {"type": "_custom", "data": 1},
            ],
        },
    )
    text = editor.chat()
    assert "STALE" not in text and "DUPLICATE" not in text
    assert text.endswith(
        "Sure.\nDone. More text\n\n✓ Run tests  [execute · completed]\n  ok\n  [_custom]"
    )
    assert editor.lua("return T.session().seq") == 6


def test_notifications_before_the_snapshot_are_kept(editor: Editor) -> None:
    update(editor, 3, chunk("agent_message_chunk", "old"))
    update(editor, 4, chunk("agent_message_chunk", " new"))
    load(editor)
    assert editor.chat().endswith("Sure.\nDone. new")


def test_streaming_appends_in_place_and_thoughts_fold(editor: Editor) -> None:
    load(editor, {**SNAPSHOT, "messages": [], "toolCalls": [], "timeline": []})
    editor.lua("T.record_lines()")
    update(editor, 4, chunk("agent_thought_chunk", "thinking\nhard", messageId="th"))
    update(editor, 5, chunk("agent_thought_chunk", "\nstill", messageId="th"))
    update(editor, 6, chunk("agent_message_chunk", "Hello", messageId="m"))
    for i, piece in enumerate([" wor", "ld", "\nsecond line"]):
        update(editor, 7 + i, chunk("agent_message_chunk", piece, messageId="m"))
    assert editor.chat() == "▸ Thinking\nthinking\nhard\nstill\n\nHello world\nsecond line"
    events = editor.lua("return T.line_events")
    # Every change touches only the last line of the buffer or adds lines after it.
    count = 1
    for first, last_old, last_new in events:
        assert first >= count - 1
        count += last_new - last_old
    assert events[-3:] == [[5, 6, 6], [5, 6, 6], [5, 6, 7]]
    closed = editor.lua(
        "return vim.api.nvim_win_call(T.chat_win(), function() return {vim.fn.foldclosed(2), "
        "vim.fn.foldclosedend(2), vim.fn.foldclosed(6)} end)"
    )
    assert closed == [1, 4, -1]


def test_plan_updates_in_place_and_terminal_output_streams(editor: Editor) -> None:
    load(editor, {**SNAPSHOT, "messages": [], "toolCalls": [], "timeline": []})
    plan = [
        {"content": "read", "status": "in_progress", "priority": "high"},
        {"content": "edit", "status": "pending", "priority": "low"},
    ]
    update(editor, 4, {"sessionUpdate": "plan", "entries": plan})
    update(
        editor,
        5,
        {
            "sessionUpdate": "tool_call",
            "toolCall": {
                "toolCallId": "t",
                "title": "Check",
                "kind": "execute",
                "status": "in_progress",
                "content": [{"type": "terminal", "terminalId": "term"}],
            },
        },
    )
    plan[0]["status"] = "completed"
    update(editor, 6, {"sessionUpdate": "plan", "entries": plan})
    editor.lua(
        "require('acp_lsp.handlers').terminal_output(nil, vim.json.decode(...))",
        json.dumps({"sessionId": "s1", "terminalId": "term", "data": "one\ntw"}),
    )
    editor.lua(
        "require('acp_lsp.handlers').terminal_output(nil, vim.json.decode(...))",
        json.dumps(
            {"sessionId": "s1", "terminalId": "term", "data": "o\n", "exitStatus": {"exitCode": 3}}
        ),
    )
    assert editor.chat() == (
        "Plan\n  ✓ read\n  ○ edit\n\n"
        "◐ Check  [execute · in_progress]\n  $ terminal term (exit 3)\n  │ one\n  │ two"
    )
    editor.lua(
        "require('acp_lsp.handlers').terminal_output(nil, vim.json.decode(...))",
        json.dumps({"sessionId": "s1", "terminalId": "term", "data": "fresh\n", "reset": True}),
    )
    assert editor.chat().endswith("(exit 3)\n  │ fresh")


def test_status_notices_and_winbar(editor: Editor) -> None:
    load(editor, {**SNAPSHOT, "messages": [], "toolCalls": [], "timeline": []})
    status = "require('acp_lsp.handlers').session_status(nil, vim.json.decode(...))"
    editor.lua(status, json.dumps({"sessionId": "s1", "status": "running"}))
    assert "running" in editor.lua("return T.winbar()")
    editor.lua(status, json.dumps({"sessionId": "s1", "status": "idle", "stopReason": "cancelled"}))
    editor.lua(status, json.dumps({"sessionId": "s1", "status": "running"}))
    editor.lua(
        status,
        json.dumps(
            {
                "sessionId": "s1",
                "status": "idle",
                "stopReason": "end_turn",
                "error": {"message": "agent exploded"},
            }
        ),
    )
    assert editor.chat() == "── cancelled ──\n\n── error: agent exploded ──"


PERMISSION = {
    "sessionId": "s1",
    "toolCall": {
        "toolCallId": "t1",
        "title": "Edit x.py",
        "kind": "edit",
        "locations": [{"path": "/ws/x.py", "line": 2}],
    },
    "options": [
        {"optionId": "a", "name": "Allow", "kind": "allow_once"},
        {"optionId": "r", "name": "Reject", "kind": "reject_once"},
    ],
}

ASK = """
local params = vim.json.decode(...)
T.results = T.results or {}
local i = #T.results + 1
T.results[i] = false
coroutine.wrap(function()
  T.results[i] = require('acp_lsp.handlers').request_permission(nil, params, {})
end)()
"""


def test_permissions_are_asked_one_at_a_time_and_answered_once(editor: Editor) -> None:
    editor.lua("require('acp_lsp.config').options.permission_ui = 'select'")
    load(editor)
    editor.lua("T.answer = 'manual'")
    editor.lua(ASK, json.dumps(PERMISSION))
    second = {
        **PERMISSION,
        "toolCall": {"toolCallId": "t9", "title": "Delete y.py", "kind": "delete"},
    }
    editor.lua(ASK, json.dumps(second))
    editor.wait("T.pending ~= nil")
    assert editor.lua("return #T.selects") == 1
    assert editor.lua("return T.selects[1].prompt") == "Agent asks: [edit] Edit x.py (/ws/x.py:2)"
    assert "⚠ awaiting permission: Allow / Reject" in editor.chat()
    assert "⚠ 2 permissions" in editor.lua("return T.winbar()")

    editor.lua("T.choose('Allow')")
    editor.wait("T.results[1] ~= false and T.pending ~= nil")
    assert editor.lua("return T.results[1]") == {
        "outcome": {"outcome": "selected", "optionId": "a"}
    }
    assert editor.lua("return T.selects[2].prompt") == "Agent asks: [delete] Delete y.py"
    assert "awaiting permission" not in editor.chat()

    # The session is cancelled: the open question is answered `cancelled`, once.
    editor.lua(
        "require('acp_lsp.handlers').session_status(nil, {sessionId = 's1', status = 'cancelling'})"
    )
    editor.wait("T.results[2] ~= false")
    assert editor.lua("return T.results[2]") == {"outcome": {"outcome": "cancelled"}}
    editor.lua("T.choose('Allow')")  # the picker closes late: nothing changes
    editor.lua("vim.wait(50)")
    assert editor.lua("return T.results[2]") == {"outcome": {"outcome": "cancelled"}}
    assert editor.lua("return #require('acp_lsp.permissions').pending()") == 0


def test_dismissed_permission_is_cancelled(editor: Editor) -> None:
    editor.lua("require('acp_lsp.config').options.permission_ui = 'select'")
    load(editor)
    editor.lua("T.answer = nil")
    editor.lua(ASK, json.dumps(PERMISSION))
    editor.wait("T.results[1] ~= false")
    assert editor.lua("return T.results[1]") == {"outcome": {"outcome": "cancelled"}}


SHOW = (
    "return require('acp_lsp.handlers').show_document(nil, vim.json.decode(...), { client_id = 0 })"
)


def show(editor: Editor, path: Path, line: int, character: int = 0) -> object:
    pos = {"line": line, "character": character}
    return editor.lua(
        SHOW,
        json.dumps(
            {"uri": path.as_uri(), "takeFocus": False, "selection": {"start": pos, "end": pos}}
        ),
    )


def test_follow_reuses_one_window_and_keeps_the_cursor(editor: Editor, tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("".join(f"a{i}\n" for i in range(50)))
    b.write_text("x\nhé€llo wörld\n")
    editor.cmd(f"edit {a}")
    editor.cmd("normal! 10G")
    user = editor.lua("return vim.api.nvim_get_current_win()")

    assert show(editor, a, 30) == {"success": True}
    follow = editor.lua("return require('acp_lsp.follow').win")
    assert follow != user
    assert editor.lua("return vim.api.nvim_win_get_cursor(...)", follow) == [31, 0]
    # b.txt line 2, UTF-16 character 6 = after "hé€ll": byte 8
    assert show(editor, b, 1, 5) == {"success": True}
    assert editor.lua("return require('acp_lsp.follow').win") == follow
    assert editor.lua(
        "return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(...))", follow
    ) == str(b)
    assert editor.lua("return vim.api.nvim_win_get_cursor(...)", follow) == [2, 8]
    assert editor.lua("return #vim.api.nvim_tabpage_list_wins(0)") == 2
    assert editor.lua("return vim.api.nvim_get_current_win()") == user
    assert editor.lua("return vim.api.nvim_win_get_cursor(0)") == [10, 0]
    # Missing files are refused, nothing moves.
    assert show(editor, tmp_path / "missing.txt", 1) == {"success": False}


def test_follow_uses_a_file_window_when_the_user_is_in_the_chat(
    editor: Editor, tmp_path: Path
) -> None:
    a = tmp_path / "a.txt"
    a.write_text("1\n2\n3\n")
    load(editor)
    editor.lua("local chat = T.chat_windows() vim.api.nvim_set_current_win(chat)")
    wins = editor.lua("return #vim.api.nvim_tabpage_list_wins(0)")
    assert show(editor, a, 2) == {"success": True}
    follow = editor.lua("return require('acp_lsp.follow').win")
    assert editor.lua("return #vim.api.nvim_tabpage_list_wins(0)") == wins
    assert editor.lua("return vim.b[vim.api.nvim_win_get_buf(...)].acp_session_id", follow) is None
    assert editor.lua("return vim.api.nvim_win_get_cursor(...)", follow) == [3, 0]
    assert editor.lua("return vim.b.acp_session_id") == "s1"


def test_save_document_writes_modified_buffers(editor: Editor, tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("old\n")
    editor.cmd(f"edit {f}")
    editor.lua("vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'new' })")
    result = editor.lua(
        "return require('acp_lsp.handlers').save_document(nil, { uris = { ... } }, {})",
        f.as_uri(),
        (tmp_path / "nobuffer.txt").as_uri(),
    )
    assert result == {"saved": [f.as_uri()]}
    assert f.read_text() == "new\n"
    assert editor.lua("return vim.bo.modified") is False


def test_prompt_blocks_from_mentions_and_selection(editor: Editor, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text("one\ntwo\nthree\n")
    editor.cmd(f"cd {tmp_path}")
    editor.cmd("edit src/m.py")
    load(editor)
    editor.lua("require('acp_lsp.chat.prompt').attach_range('s1', vim.fn.bufnr('src/m.py'), 2, 3)")
    blocks = editor.lua(
        "local p = require('acp_lsp.chat.prompt') "
        "return p.build_prompt('look at @src/m.py, and @nothing.txt', ..., p.attachments.s1)",
        str(tmp_path),
    )
    uri = (tmp_path / "src" / "m.py").as_uri()
    assert blocks == [
        {"type": "text", "text": "look at @src/m.py, and @nothing.txt"},
        {"type": "resource_link", "uri": uri, "name": "src/m.py"},
        {
            "type": "resource",
            "resource": {"uri": uri + "#L2:3", "text": "two\nthree", "mimeType": "text/x-python"},
        },
    ]


def test_setup_reports_bad_options_by_name(editor: Editor) -> None:
    editor.lua(
        "require('acp_lsp').setup({ cmd = 'acp-lsp', settings = { followAlong = 'yes' }, "
        "chat = { position = 'middle' }, colour = 1 })"
    )
    notes = editor.lua("return vim.tbl_map(function(n) return n.msg end, T.notifications)")
    assert 'acp_lsp.setup: unknown option "colour"' in notes
    assert "acp_lsp.setup: cmd: expected table, got string" in notes
    assert "acp_lsp.setup: settings.followAlong: expected boolean, got string" in notes
    assert any("chat.position" in n for n in notes)
    options = editor.lua("return require('acp_lsp.config').options")
    assert "cmd" not in options and options["chat"]["position"] == "right"  # the default: none


def test_settings_encode_objects_as_objects(editor: Editor) -> None:
    encoded = editor.lua(
        "local c = require('acp_lsp.config') return { vim.json.encode(c.json_settings({})), "
        "vim.json.encode(c.json_settings("
        "{ agents = { x = { command = 'x', args = {}, env = {} } } })) }"
    )
    assert encoded[0] == "{}"
    assert json.loads(encoded[1]) == {"agents": {"x": {"command": "x", "args": [], "env": {}}}}
    assert '"env":{}' in encoded[1]


def test_older_neovim_gets_a_clear_message(editor: Editor) -> None:
    editor.lua(
        "local has = vim.fn.has vim.fn.has = function(f) if f == 'nvim-0.11' then return 0 end "
        "return has(f) end require('acp_lsp').setup({}) vim.fn.has = has"
    )
    notes = editor.lua("return vim.tbl_map(function(n) return n.msg end, T.notifications)")
    assert notes == ["acp_lsp requires Neovim >= 0.11 (this is 0.11.4)"]


def test_command_completion(editor: Editor) -> None:
    subs = editor.lua("return vim.fn.getcompletion('Acp ', 'cmdline')")
    assert subs == sorted(
        [
            "new",
            "prompt",
            "cancel",
            "queue",
            "sessions",
            "agents",
            "follow",
            "mode",
            "review",
            "chat",
            "close",
            "log",
            "config",
            "restart",
            "add",
            "detach",
            "switch",
            "rename",
            "delete",
            "history",
            "fork",
            "logout",
            "install",
        ]
    )
    assert editor.lua("return vim.fn.getcompletion('Acp review ', 'cmdline')") == [
        "accept",
        "reject",
    ]
    assert editor.lua("return vim.fn.getcompletion('Acp review reject ', 'cmdline')") == ["all"]
    assert editor.lua("return vim.fn.getcompletion('Acp follow o', 'cmdline')") == ["on", "off"]


def test_help_tags_cover_every_subcommand(editor: Editor, tmp_path: Path) -> None:
    doc = tmp_path / "doc"
    doc.mkdir()
    text = (PLUGIN / "doc" / "acp_lsp.txt").read_text()
    (doc / "acp_lsp.txt").write_text(text)
    editor.cmd(f"helptags {doc}")  # fails on duplicate tags
    tags = (doc / "tags").read_text()
    subs = editor.lua("return vim.tbl_keys(require('acp_lsp.commands').subcommands)")
    for sub in subs:
        assert f":Acp-{sub}\t" in tags
    for tag in ("acp_lsp.setup()", "acp_lsp-health", "acp_lsp-follow", ":Acp"):
        assert f"{tag}\t" in tags


def test_log_and_chat_toggle_commands(editor: Editor) -> None:
    load(editor)
    editor.lua(
        "require('acp_lsp.handlers').log_message(nil, { type = 2, message = 'agent said hi' }, "
        "{ client_id = 0 })"
    )
    editor.cmd("Acp log")
    assert editor.lua("return vim.api.nvim_buf_get_name(0)") == "acp://log"
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, -2, -1, false)[1]").endswith(
        "warn  agent said hi"
    )
    editor.cmd("close")
    editor.lua("local chat = T.chat_windows() vim.api.nvim_set_current_win(chat)")
    editor.cmd("Acp chat")
    assert editor.lua("return T.chat_windows()") is None
    editor.cmd("Acp chat")
    assert editor.lua("return vim.b.acp_prompt") is True
