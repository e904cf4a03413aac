"""Rewrite docs/acp-lsp.schema.json in its house style.

A value stays on one line when it fits in 120 columns (a method entry always does),
otherwise its members go one per line. Run after editing the schema.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

WIDTH = 120


def render(value: Any, indent: int, prefix: str) -> str:
    flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    one_line = prefix.startswith('"acp/')  # the method table reads best a method per line
    if (
        one_line
        or indent + len(prefix) + len(flat) + 1 <= WIDTH
        or not isinstance(value, dict | list)
    ):
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = [
            f"{pad}{json.dumps(k)}: {render(v, indent + 2, json.dumps(k) + ': ')}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + render(v, indent + 2, "") for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def main() -> None:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/acp-lsp.schema.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(render(data, 0, "") + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
