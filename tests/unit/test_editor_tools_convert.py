"""Editor tools: MCP arguments -> acp/editorTool arguments, editors' answers -> MCP shapes,
and the tool definitions an agent sees."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, ValidationError
from pygls.uris import from_fs_path

from acp_lsp.editor_tools import convert
from acp_lsp.editor_tools.tools import BRIDGE_FALLBACK, TOOLS
from acp_lsp.sandbox import Sandbox
from tests.support.acp_lsp_schema import schema, validate
from tests.support.platforms import needs_symlinks

JsonObject = dict[str, Any]


def rng(line: int, char: int, end_line: int, end_char: int) -> JsonObject:
    return {
        "start": {"line": line, "character": char},
        "end": {"line": end_line, "character": end_char},
    }


def test_every_tool_has_a_description_and_an_object_schema() -> None:
    assert set(TOOLS) == {
        "diagnostics",
        "definition",
        "references",
        "hover",
        "documentSymbols",
        "workspaceSymbols",
        "openEditors",
        "selection",
        "openFile",
        "openDiff",
    }
    for name, (description, input_schema) in TOOLS.items():
        Draft202012Validator.check_schema(input_schema)
        assert input_schema["type"] == "object", name
        assert len(description) > 40, name  # enough for an agent to pick it without help
    # the tools the editor may answer are exactly the schema's list of tool names
    tool_enum = schema()["$defs"]["EditorToolParams"]["properties"]["tool"]["enum"]
    assert set(tool_enum) == set(TOOLS) - {"openFile"}
    assert set(TOOLS) >= BRIDGE_FALLBACK


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("definition", {"path": "a.py"}),  # no line
        ("definition", {"path": "a.py", "line": 0}),  # 1-based
        ("hover", {"path": "a.py", "line": 1, "column": "3"}),
        ("workspaceSymbols", {}),
        ("openDiff", {"path": "a.py"}),
    ],
)
def test_schemas_and_conversion_refuse_the_same_bad_arguments(tool: str, args: JsonObject) -> None:
    with pytest.raises(ValidationError):
        Draft202012Validator(TOOLS[tool][1]).validate(args)
    with pytest.raises(convert.ToolInputError):
        convert.to_lsp(tool, args, lambda p: "/ws/" + p)


def test_positions_become_zero_based_and_paths_uris(tmp_path: Path) -> None:
    target = tmp_path / "a b.py"
    uri = from_fs_path(str(target))
    resolve = Sandbox([str(tmp_path)]).resolve
    args = {"path": str(target), "line": 3, "column": 7}
    assert convert.to_lsp("references", args, resolve) == {
        "uri": uri,
        "position": {"line": 2, "character": 6},
    }
    assert convert.to_lsp("hover", {"path": str(target), "line": 1}, resolve)["position"] == {
        "line": 0,
        "character": 0,
    }
    assert convert.to_lsp("diagnostics", {}, resolve) == {}
    assert convert.to_lsp("openDiff", {"path": str(target), "newText": "x"}, resolve) == {
        "uri": uri,
        "newText": "x",
    }
    for tool in ("references", "diagnostics", "openDiff"):
        validate("acp/editorTool", "params", {"sessionId": "s", "tool": tool, "arguments": {}})


@pytest.mark.skipif(
    sys.platform == "win32", reason="file:///ws/m.py is the path \\ws\\m.py on Windows"
)
def test_answers_become_one_based_with_paths_and_names() -> None:
    uri = "file:///ws/m.py"
    diagnostics = {
        "diagnostics": [
            {"uri": uri, "range": rng(0, 0, 0, 1), "severity": 1, "message": "e", "code": 7},
            {"uri": uri, "range": rng(1, 2, 1, 3), "severity": 4, "message": "h"},
            {"uri": uri, "message": "no range: left out"},
        ]
    }
    validate("acp/editorTool", "result", {"diagnostics": diagnostics["diagnostics"][:2]})
    other = "file:///ws/n.py"
    diagnostics["diagnostics"].append(
        {"uri": other, "range": rng(0, 0, 0, 1), "severity": 2, "message": "w"}
    )
    diag = {"line": 1, "column": 1, "endLine": 1, "endColumn": 2}
    # grouped by file, the path once, in the editor's order
    assert convert.from_lsp("diagnostics", diagnostics) == {
        "files": [
            {
                "path": "/ws/m.py",
                "diagnostics": [
                    {**diag, "severity": "error", "code": 7, "message": "e"},
                    {
                        "line": 2,
                        "column": 3,
                        "endLine": 2,
                        "endColumn": 4,
                        "severity": "hint",
                        "message": "h",
                    },
                ],
            },
            {"path": "/ws/n.py", "diagnostics": [{**diag, "severity": "warning", "message": "w"}]},
        ],
        "total": 3,
    }
    # LocationLink (targetUri/targetSelectionRange) reads like a Location
    links = {"locations": [{"targetUri": uri, "targetSelectionRange": rng(4, 0, 4, 2)}]}
    assert convert.from_lsp("definition", links) == {
        "locations": [{"path": "/ws/m.py", "line": 5, "column": 1, "endLine": 5, "endColumn": 3}]
    }
    assert convert.from_lsp("hover", {"contents": {"kind": "markdown", "value": "**x**"}}) == {
        "text": "**x**"
    }
    nested = {
        "symbols": [
            {
                "name": "A",
                "kind": 5,
                "range": rng(0, 0, 9, 0),
                "children": [
                    {
                        "name": "f",
                        "kind": 12,
                        "range": rng(1, 4, 2, 0),
                        "children": [{"name": "x", "kind": 13, "range": rng(1, 8, 1, 9)}],
                    }
                ],
            },
        ]
    }
    assert [
        (s["name"], s["kind"], s.get("containerName"))
        for s in convert.from_lsp("documentSymbols", nested)["symbols"]
    ] == [("A", "class", None), ("f", "function", "A"), ("x", "variable", "f")]
    # a WorkspaceSymbol may come without a range
    assert convert.from_lsp(
        "workspaceSymbols", {"symbols": [{"name": "A", "kind": 5, "location": {"uri": uri}}]}
    ) == {"symbols": [{"name": "A", "kind": "class", "path": "/ws/m.py", "line": 1, "column": 1}]}
    assert convert.from_lsp("openDiff", {"answer": "bogus"}) == {"answer": "reject"}


@pytest.mark.parametrize(
    ("tool", "empty"),
    [
        ("diagnostics", {"files": [], "total": 0}),
        ("definition", {"locations": []}),
        ("documentSymbols", {"symbols": []}),
        ("openEditors", {"editors": []}),
        ("selection", {"selection": None}),
        ("hover", {"text": ""}),
        ("openDiff", {"answer": "reject"}),
    ],
)
def test_a_null_or_odd_answer_is_an_empty_one(tool: str, empty: Any) -> None:
    assert convert.from_lsp(tool, None) == empty
    assert convert.from_lsp(tool, {"unexpected": [1]}) == empty


@needs_symlinks
def test_paths_are_confined_like_fs_requests(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link").symlink_to(tmp_path)
    resolve = Sandbox([str(ws)]).resolve
    for path in (str(tmp_path / "x.py"), str(ws / ".." / "x.py"), str(ws / "link" / "x.py")):
        with pytest.raises(Exception, match="outside the workspace"):
            convert.to_lsp("definition", {"path": path, "line": 1}, resolve)


def test_a_workspace_s_diagnostics_are_capped_errors_first_in_the_editor_s_order() -> None:
    """Claude Code shows its model at most 25,000 tokens of an MCP answer: 10,000 diagnostics
    (~600,000) would be cut blindly, so the bridge keeps the worst 500 and says how many more."""
    severities = ["hint", "warning", "error", "information"]
    files = [
        {
            "path": f"/ws/f{i}.py",
            "diagnostics": [
                {"line": j + 1, "severity": severities[(i + j) % 4], "message": f"{i}:{j}"}
                for j in range(10)
            ],
        }
        for i in range(100)
    ]
    answer = convert.cap_diagnostics(files, limit=300)
    kept = [d for f in answer["files"] for d in f["diagnostics"]]
    assert answer["total"] == 1000 and answer["truncated"] == 700 and len(kept) == 300
    # all 250 errors, then the first 50 warnings in the editor's order
    assert sum(d["severity"] == "error" for d in kept) == 250
    warnings = [d["message"] for d in kept if d["severity"] == "warning"]
    every_warning = [
        d["message"] for f in files for d in f["diagnostics"] if d["severity"] == "warning"
    ]
    assert warnings == every_warning[:50]
    assert [f["path"] for f in answer["files"]] == sorted(
        {f["path"] for f in answer["files"]}, key=lambda p: int(p[5:-3])
    )
    assert all(f["diagnostics"] for f in answer["files"])
    small = convert.cap_diagnostics(files[:2], limit=300)
    assert small == {"files": files[:2], "total": 20}


def test_an_editor_s_cut_answer_keeps_its_count_of_what_it_left_out() -> None:
    """An editor that honoured acp/editorTool's ``limit`` says how many it had: the agent
    still learns how many more there are."""
    span = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
    items = [
        {"uri": f"file:///ws/f{i}.py", "range": span, "severity": 1, "message": str(i)}
        for i in range(3)
    ]
    answer = convert.from_lsp("diagnostics", {"diagnostics": items, "total": 1200})
    assert answer["total"] == 1200
    capped = convert.cap_diagnostics(answer["files"], answer["total"], limit=500)
    assert capped["total"] == 1200 and capped["truncated"] == 1197
    assert sum(len(f["diagnostics"]) for f in capped["files"]) == 3
    # a count below what was sent, or not a number, is not believed
    for wrong in (1, "9", True, None):
        got = convert.from_lsp("diagnostics", {"diagnostics": items, "total": wrong})
        assert got["total"] == 3
        assert "truncated" not in convert.cap_diagnostics(got["files"], got["total"])
