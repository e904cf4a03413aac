"""Issue 27's proof in real Neovim with a real agent: Claude Code (claude-agent-acp) against
the scripted model, started from the acp-lsp plugin with editor tools on, its model calling
the editor's tools. Neovim answers them from ruff server and jedi-language-server attached
to the Python buffers, and the user answers openDiff in Neovim's diff tab. What the model
receives is what Claude sent it in its next request (recorded by the model server)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_editor_tools import load, use
from tests.model_server import ModelServer, Say, Script, Tool
from tests.nvim.conftest import Editor
from tests.nvim.test_editor_tools import JEDI, PROPOSAL, RUFF, diff_state, need, py, wait_server
from tests.support.production import CREDENTIALS, claude_config, processes_of

__all__ = ["py"]  # the fixture of tests/nvim/test_editor_tools.py, with this module's settings

CLAUDE_TURN_S = 240  # a whole turn on a shared 2-core machine: generous, never asserted on
KEPT = PROPOSAL.replace("helper(3)", "helper(4)")  # the proposal as the user changed it
REJECTED = "print('nothing else')\n"
TOOLS_USED = ("diagnostics", "definition", "hover", "references", "documentSymbols", "openDiff")


@pytest.fixture
def settings(editor: Editor, tmp_path: Path, model: ModelServer) -> dict[str, Any]:
    """Claude the default agent, its model the scripted one, editor tools on; Claude gets an
    empty HOME, and none of the developer's keys reach Neovim's children."""
    home = tmp_path / "home"
    home.mkdir()
    claude = claude_config(model, home)  # skips when the agent is not installed
    claude["env"]["HOME"] = str(home)
    editor.lua("for _, k in ipairs(...) do vim.env[k] = nil end", list(CREDENTIALS))
    return {
        "agents": {"claude": claude},
        "defaultAgent": "claude",
        "editorTools": {"enabled": True},
    }


def results_by_tool(model: ModelServer) -> list[tuple[str, Any]]:
    """(tool name, the tool result block) for each tool call of the turn, in order, as the
    model received them in Claude's last request."""
    (*_, last) = model.turn_requests()
    names: dict[str, str] = {}
    out = []
    for message in last.body["messages"]:
        if not isinstance(message["content"], list):
            continue
        for block in message["content"]:
            if block.get("type") == "tool_use":
                names[block["id"]] = block["name"]
            elif block.get("type") == "tool_result":
                out.append((names[block["tool_use_id"]], block))
    return out


def text_of(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


def answer(result: dict[str, Any]) -> Any:
    assert not result.get("is_error"), result
    return json.loads(text_of(result))


@pytest.mark.timeout(420)
def test_claude_s_model_gets_ruff_jedi_and_the_user_s_diff_answers_from_neovim(
    py: Editor, tmp_path: Path, model: ModelServer
) -> None:
    need(RUFF, JEDI)
    ws: Path = py.ws  # type: ignore[attr-defined]
    main, util = ws / "main.py", ws / "pkg" / "util.py"
    # `helper` in `print("é", helper(2))`: line 5, column 14 (1-based, Neovim's bytes)
    at_helper = {"path": str(main), "line": 5, "column": 14}
    model.script = Script(
        "editor tools",
        [
            [
                load(*TOOLS_USED),
                use("diagnostics", path="main.py"),
                use("definition", **at_helper),
                use("hover", **at_helper),
                # from the definition: a file the user has not opened
                use("references", path=str(util), line=1, column=5),
                use("documentSymbols", path="pkg/util.py"),
                use("openDiff", path="main.py", newText=PROPOSAL, title="Use sys"),
                # the model writes what the user kept
                Tool("read", {"path": str(main)}),
                Tool("write", {"path": str(main), "content": KEPT}),
                use("openDiff", path="main.py", newText=REJECTED),
                Say("Kept your version of main.py."),
            ]
        ],
    )
    py.wait("#vim.diagnostic.get(0) > 0")
    wait_server(py, "jedi", "textDocument/definition")
    shown = py.lua(
        "return vim.tbl_map(function(d) return { code = d.code, message = d.message, "
        "source = d.source } end, vim.diagnostic.get(0))"
    )
    py.lua("T.new_session(nil, 120000)")
    py.lua("T.send('Check main.py and propose a change.')")

    # The first openDiff: the user changes the proposal in the diff tab and keeps it.
    py.poll("vim.bo.buftype == 'acwrite'", timeout_s=CLAUDE_TURN_S)
    state = diff_state(py)
    assert state["tabs"] == 2 and state["names"] == [str(main), "proposed://main.py"]
    assert state["lines"] == PROPOSAL.splitlines()
    py.nvim.input("Gcc" + "print(helper(4))<Esc>")
    py.poll("vim.fn.mode() == 'n' and vim.api.nvim_get_current_line() == 'print(helper(4))'")
    py.nvim.input("ga")
    py.poll("#vim.api.nvim_list_tabpages() == 1", timeout_s=10)

    # The second: the user rejects it.
    py.poll(
        "vim.bo.buftype == 'acwrite' and vim.api.nvim_buf_get_lines(0, 0, -1, false)[1] "
        "== \"print('nothing else')\"",
        timeout_s=CLAUDE_TURN_S,
    )
    py.nvim.input("gr")
    py.poll("#vim.api.nvim_list_tabpages() == 1", timeout_s=10)
    py.wait(
        "T.session().status == 'idle' and T.find_line('Kept your version') ~= nil",
        timeout_ms=CLAUDE_TURN_S * 1000,
    )

    calls = results_by_tool(model)
    assert [name for name, _ in calls] == [
        "ToolSearch",
        "mcp__editor__diagnostics",
        "mcp__editor__definition",
        "mcp__editor__hover",
        "mcp__editor__references",
        "mcp__editor__documentSymbols",
        "mcp__editor__openDiff",
        "Read",
        "Write",
        "mcp__editor__openDiff",
    ]
    results = [result for _, result in calls]
    # ruff's real diagnostics, as Neovim shows them
    (file,) = answer(results[1])["files"]
    assert file["path"] == str(main)
    diagnostics = file["diagnostics"]
    (f401,) = [d for d in diagnostics if d.get("code") == "F401"]
    assert f401 == {
        "line": 1,
        "column": 8,
        "endLine": 1,
        "endColumn": 10,
        "severity": "warning",
        "source": "Ruff",
        "code": "F401",
        "message": f401["message"],
    }
    assert "`os` imported but unused" in f401["message"]
    assert sorted((d["code"], d["message"]) for d in diagnostics) == sorted(
        (d["code"], d["message"]) for d in shown
    )
    # jedi's definition, in the other file
    assert answer(results[2]) == {
        "locations": [{"path": str(util), "line": 1, "column": 5, "endLine": 1, "endColumn": 11}]
    }
    hover = answer(results[3])["text"]
    assert "helper(x)" in hover and "Double x." in hover
    spots = sorted((r["path"], r["line"], r["column"]) for r in answer(results[4])["locations"])
    assert spots == [(str(main), 3, 22), (str(main), 5, 13), (str(util), 1, 5)]
    outline = [
        (s["name"], s["kind"], s["line"], s.get("containerName"))
        for s in answer(results[5])["symbols"]
    ]
    assert ("helper", "function", 1, None) in outline
    assert ("Greeter", "class", 6, None) in outline
    assert ("greet", "method", 7, "Greeter") in outline
    # the user's answers
    assert answer(results[6]) == {"answer": "accept", "text": KEPT}
    assert answer(results[9]) == {"answer": "reject"}

    # What the user sees: Claude wrote the kept text; the open buffer shows it, unmodified.
    assert main.read_text() == KEPT
    py.wait("table.concat(T.buf_lines(a[1]), '\\n') .. '\\n' == a[2]", str(main), KEPT)
    assert py.lua("return vim.bo[vim.fn.bufnr(...)].modified", str(main)) is False
    assert diff_state(py)["tabs"] == 1
    assert "Kept your version of main.py." in py.chat()
    # pkg/util.py, read for the model, is not left open
    assert py.lua("return vim.fn.bufloaded(...)", str(util)) == 0

    # Closing the server ends Claude and its children.
    py.lua("require('acp_lsp.client').get():stop()")
    deadline = time.monotonic() + 30
    while processes_of(tmp_path / "home") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_of(tmp_path / "home") == []


@pytest.mark.timeout(420)
def test_in_claude_s_manual_mode_only_open_diff_asks_the_user_and_a_refused_one_never_opens(
    py: Editor, model: ModelServer
) -> None:
    """Claude's Manual mode asks before every MCP tool; the bridge allows the editor's
    read-only ones itself (once), so the user is asked only for openDiff."""
    need(RUFF)
    model.script = Script(
        "manual",
        [
            [
                load("diagnostics", "openDiff"),
                use("diagnostics", path="main.py"),
                use("openDiff", path="main.py", newText=PROPOSAL),
                Say("Nothing changed."),
            ]
        ],
    )
    py.wait("#vim.diagnostic.get(0) > 0")
    py.lua("T.answer = 'manual'")
    py.lua("T.new_session(nil, 120000)")
    py.cmd("Acp mode default")  # Claude's "Manual": it asks before each MCP tool
    py.wait("T.session().modes.currentModeId == 'default'")
    py.lua("T.send('Check main.py.')")

    # The first prompt the user sees is openDiff's: diagnostics, asked first, ran without one.
    py.wait("T.pending ~= nil", timeout_ms=CLAUDE_TURN_S * 1000)
    asked = py.lua("return T.selects")
    assert [a["prompt"] for a in asked] == ["Agent asks: [other] mcp__editor__openDiff"]
    assert asked[0]["items"][0] == "Yes" and asked[0]["items"][-1] == "No"
    assert diff_state(py)["tabs"] == 1  # nothing shown before the user allows it
    py.lua("T.choose('No')")
    # The turn ends with no key pressed: the refused diff never waited for the user.
    py.wait(
        "T.session().status == 'idle' and T.find_line('Nothing changed.') ~= nil",
        timeout_ms=CLAUDE_TURN_S * 1000,
    )
    assert diff_state(py)["tabs"] == 1
    assert len(py.lua("return T.selects")) == 1

    calls = results_by_tool(model)
    assert [name for name, _ in calls] == [
        "ToolSearch",
        "mcp__editor__diagnostics",
        "mcp__editor__openDiff",
    ]
    (file,) = answer(calls[1][1])["files"]
    assert [d["code"] for d in file["diagnostics"] if d.get("source") == "Ruff"] == ["F401"]
    refused = calls[2][1]
    assert refused.get("is_error") and "refused permission" in text_of(refused)
