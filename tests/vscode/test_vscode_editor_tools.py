"""Editor tools in real VS Code (code-server), issue 27: claude-agent-acp 0.101 against the
scripted model server, through the real acp-lsp server (editor tools on in the workspace's
acp-lsp.toml) and the packaged extension, with real Python language servers: a test-only
extension (tests/vscode/python_servers/) runs `ruff server` and `jedi-language-server` for
Python files, as a Python extension would. tests/vscode/editor_tools.mjs uses the workbench as a
person would:

- turn 1: the model calls `diagnostics` for main.py (ruff: `os` imported but unused) and for
  a file no editor shows (opened for its language servers: jedi's syntax error),
  `definition` of `helper` (jedi: defined in pkg/util.py), its `references` and `hover`, the
  `documentSymbols` of pkg/util.py, `workspaceSymbols` "helper", `openEditors` and `selection`
  (the user selected `helper` in main.py);
- turn 2: `openDiff` of greet.py; the user adds a line to the proposal in the diff editor and
  clicks the ✓ in its title;
- turn 3: `openDiff` again; the user closes the diff tab;
- turn 4: `openDiff` again; the user changes the proposal and saves it (Ctrl+S): accepted;
- turn 5: `openDiff` again; the user edits the proposal, closes the diff and answers VS Code's
  save question with Don't Save: rejected;
- turn 6: `openDiff` again; the user stops the turn: the bridge withdraws the request
  ($/cancelRequest) and the diff closes.

What the model received is read from the model server's records; what the user sees is
checked by the driver (screenshots: artifacts/vscode/editor-tools-*.png). Skipped, with the
reason, when scripts/setup-vscode.sh or scripts/fetch-agents.sh has not been run or the test
extras (ruff, jedi-language-server) are missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_editor_tools import ALL_TOOLS, load, use
from tests.model_server import ModelServer, Say, Script
from tests.support.production import agent_config
from tests.vscode import tools
from tests.vscode.tools import (
    EXTENSION,
    REPO,
    assert_check,
    code_server_missing,
    kill_group,
    run_driver,
    run_node,
)

HERE = Path(__file__).parent
DRIVER = HERE / "editor_tools.mjs"
SERVERS_EXTENSION = HERE / "python_servers"
BIN = Path(sys.executable).parent
ARTIFACTS = Path(os.environ.get("ACP_LSP_ARTIFACTS", REPO / "artifacts")) / "vscode"
CHECKS = re.findall(r'check\(\s*"([^"]+)"', DRIVER.read_text(encoding="utf-8"))
KEPT = "# reviewed by the user"

MAIN = """import os

from pkg.util import helper

print(helper(2))
"""
UTIL = '''def helper(x):
    """Double x."""
    return x * 2
'''
GREET = 'def greet(name):\n    return "Hello, " + name\n'
HOWDY = 'def greet(name):\n    return "Howdy, " + name\n'
HI = 'def greet(name):\n    return "Hi there, " + name\n'


# the tools of the first turn (all but the bridge's openFile and openDiff), in that order
FIRST = tuple(t for t in ALL_TOOLS if t != "openDiff")
PROTOCOL_TS = EXTENSION / "src" / "protocol.ts"


def script() -> Script:
    return Script(
        "vscode-editor-tools",
        [
            [
                load(*FIRST),
                use("diagnostics", path="main.py"),
                use("diagnostics", path="unopened.py"),
                use("definition", path="main.py", line=5, column=7),
                use("references", path="main.py", line=5, column=7),
                use("hover", path="main.py", line=5, column=7),
                use("documentSymbols", path="pkg/util.py"),
                use("workspaceSymbols", query="helper"),
                use("openEditors"),
                use("selection"),
                use("diagnostics"),
                Say("`os` is unused; helper is in pkg/util.py."),
            ],
            [
                load("openDiff"),
                use("openDiff", path="greet.py", newText=HOWDY, title="friendlier"),
                Say("Thanks for reviewing."),
            ],
            [
                load("openDiff"),
                use("openDiff", path="greet.py", newText=HI, title="another"),
                Say("Understood."),
            ],
            [
                load("openDiff"),
                use("openDiff", path="greet.py", newText=HI, title="saved"),
                Say("Saved it is."),
            ],
            [
                load("openDiff"),
                use("openDiff", path="greet.py", newText=HOWDY, title="edited, closed"),
                Say("Fine, not that one."),
            ],
            [
                load("openDiff"),
                use("openDiff", path="greet.py", newText=GREET + "# third\n", title="third"),
                Say("Never said: the user stops the turn."),
            ],
        ],
    )


def servers_vsix(out: Path) -> Path:
    """The test-only extension, bundled with the extension's own vscode-languageclient."""
    stage = out / "python-servers"
    (stage / "dist").mkdir(parents=True)
    shutil.copy(SERVERS_EXTENSION / "package.json", stage)
    bundle = (
        'require("esbuild").buildSync({entryPoints: [process.argv[1]], bundle: true,'
        ' platform: "node", format: "cjs", target: "node20", external: ["vscode"],'
        ' nodePaths: [process.argv[3]], outfile: process.argv[2], logLevel: "warning"})'
    )
    result = run_node(
        [
            "-e",
            bundle,
            str(SERVERS_EXTENSION / "extension.js"),
            str(stage / "dist" / "extension.js"),
            str(EXTENSION / "node_modules"),
        ],
        cwd=EXTENSION,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    vsix = out / "python-servers.vsix"
    vsce = EXTENSION / "node_modules" / "@vscode" / "vsce" / "vsce"
    result = run_node(
        [
            str(vsce),
            "package",
            "--no-dependencies",
            "--skip-license",
            "--allow-missing-repository",
            "-o",
            str(vsix),
        ],
        cwd=stage,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return vsix


def test_the_extension_declares_every_tool_a_front_end_answers() -> None:
    declared = re.search(r"EDITOR_TOOLS = \[(.*?)\]", PROTOCOL_TS.read_text(encoding="utf-8"), re.S)
    assert declared is not None
    assert re.findall(r'"(\w+)"', declared.group(1)) == ALL_TOOLS


@pytest.fixture(scope="module")
def flow(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    reason = code_server_missing()
    if reason is not None:
        pytest.skip(reason)
    for binary in ("ruff", "jedi-language-server"):
        if not (BIN / binary).exists():
            pytest.skip(f"{binary} is not installed (pip install '.[test]')")
    root = tmp_path_factory.mktemp("vscode-editor-tools")
    home = root / "home"
    home.mkdir()
    ws = root / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pyproject.toml").write_text('[project]\nname = "proj"\nversion = "0"\n')
    (ws / "pkg" / "__init__.py").write_text("")
    (ws / "pkg" / "util.py").write_text(UTIL)
    (ws / "main.py").write_text(MAIN)
    (ws / "greet.py").write_text(GREET)
    (ws / "unopened.py").write_text("def broken(:\n    pass\n")
    # how a VS Code user turns the tools on (there is no acpLsp.* setting for it)
    (ws / "acp-lsp.toml").write_text("[editorTools]\nenabled = true\n")
    ready = root / "servers-ready"
    with ModelServer(script()) as model:
        agent = agent_config("claude", model, home)  # skips when the agent is not installed
        settings = {
            **tools.SETTINGS,
            "files.autoSave": "off",
            # side by side even when the editor area is narrow
            "diffEditor.useInlineViewWhenSpaceIsLimited": False,
            "acpLsp.agents": {"claude": {**agent, "title": "claude (scripted model)"}},
            "acpLsp.defaultAgent": "claude",
            "acpLsp.followAlong": False,
        }
        server = tools.start_with_agents(
            root,
            settings,
            {
                "HOME": str(home),
                "ACP_LSP_DATA_DIR": str(home / "acp-lsp-data"),
                "ACP_LSP_TEST_BIN": str(BIN),
                "ACP_LSP_TEST_SERVERS_READY": str(ready),
            },
            more_vsix=(servers_vsix(root),),
        )
        try:
            env = tools.driver_env(
                server,
                ws,
                ACP_LSP_ARTIFACTS=str(ARTIFACTS),
                ACP_LSP_TEST_SERVERS_READY=str(ready),
                ACP_LSP_KEPT=KEPT,
            )
            run = run_driver(DRIVER, env, timeout=480)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            (ARTIFACTS / "editor-tools-driver.log").write_text(run.stderr, encoding="utf-8")
            results = _results_by_tool(model)
            (ARTIFACTS / "editor-tools-results.json").write_text(json.dumps(results, indent=1))
            yield {
                "ws": ws,
                "checks": run.checks,
                "results": results,
                "output": f"{run.stdout}\n{run.stderr}\n--- code-server log ---\n"
                f"{server.log_tail()}",
                "requests": [r.kind for r in model.requests],
            }
        finally:
            kill_group(server.proc)


def _results_by_tool(model: ModelServer) -> dict[str, list[Any]]:
    """The tool results Claude sent its model, by the tool's short name, in order: the JSON the
    tool answered, or {"error": text}. Read from every message of every request (a result is
    not always in the last one), each once."""
    names: dict[str, str] = {}
    results: dict[str, dict[str, Any]] = {}
    for request in model.turn_requests():
        for message in request.body["messages"]:
            if not isinstance(message["content"], list):
                continue
            for block in message["content"]:
                if block.get("type") == "tool_use":
                    names[block["id"]] = block["name"].removeprefix("mcp__editor__")
                elif block.get("type") == "tool_result":
                    results.setdefault(block["tool_use_id"], block)
    out: dict[str, list[Any]] = {}
    for use_id, block in results.items():
        content = block["content"]
        if not isinstance(content, str):  # ToolSearch answers tool references, no text
            content = "".join(part.get("text", "") for part in content)
        try:
            result = {"error": content} if block.get("is_error") else json.loads(content)
        except json.JSONDecodeError:
            result = content
        out.setdefault(names.get(use_id, "?"), []).append(result)
    return out


def _answer(flow: dict[str, Any], tool: str, index: int = 0) -> Any:
    found = flow["results"].get(tool, [])
    assert len(found) > index, f"no {tool} result among {flow['results']}\n{flow['output']}"
    return found[index]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", [n for n in CHECKS if n != "flow"])
def test_what_the_user_sees(flow: dict[str, Any], name: str) -> None:
    assert_check(flow["checks"], name, flow["output"])


@pytest.mark.timeout(600)
def test_the_model_gets_ruff_s_diagnostic_from_vs_code(flow: dict[str, Any]) -> None:
    answer = _answer(flow, "diagnostics")
    (file,) = [f for f in answer["files"] if f["path"] == str(flow["ws"] / "main.py")]
    (unused,) = [d for d in file["diagnostics"] if d.get("code") == "F401"]
    assert unused == {
        "line": 1,
        "column": 8,
        "endLine": 1,
        "endColumn": 10,
        "severity": unused["severity"],
        "source": "Ruff",
        "code": "F401",
        "message": unused["message"],
    }
    assert "`os` imported but unused" in unused["message"]


@pytest.mark.timeout(600)
def test_a_file_no_editor_shows_is_opened_for_its_push_diagnostics(flow: dict[str, Any]) -> None:
    """jedi pushes its syntax errors when a file opens; ruff, which VS Code's language client
    pulls diagnostics from for the files shown in editors only, says nothing here."""
    answer = _answer(flow, "diagnostics", 1)
    (file,) = answer["files"]
    assert file["path"] == str(flow["ws"] / "unopened.py")
    diagnostics = file["diagnostics"]
    assert answer["total"] == len(diagnostics)
    assert {(d["line"], d["severity"]) for d in diagnostics} == {(1, "error")}
    assert {d.get("source") for d in diagnostics} == {"compile"}, diagnostics  # jedi's name for it


@pytest.mark.timeout(600)
def test_the_workspace_s_diagnostics_are_every_checked_file_s_and_only_the_workspace_s(
    flow: dict[str, Any],
) -> None:
    """Without a path: what VS Code's Problems view holds for the workspace's files (the
    extension keeps the worst 500 of the session's folders and counts them; here fewer)."""
    answer = _answer(flow, "diagnostics", 2)
    paths = [f["path"] for f in answer["files"]]
    assert str(flow["ws"] / "main.py") in paths and str(flow["ws"] / "unopened.py") in paths
    assert all(p.startswith(str(flow["ws"]) + "/") for p in paths), paths
    assert answer["total"] == sum(len(f["diagnostics"]) for f in answer["files"])
    assert "truncated" not in answer
    (main,) = [f for f in answer["files"] if f["path"] == str(flow["ws"] / "main.py")]
    assert [d for d in main["diagnostics"] if d.get("code") == "F401"], main


@pytest.mark.timeout(600)
def test_the_model_gets_jedi_s_definition_in_another_file(flow: dict[str, Any]) -> None:
    assert _answer(flow, "definition") == {
        "locations": [
            {
                "path": str(flow["ws"] / "pkg" / "util.py"),
                "line": 1,
                "column": 5,
                "endLine": 1,
                "endColumn": 11,
            }
        ]
    }


@pytest.mark.timeout(600)
def test_the_model_gets_jedi_s_references_hover_and_symbols(flow: dict[str, Any]) -> None:
    ws = flow["ws"]
    where = {(r["path"], r["line"]) for r in _answer(flow, "references")["locations"]}
    assert where == {
        (str(ws / "pkg" / "util.py"), 1),
        (str(ws / "main.py"), 3),
        (str(ws / "main.py"), 5),
    }
    assert "Double x." in _answer(flow, "hover")["text"]
    (symbol,) = _answer(flow, "documentSymbols")["symbols"]
    assert (symbol["name"], symbol["kind"], symbol["line"]) == ("helper", "function", 1)
    found = _answer(flow, "workspaceSymbols")["symbols"]
    assert any(s["name"] == "helper" and s["path"] == str(ws / "pkg" / "util.py") for s in found), (
        found
    )


@pytest.mark.timeout(600)
def test_the_model_gets_the_open_editors_and_the_selection(flow: dict[str, Any]) -> None:
    main = str(flow["ws"] / "main.py")
    assert _answer(flow, "openEditors") == {
        "editors": [{"path": main, "languageId": "python", "dirty": False, "active": True}]
    }
    assert _answer(flow, "selection") == {
        "selection": {
            "path": main,
            "line": 5,
            "column": 7,
            "endLine": 5,
            "endColumn": 13,
            "text": "helper",
        }
    }


@pytest.mark.timeout(600)
def test_the_model_gets_the_text_the_user_kept_and_their_reject(flow: dict[str, Any]) -> None:
    answers = flow["results"].get("openDiff", [])
    assert len(answers) >= 4, f"{flow['results']}\n{flow['output']}"
    accepted, rejected, saved, unsaved, *_ = answers
    assert accepted == {"answer": "accept", "text": HOWDY + KEPT + "\n"}
    assert rejected == {"answer": "reject"}
    assert saved == {"answer": "accept", "text": HI.replace("Hi there", "Hi there and welcome")}
    assert unsaved == {"answer": "reject"}
    # openDiff only asks: the agent did not write
    assert (flow["ws"] / "greet.py").read_text() == GREET


@pytest.mark.timeout(600)
def test_the_agent_only_talked_to_the_scripted_model(flow: dict[str, Any]) -> None:
    assert flow["requests"], "the agent sent the scripted model nothing"
    assert "unknown" not in flow["requests"], flow["requests"]
