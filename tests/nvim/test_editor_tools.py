"""acp/editorTool in real Neovim: the plugin answers the editor tools from what Neovim knows
(diagnostics, buffers, the selection) and from the real Python language servers attached to
the files (ruff for diagnostics, jedi-language-server for definitions, references, hover and
symbols), and shows openDiff for the user to keep or reject.

Most tests call the handler the way Neovim's RPC layer calls it for a server request (in a
coroutine, with the acp_lsp client's id), with the params the bridge sends; the last goes
through the real bridge: an agent's MCP client calls the tools of its session."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from acp_lsp.editor_tools.tools import BRIDGE_ONLY, TOOL_NAMES
from tests.agents import read_log
from tests.agents.scripted_acp import DEFAULT_INITIALIZE
from tests.e2e.test_files import agent_config
from tests.nvim import test_screenshots as shots
from tests.nvim.conftest import SERVER_CMD, Editor
from tests.support.acp_lsp_schema import validate

pytestmark = pytest.mark.timeout(90)

# An ACP agent that takes HTTP MCP servers (the bridge adds its editor tools to them).
HTTP_MCP = {
    **DEFAULT_INITIALIZE,
    "agentCapabilities": {
        **DEFAULT_INITIALIZE["agentCapabilities"],
        "mcpCapabilities": {"http": True},
    },
}

BIN = Path(sys.executable).parent
RUFF = BIN / "ruff"
JEDI = BIN / "jedi-language-server"

MAIN = """import os

from pkg.util import helper

print("é", helper(2))
"""

UTIL = '''def helper(x):
    """Double x."""
    return x * 2


class Greeter:
    def greet(self, name):
        return "hi " + name
'''

CALL = """
ET = ET or { results = {}, n = 0 }
local tool, args, session = ...
local handler = require('acp_lsp.config').lsp_config().handlers['acp/editorTool']
local client = assert(require('acp_lsp.client').get(), 'acp_lsp client not running')
ET.n = ET.n + 1
local id = ET.n
-- As vim/lsp/rpc.lua runs a server request.
vim.schedule(coroutine.wrap(function()
  local result, err = handler(nil, { sessionId = session, tool = tool, arguments = args },
    { method = 'acp/editorTool', client_id = client.id })
  ET.results[id] = { result = result, err = err }
end))
return id
"""

SERVERS = """
local ruff, jedi = ...
local function enable(name, cmd)
  vim.lsp.config(name, { cmd = cmd, filetypes = { 'python' }, root_markers = { 'pyproject.toml' } })
  vim.lsp.enable(name)
end
if ruff ~= '' then enable('ruff', { ruff, 'server' }) end
if jedi ~= '' then
  enable('jedi', { jedi })
  -- jedi counts UTF-16 units, acp-lsp bytes: answers are converted between the two.
  vim.lsp.config('jedi', { before_init = function(params)
    params.capabilities.general.positionEncodings = { 'utf-16' }
  end })
end
"""


def need(*binaries: Path) -> None:
    for binary in binaries:
        if not binary.exists():
            pytest.skip(f"{binary.name} is not installed (pip install '.[test]')")


@pytest.fixture
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    """Settings of the acp-lsp server: none; with editor tools on and a scripted ACP agent that
    takes HTTP MCP servers (its log in tmp_path/agent.log) for a test that needs the bridge."""
    if "bridged" not in request.fixturenames:
        return {}
    # Its turns wait until cancelled.
    script = {
        "initialize": HTTP_MCP,
        "on": {"session/prompt": [{"wait_cancel": True}, {"respond": {"stopReason": "cancelled"}}]},
    }
    agent = agent_config(script, tmp_path, tmp_path / "agent.log")
    return {
        "editorTools": {"enabled": True},
        "agents": {"scripted": agent},
        "defaultAgent": "scripted",
    }


@pytest.fixture
def py(editor: Editor, tmp_path: Path, settings: dict[str, Any]) -> Iterator[Editor]:
    """A Python project, ruff and jedi-language-server configured for Python buffers, the
    acp_lsp client running against the real server."""
    ws = tmp_path / "proj"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pyproject.toml").write_text('[project]\nname = "proj"\nversion = "0"\n')
    (ws / "pkg" / "__init__.py").write_text("")
    (ws / "pkg" / "util.py").write_text(UTIL)
    (ws / "main.py").write_text(MAIN)
    (ws / "notes.txt").write_text("plain text\n")
    editor.cmd(f"cd {ws}")
    editor.lua(SERVERS, str(RUFF) if RUFF.exists() else "", str(JEDI) if JEDI.exists() else "")
    editor.lua("T.setup(...)", SERVER_CMD, settings)
    editor.cmd("edit main.py")
    editor.wait("require('acp_lsp.client').get() and require('acp_lsp.client').get().initialized")
    editor.ws = ws  # type: ignore[attr-defined]
    yield editor
    # jedi-language-server takes seconds to exit when asked
    editor.lua(
        "for _, c in ipairs(vim.lsp.get_clients({ _uninitialized = true })) do "
        "if c.name ~= 'acp_lsp' then c:stop(true) end end"
    )


def ws(editor: Editor) -> Path:
    return editor.ws  # type: ignore[attr-defined,no-any-return]


def uri(path: Path) -> str:
    return path.as_uri()


def start(
    editor: Editor, tool: str, args: dict[str, Any] | None = None, session: str = "s1"
) -> int:
    return int(editor.lua(CALL, tool, args or {}, session))


def result(editor: Editor, call: int, timeout_ms: int = 20000) -> Any:
    editor.wait("ET.results[a[1]] ~= nil", call, timeout_ms=timeout_ms)
    return editor.lua("return vim.json.encode(ET.results[...])", call)


def ask(editor: Editor, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"sessionId": "s1", "tool": tool, "arguments": args or {}}
    validate("acp/editorTool", "params", params)
    answer = json.loads(result(editor, start(editor, tool, args)))
    assert "err" not in answer, answer
    validate("acp/editorTool", "result", answer["result"])
    return answer["result"]  # type: ignore[no-any-return]


def ask_error(editor: Editor, tool: str, args: dict[str, Any]) -> str:
    answer = json.loads(result(editor, start(editor, tool, args)))
    assert "result" not in answer, answer
    return str(answer["err"]["message"])


def wait_server(editor: Editor, name: str, method: str) -> None:
    editor.wait("#vim.lsp.get_clients({ name = a[1], bufnr = 0, method = a[2] }) > 0", name, method)


def test_the_client_declares_the_tools(py: Editor) -> None:
    declared = py.lua(
        "return require('acp_lsp.client').get().capabilities.experimental.acp.editorTools"
    )
    # the plugin answers every tool a front end can (openFile is always the bridge's)
    assert declared == [t for t in TOOL_NAMES if t not in BRIDGE_ONLY]


def test_diagnostics_are_ruffs_for_the_open_file_and_none_for_a_closed_one(py: Editor) -> None:
    need(RUFF)
    py.wait("#vim.diagnostic.get(0) > 0")
    main, util = ws(py) / "main.py", ws(py) / "pkg" / "util.py"
    got = ask(py, "diagnostics", {"uri": uri(main)})["diagnostics"]
    f401 = [d for d in got if d.get("code") == "F401"]
    assert f401 == [
        {
            "uri": uri(main),
            "range": {"start": {"line": 0, "character": 7}, "end": {"line": 0, "character": 9}},
            "severity": 2,  # ruff reports lint as warnings
            "source": "Ruff",
            "code": "F401",
            "message": f401[0]["message"],
        }
    ]
    assert "`os` imported but unused" in f401[0]["message"]
    everything = ask(py, "diagnostics")["diagnostics"]
    assert [d for d in everything if d.get("code") == "F401"] == f401
    closed = ask(py, "diagnostics", {"uri": uri(util)})
    assert closed["diagnostics"] == []
    assert "not open" in closed["note"]


MANY = """
local ns = vim.api.nvim_create_namespace('acp-test-many')
for _, spec in ipairs({ ... }) do
  local path, count = spec[1], spec[2]
  vim.fn.writefile(vim.fn['repeat']({ 'x = 1' }, count), path)
  local buf = vim.fn.bufadd(path)
  vim.fn.bufload(buf)
  local items = {}
  for i = 0, count - 1 do
    items[#items + 1] = { lnum = i, col = 0, severity = 4 - i % 4, message = spec[3] .. ':' .. i }
  end
  vim.diagnostic.set(ns, buf, items)
end
"""


def test_a_workspace_s_diagnostics_are_cut_to_the_limit_worst_first_and_to_its_folders(
    py: Editor,
) -> None:
    """The bridge asks for at most 500, of the session's folders only: the plugin leaves out
    the rest before converting them, and says how many it had."""
    big = ws(py) / "big"
    big.mkdir()
    files = [(big / "a.txt", 400, "a"), (big / "b.txt", 300, "b"), (ws(py) / "c.txt", 50, "c")]
    py.lua(MANY, *[[str(path), count, name] for path, count, name in files])
    got = ask(py, "diagnostics", {"limit": 500, "folders": [str(big)]})
    assert got["total"] == 700
    # errors, then warnings, then the editor's first informations; in the editor's order
    every = [(name, i, 4 - i % 4) for _, count, name in files[:2] for i in range(count)]
    ranked = sorted(range(len(every)), key=lambda k: (every[k][2], k))[:500]
    expected = [f"{every[k][0]}:{every[k][1]}" for k in sorted(ranked)]
    assert [d["message"] for d in got["diagnostics"]] == expected
    assert sum(d["severity"] == 1 for d in got["diagnostics"]) == 175
    assert {d["uri"] for d in got["diagnostics"]} == {uri(big / "a.txt"), uri(big / "b.txt")}
    # one file: the limit holds there too
    one = ask(py, "diagnostics", {"uri": uri(big / "a.txt"), "limit": 10})
    assert one["total"] == 400 and [d["severity"] for d in one["diagnostics"]] == [1] * 10


def test_definition_references_and_hover_come_from_jedi_across_files(py: Editor) -> None:
    need(JEDI)
    wait_server(py, "jedi", "textDocument/definition")
    main, util = ws(py) / "main.py", ws(py) / "pkg" / "util.py"
    # `helper` in `print("é", helper(2))`, line 5: byte 13 (acp-lsp), UTF-16 unit 12 (jedi)
    at_call = {"uri": uri(main), "position": {"line": 4, "character": 13}}
    assert py.lua("return vim.lsp.get_clients({ name = 'jedi' })[1].offset_encoding") == "utf-16"
    defs = ask(py, "definition", at_call)["locations"]
    assert defs == [
        {
            "uri": uri(util),
            "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 10}},
        }
    ]
    hover = ask(py, "hover", at_call)["contents"]
    assert "helper(x)" in hover and "Double x." in hover

    # From the definition, a file the user has not opened: loaded hidden for jedi, then
    # unloaded again.
    refs = ask(py, "references", {"uri": uri(util), "position": {"line": 0, "character": 5}})
    spots = sorted(
        (r["uri"], r["range"]["start"]["line"], r["range"]["start"]["character"])
        for r in refs["locations"]
    )
    assert spots == [(uri(main), 2, 21), (uri(main), 4, 12), (uri(util), 0, 4)]
    assert py.lua("return vim.fn.bufloaded(...)", str(util)) == 0
    assert py.lua("return vim.fn.buflisted(...)", str(util)) == 0


# A language server inside Neovim (like none-ls): it answers hover at once, inside request().
IN_PROCESS = """
vim.lsp.config('inproc', {
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml' },
  cmd = function(dispatchers)
    local id, closing = 0, false
    return {
      request = function(method, _, callback)
        id = id + 1
        if method == 'initialize' then
          vim.schedule(function()
            callback(nil, { capabilities = { hoverProvider = true } })
          end)
        elseif method == 'textDocument/hover' then
          if INPROC_SILENT then -- a server that hangs: never answers
            return true, id
          end
          callback(nil, { contents = { kind = 'markdown', value = 'from **inproc**' } })
        else
          vim.schedule(function() callback(nil, vim.NIL) end)
        end
        return true, id
      end,
      notify = function() return true end,
      is_closing = function() return closing end,
      terminate = function()
        closing = true
        dispatchers.on_exit(0, 15)
      end,
    }
  end,
})
vim.lsp.enable('inproc')
"""


def test_hover_merges_every_server_also_one_that_answers_at_once(py: Editor) -> None:
    need(JEDI)
    py.lua(IN_PROCESS)
    wait_server(py, "inproc", "textDocument/hover")
    wait_server(py, "jedi", "textDocument/hover")
    at_call = {"uri": uri(ws(py) / "main.py"), "position": {"line": 4, "character": 13}}
    parts = ask(py, "hover", at_call)["contents"].split("\n\n---\n\n")
    assert len(parts) == 2 and "from **inproc**" in parts and "Double x." in "".join(parts)


def test_a_server_that_does_not_answer_leaves_the_others_answer_in_time(py: Editor) -> None:
    need(JEDI)
    wait_server(py, "jedi", "textDocument/hover")
    at_call = {"uri": uri(ws(py) / "main.py"), "position": {"line": 4, "character": 13}}
    # jedi's first hover infers the module (seconds on a loaded machine): warm it first, so
    # what follows waits only on the silent server
    assert "Double x." in ask(py, "hover", at_call)["contents"]
    py.lua("INPROC_SILENT = true")
    py.lua(IN_PROCESS)
    wait_server(py, "inproc", "textDocument/hover")
    # The bridge waits editorTools.timeoutS; Neovim answers a second before with what it has.
    py.lua("require('acp_lsp.config').options.settings.editorTools = { timeoutS = 3 }")
    hover = ask(py, "hover", at_call)["contents"]
    assert "Double x." in hover and "inproc" not in hover
    # Only the silent server leaves a request; Neovim withdrew it ($/cancelRequest).
    assert (
        py.lua(
            "local c = vim.lsp.get_clients({ name = 'inproc' })[1] "
            "return vim.tbl_count(vim.tbl_filter(function(r) return r.type == 'pending' end, c.requests))"
        )
        == 0
    )


def test_symbols_of_a_document_and_of_the_workspace(py: Editor) -> None:
    need(JEDI)
    wait_server(py, "jedi", "workspace/symbol")
    util = ws(py) / "pkg" / "util.py"
    symbols = ask(py, "documentSymbols", {"uri": uri(util)})["symbols"]
    flat = [(s["name"], s["kind"], s.get("containerName")) for s in symbols]
    # LSP SymbolKind: 12 function, 5 class, 6 method
    assert ("helper", 12, None) in flat
    assert ("Greeter", 5, None) in flat
    assert ("greet", 6, "Greeter") in flat
    greeter = next(s for s in symbols if s["name"] == "Greeter")
    assert greeter["range"]["start"] == {"line": 5, "character": 0}

    found = ask(py, "workspaceSymbols", {"query": "Greeter"})["symbols"]
    assert {"name": "Greeter", "kind": 5, "uri": uri(util), "line": 5} in [
        {
            "name": s["name"],
            "kind": s["kind"],
            "uri": s["location"]["uri"],
            "line": s["location"]["range"]["start"]["line"],
        }
        for s in found
    ]


def test_a_file_without_a_language_server_says_so(py: Editor) -> None:
    notes = ws(py) / "notes.txt"
    message = ask_error(
        py, "definition", {"uri": uri(notes), "position": {"line": 0, "character": 1}}
    )
    # acp-lsp itself is attached to every file, but it is not a language server of it
    assert message == "no language server is attached to notes.txt"
    missing = ask_error(
        py, "hover", {"uri": uri(ws(py) / "gone.py"), "position": {"line": 0, "character": 0}}
    )
    assert missing == f"no such file: {ws(py) / 'gone.py'}"
    assert ask_error(py, "definition", {"uri": uri(notes)}) == (
        "textDocument/definition needs a position"
    )


def test_open_editors_and_the_selection(py: Editor) -> None:
    main, util = ws(py) / "main.py", ws(py) / "pkg" / "util.py"
    py.cmd("edit pkg/util.py")
    py.lua("vim.api.nvim_buf_set_lines(0, 7, 7, false, { '# unsaved' })")
    py.cmd("buffer " + str(main))
    # Select `helper(2)` on line 5 (characterwise), leave Visual mode.
    py.lua("vim.api.nvim_win_set_cursor(0, { 5, 12 })")
    py.nvim.input("vf)<Esc>")
    py.poll("vim.fn.mode() == 'n' and vim.api.nvim_buf_get_mark(0, '>')[1] == 5")
    # The user is in another window now (e.g. the chat): the file stays the active one.
    py.cmd("botright new")
    py.lua("vim.bo.buftype = 'nofile'")

    editors = ask(py, "openEditors")["editors"]
    assert sorted(editors, key=lambda e: str(e["uri"])) == [
        {"uri": uri(main), "languageId": "python", "dirty": False, "active": True},
        {"uri": uri(util), "languageId": "python", "dirty": True, "active": False},
    ]
    selection = ask(py, "selection")["selection"]
    assert selection == {
        "uri": uri(main),
        "range": {"start": {"line": 4, "character": 12}, "end": {"line": 4, "character": 21}},
        "text": "helper(2)",
    }

    # Linewise, lines 1-3.
    py.cmd("wincmd p")
    py.lua("vim.api.nvim_win_set_cursor(0, { 1, 3 })")
    py.nvim.input("Vjj<Esc>")
    py.poll("vim.fn.mode() == 'n' and vim.api.nvim_buf_get_mark(0, '>')[1] == 3")
    selection = ask(py, "selection")["selection"]
    assert selection["text"] == "import os\n\nfrom pkg.util import helper"
    assert selection["range"] == {
        "start": {"line": 0, "character": 0},
        "end": {"line": 2, "character": 27},
    }

    # A block: `from` and `prin` (columns 1-4 of lines 3-5); asked while it is being made.
    py.lua("vim.api.nvim_win_set_cursor(0, { 3, 0 })")
    py.nvim.input("<C-v>jj3l")
    py.poll("vim.fn.mode() == '\\22' and vim.fn.col('.') == 4")
    selection = ask(py, "selection")["selection"]
    assert selection["text"] == "from\n\nprin"
    assert selection["range"] == {
        "start": {"line": 2, "character": 0},
        "end": {"line": 4, "character": 4},
    }


def test_no_selection_is_null(py: Editor) -> None:
    assert ask(py, "selection")["selection"] is None


PROPOSAL = "import sys\n\nfrom pkg.util import helper\n\nprint(helper(3))\n"


def diff_answer(editor: Editor, call: int) -> dict[str, Any]:
    answer = json.loads(result(editor, call))
    validate("acp/editorTool", "result", answer["result"])
    return answer["result"]  # type: ignore[no-any-return]


def diff_state(editor: Editor) -> dict[str, Any]:
    return editor.lua(  # type: ignore[no-any-return]
        """
        local wins = vim.api.nvim_tabpage_list_wins(0)
        return {
          tabs = #vim.api.nvim_list_tabpages(),
          diff = vim.tbl_map(function(w) return vim.wo[w].diff end, wins),
          names = vim.tbl_map(function(w) return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)) end, wins),
          current = vim.api.nvim_buf_get_name(0),
          lines = vim.api.nvim_buf_get_lines(0, 0, -1, false),
        }
        """
    )


def test_open_diff_kept_with_the_users_edit(py: Editor) -> None:
    main = ws(py) / "main.py"
    call = start(py, "openDiff", {"uri": uri(main), "newText": PROPOSAL, "title": "Use sys"})
    py.poll("vim.bo.buftype == 'acwrite'")
    state = diff_state(py)
    assert state["tabs"] == 2 and state["diff"] == [True, True]
    assert state["names"] == [str(main), "proposed://main.py"]
    assert state["lines"] == PROPOSAL.splitlines()
    assert "Proposed: main.py (Use sys)" in py.lua("return vim.wo.winbar")
    # The user changes the proposal, then keeps it.
    py.nvim.input("Gcc" + "print(helper(4))<Esc>")
    py.poll("vim.fn.mode() == 'n' and vim.api.nvim_get_current_line() == 'print(helper(4))'")
    py.nvim.input("ga")
    answer = diff_answer(py, call)
    assert answer == {"answer": "accept", "text": PROPOSAL.replace("helper(3)", "helper(4)")}
    state = diff_state(py)
    assert state["tabs"] == 1 and state["names"] == [str(main)] and state["diff"] == [False]
    assert main.read_text() == MAIN  # the agent writes the file, not the editor


def test_open_diff_rejected_by_key_by_closing_and_by_the_turns_end(py: Editor) -> None:
    main, util = ws(py) / "main.py", ws(py) / "pkg" / "util.py"
    call = start(py, "openDiff", {"uri": uri(main), "newText": PROPOSAL})
    py.poll("vim.bo.buftype == 'acwrite'")
    py.nvim.input("gr")
    assert diff_answer(py, call) == {"answer": "reject"}

    # A file that is not open: shown, then unloaded again; :q on the proposal rejects.
    call = start(py, "openDiff", {"uri": uri(util), "newText": UTIL + "\nX = 1\n"})
    py.poll("vim.bo.buftype == 'acwrite'")
    assert diff_state(py)["names"][0] == str(util)
    py.cmd("quit")
    assert diff_answer(py, call) == {"answer": "reject"}
    assert diff_state(py)["tabs"] == 1
    assert py.lua("return vim.fn.bufloaded(...)", str(util)) == 0

    # The session's turn is cancelled while the user has not answered.
    call = start(py, "openDiff", {"uri": uri(main), "newText": PROPOSAL}, session="s9")
    py.poll("vim.bo.buftype == 'acwrite'")
    py.lua(
        "require('acp_lsp.handlers').session_status(nil, { sessionId = 's9', status = 'idle' }, {})"
    )
    assert diff_answer(py, call) == {"answer": "reject"}
    assert diff_state(py)["tabs"] == 1


def test_open_diff_waits_until_the_user_leaves_insert_mode(py: Editor) -> None:
    main = ws(py) / "main.py"
    py.nvim.input("Go")
    py.poll("vim.fn.mode() == 'i'")
    call = start(py, "openDiff", {"uri": uri(main), "newText": PROPOSAL})
    py.poll(
        "#T.notifications > 0 and T.notifications[#T.notifications].msg:find('leave Insert') ~= nil"
    )
    py.nvim.input("typed ga")  # goes to the file, not the proposal
    assert diff_state(py)["tabs"] == 1
    py.nvim.input("<Esc>")
    py.poll("vim.bo.buftype == 'acwrite'")
    assert diff_state(py)["lines"] == PROPOSAL.splitlines()
    py.nvim.input("gr")
    assert diff_answer(py, call) == {"answer": "reject"}
    assert py.lua("return vim.api.nvim_buf_get_lines(0, -2, -1, false)") == ["typed ga"]


def test_open_diff_kept_with_write(py: Editor) -> None:
    main = ws(py) / "main.py"
    call = start(py, "openDiff", {"uri": uri(main), "newText": "x = 1"})
    py.poll("vim.bo.buftype == 'acwrite'")
    py.cmd("write")
    assert diff_answer(py, call) == {"answer": "accept", "text": "x = 1"}


# Through the real bridge.


@pytest.fixture
def bridged(py: Editor, tmp_path: Path) -> str:
    """A session of the scripted agent started from Neovim; the MCP URL the agent got."""
    py.lua("T.new_session()")
    return mcp_url(tmp_path / "agent.log")


def mcp_url(log: Path) -> str:
    (new,) = [m for m in read_log(log) if m.get("method") == "session/new"]
    (server,) = [s for s in new["params"]["mcpServers"] if s["name"] == "editor"]
    return str(server["url"])


def mcp_call(url: str, tool: str, args: dict[str, Any]) -> tuple[bool, Any]:
    """(is_error, the JSON answer or the error text) as the agent gets it."""

    async def run() -> tuple[bool, Any]:
        async with Client(url) as client:
            result = await client.call_tool(tool, args)
        text = result.content[0].text  # type: ignore[union-attr]
        return result.is_error, text if result.is_error else json.loads(text)

    return asyncio.run(run())


def test_an_agent_gets_neovims_answers_through_the_bridge(py: Editor, bridged: str) -> None:
    need(RUFF, JEDI)
    url = bridged
    main, util = ws(py) / "main.py", ws(py) / "pkg" / "util.py"
    py.wait("#vim.diagnostic.get(vim.fn.bufnr(a[1])) > 0", str(main))
    is_error, found = mcp_call(url, "diagnostics", {"path": "main.py"})
    assert not is_error, found
    (file,) = found["files"]
    assert file["path"] == str(main) and found["total"] == len(file["diagnostics"])
    (f401,) = [d for d in file["diagnostics"] if d.get("code") == "F401"]
    assert (f401["line"], f401["column"], f401["severity"], f401["source"]) == (
        1,
        8,
        "warning",
        "Ruff",
    )
    wait_server(py, "jedi", "textDocument/definition")
    # `helper` on line 5 (1-based; column 14 = byte 13 + 1 in Neovim's UTF-8)
    is_error, found = mcp_call(url, "definition", {"path": str(main), "line": 5, "column": 14})
    assert not is_error, found
    assert [(d["path"], d["line"], d["column"]) for d in found["locations"]] == [(str(util), 1, 5)]

    # openDiff waits for the user, who keeps the proposal with ga.
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(
            mcp_call, url, "openDiff", {"path": "main.py", "newText": PROPOSAL, "title": "Use sys"}
        )
        py.poll("vim.bo.buftype == 'acwrite'", timeout_s=20)
        assert not pending.done()
        py.nvim.input("ga")
        assert pending.result(timeout=20) == (False, {"answer": "accept", "text": PROPOSAL})
    assert diff_state(py)["tabs"] == 1

    py.cmd("checkhealth acp_lsp")
    health = "\n".join(py.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert "OK editor tools for agents on; Neovim answers diagnostics, definition," in health


def test_a_cancelled_turn_rejects_its_open_diff(py: Editor, bridged: str) -> None:
    py.lua("T.send('go')")
    py.wait("T.session().status == 'running'")
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(
            mcp_call, bridged, "openDiff", {"path": "main.py", "newText": PROPOSAL}
        )
        py.poll("vim.bo.buftype == 'acwrite'", timeout_s=20)
        py.lua("require('acp_lsp').cancel()")
        assert pending.result(timeout=20) == (False, {"answer": "reject"})
    py.wait("T.session().status == 'idle'")
    assert diff_state(py)["tabs"] == 1


tui = shots.tui  # the fixture of tests/nvim/test_screenshots.py


def test_screenshot_open_diff(tui: shots.Tui) -> None:
    """The diff tab as the user sees it (docs/screenshots/nvim-editor-diff.png)."""
    tui.lua("T.setup(...)", SERVER_CMD)
    tui.cmd("edit src/app.py")
    tui.wait("require('acp_lsp.client').get() and require('acp_lsp.client').get().initialized")
    app = Path(tui.lua("return vim.fn.expand('%:p')"))
    proposal = (
        app.read_text()
        .replace(
            '    return f"Hello, {title_case(name)}!"', '    return f"Hi, {title_case(name)}."'
        )
        .replace(
            '    name = " ".join(argv) or "world"\n',
            '    name = " ".join(argv).strip() or "world"\n',
        )
    )
    call = start(
        tui, "openDiff", {"uri": uri(app), "newText": proposal, "title": "Friendlier greeting"}
    )
    tui.poll("vim.bo.buftype == 'acwrite'")
    tui.settle()
    screen = tui.shot(
        "editor-diff",
        [
            "Proposed: src/app.py (Friendlier greeting)",
            "ga / :w keep",
            'return f"Hi, {title_case(name)}."',
        ],
    )
    assert 'return f"Hello, {title_case(name)}!"' in screen  # the file, on the left
    tui.nvim.input("ga")
    assert diff_answer(tui, call) == {"answer": "accept", "text": proposal}
