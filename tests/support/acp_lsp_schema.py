"""Validation against docs/acp-lsp.schema.json: the contract every mirror is checked against."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "acp-lsp.schema.json"


@cache
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@cache
def _validator(type_name: str) -> Draft202012Validator:
    defs = schema()["$defs"]
    if type_name not in defs:
        raise KeyError(f"no $defs/{type_name} in {SCHEMA_PATH.name}")
    return Draft202012Validator({"$defs": defs, "$ref": f"#/$defs/{type_name}"})


def validate(method: str, part: str, value: Any) -> None:
    """Raise AssertionError naming the method when ``value`` (params or result) breaks the schema."""
    entry = schema()["methods"].get(method)
    if entry is None:
        raise AssertionError(f"{method} is not in the acp-lsp schema")
    type_name = entry.get(part)
    if type_name is None:
        raise AssertionError(f"{method} has no {part} in the acp-lsp schema")
    errors = sorted(_validator(type_name).iter_errors(value), key=lambda e: list(e.path))
    if errors:
        detail = "; ".join(
            f"{'/'.join(map(str, e.path)) or '<root>'}: {e.message}" for e in errors[:5]
        )
        raise AssertionError(f"{method} {part} breaks the schema ({type_name}): {detail}")
