"""The package reads in one direction: no import circles in acp_lsp/ (counting imports inside
functions too, not those under TYPE_CHECKING), and the server does not reach the demo agent
or the demo editors; and no module grows past 400 lines."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "acp_lsp"


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def import_graph() -> dict[str, set[str]]:
    mods = modules()

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in mods}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for inner in ast.walk(node)
        }
        targets: list[str] = []
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                targets += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets += [f"{node.module}.{a.name}" for a in node.names]
        for target in targets:
            if not target.startswith("acp_lsp"):
                continue
            resolved = resolve(target)
            # importing a.b.c runs a/__init__ and a/b/__init__ too
            parts = (resolved or "").split(".")
            for k in range(1, len(parts) + 1):
                dep = ".".join(parts[:k])
                if dep in mods and dep != name and not name.startswith(dep + "."):
                    graph[name].add(dep)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles() -> None:
    assert circles(import_graph()) == []


def test_the_server_does_not_import_the_demos() -> None:
    graph = import_graph()
    seen, todo = set(), ["acp_lsp.app", "acp_lsp.server"]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += graph[name]
    demos = sorted(m for m in seen if m.split(".")[1].startswith("demo"))
    assert demos == []


def test_the_check_sees_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


MAX_LINES = 400  # past this a module holds more than one thing (reference/style.md)


def test_every_module_is_short() -> None:
    long = {
        name: count
        for name, path in modules().items()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"modules past {MAX_LINES} lines: split them by what they hold"


def test_building_the_server_leaves_the_heavy_imports_for_later() -> None:
    """initialize is answered by a server built without pydantic, the settings, the hub, the
    session model or the disk side: they load right after the answer (docs/performance.md,
    Startup)."""
    probe = (
        "import sys\n"
        "from acp_lsp.app import create_server\n"
        "create_server()\n"
        "heavy = ('pydantic', 'acp_lsp.config', 'acp_lsp.hub', 'acp_lsp.editor.port',\n"
        "         'acp_lsp.session', 'acp_lsp.editor.checkpoint_restore',\n"
        "         'acp_lsp.backends.wire_tree')\n"
        "print(' '.join(name for name in heavy if name in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""
