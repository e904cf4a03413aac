"""The acp/* contract: schema, Python module, docs and the editor mirrors never drift apart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from acp_lsp import protocol as p
from tests.support.acp_lsp_schema import schema

ROOT = Path(__file__).resolve().parents[2]
METHOD = re.compile(r"""["']((?:acp)/[A-Za-z]+)["']""")


def test_schema_lists_exactly_the_python_methods() -> None:
    assert set(schema()["methods"]) == set(p.ALL_METHODS)
    for method in p.EDITOR_REQUESTS:
        assert schema()["methods"][method]["direction"] == "editor->server"
    for method in p.SERVER_NOTIFICATIONS:
        assert schema()["methods"][method]["kind"] == "notification"
    for method in p.SERVER_REQUESTS:
        assert schema()["methods"][method]["direction"] == "server->editor"


@pytest.mark.parametrize("method", p.EDITOR_REQUESTS)
def test_params_models_match_schema(method: str) -> None:
    model = p.PARAMS_BY_METHOD[method]
    type_name = schema()["methods"][method]["params"]
    definition = schema()["$defs"][type_name]
    wire_fields = {f.alias or name for name, f in model.model_fields.items()}
    required = {f.alias or name for name, f in model.model_fields.items() if f.is_required()}
    assert wire_fields == set(definition.get("properties", {})), method
    assert required == set(definition.get("required", [])), method


def test_error_codes_match_schema() -> None:
    assert schema()["errorCodes"] == p.ERROR_CODES


def test_server_capability_matches_schema() -> None:
    assert schema()["serverCapability"]["experimental.acp"] == p.server_capability()


def test_docs_describe_every_method() -> None:
    doc = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^### (acp/\w+)$", doc, re.MULTILINE))
    assert headings == set(p.ALL_METHODS)


@pytest.mark.parametrize(
    "mirror",
    ["editors/vscode/src/protocol.ts", "editors/neovim/lua/acp_lsp/protocol.lua"],
)
def test_editor_mirrors_name_every_method(mirror: str) -> None:
    text = (ROOT / mirror).read_text(encoding="utf-8")
    assert set(METHOD.findall(text)) == set(p.ALL_METHODS), mirror
