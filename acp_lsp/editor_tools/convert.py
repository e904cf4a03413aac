"""MCP tool arguments (paths, 1-based positions) <-> acp/editorTool (URIs, LSP positions).

Editors' answers are read leniently: a missing or malformed item is left out rather than
failing the whole call, since an agent can use a partial answer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from lsprotocol.types import SymbolKind
from pygls.uris import from_fs_path, to_fs_path

JsonObject = dict[str, Any]

SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}


class ToolInputError(Exception):
    """Arguments the tool cannot use; the message is shown to the agent."""


def _int(args: JsonObject, key: str, default: int | None = None) -> int:
    value = args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        if value is None:
            raise ToolInputError(f"{key} is required")
        raise ToolInputError(f"{key} must be a whole number from 1, got {value!r}")
    return value


def _str(args: JsonObject, key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise ToolInputError(f"{key} must be a string")
    return value


def uri_of(path: str) -> str:
    uri = from_fs_path(path)
    if uri is None:
        raise ToolInputError(f"path {path} cannot be named as a file URI")
    return str(uri)


def to_lsp(tool: str, args: JsonObject, resolve: Callable[[str], str]) -> JsonObject:
    """The acp/editorTool ``arguments`` for an MCP call; ``resolve`` confines paths."""

    def uri() -> str:
        return uri_of(resolve(_str(args, "path")))

    if tool in ("definition", "references", "hover"):
        position = {"line": _int(args, "line") - 1, "character": _int(args, "column", 1) - 1}
        return {"uri": uri(), "position": position}
    if tool == "diagnostics":
        return {"uri": uri()} if args.get("path") is not None else {}
    if tool == "documentSymbols":
        return {"uri": uri()}
    if tool == "workspaceSymbols":
        return {"query": _str(args, "query")}
    if tool == "openDiff":
        out: JsonObject = {"uri": uri(), "newText": _str(args, "newText")}
        if isinstance(args.get("title"), str):
            out["title"] = args["title"]
        return out
    return {}


def _path(uri: Any) -> str | None:
    if not isinstance(uri, str):
        return None
    return _fs_path(uri) if uri.startswith("file:") else uri


@functools.lru_cache(maxsize=4096)
def _fs_path(uri: str) -> str:
    # a workspace's diagnostics name each file many times: parse its URI once
    return to_fs_path(uri) or uri


def _range(rng: Any) -> JsonObject | None:
    """LSP Range -> {line, column, endLine, endColumn} (1-based)."""
    if not isinstance(rng, dict):
        return None
    start, end = rng.get("start"), rng.get("end")
    if not isinstance(start, dict) or not isinstance(end, dict):
        return None
    try:
        return {
            "line": int(start["line"]) + 1,
            "column": int(start["character"]) + 1,
            "endLine": int(end["line"]) + 1,
            "endColumn": int(end["character"]) + 1,
        }
    except (KeyError, TypeError, ValueError):
        return None


def _kind(kind: Any) -> str:
    try:
        name = SymbolKind(kind).name
    except ValueError:
        return str(kind)
    return name[0].lower() + name[1:]


def _items(result: Any, key: str) -> list[JsonObject]:
    items = result.get(key) if isinstance(result, dict) else None
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


# Claude Code shows its model at most 25,000 tokens of an MCP answer (MAX_MCP_OUTPUT_TOKENS);
# 500 diagnostics are ~50 KB: the worst first, and the model asks per file for the rest.
MAX_DIAGNOSTICS = 500
_RANK = {"error": 0, "warning": 1, "information": 2, "hint": 3}


def cap_diagnostics(
    files: list[JsonObject], total: int | None = None, limit: int = MAX_DIAGNOSTICS
) -> JsonObject:
    """{files, total} with at most `limit` diagnostics, errors first (then the editor's
    order), and `truncated`: how many were left out. ``total`` is the editor's count when it
    already cut its answer to the limit (acp/editorTool ``limit``)."""
    count = sum(len(f["diagnostics"]) for f in files)
    total = count if total is None or total < count else total
    if count <= limit:
        capped = {"files": files, "total": total}
        return capped | {"truncated": total - count} if total > count else capped
    ranked = sorted(
        (_RANK.get(d["severity"], 0), i, j)
        for i, f in enumerate(files)
        for j, d in enumerate(f["diagnostics"])
    )[:limit]
    kept: dict[int, list[int]] = {}
    for _, i, j in sorted(ranked, key=lambda r: (r[1], r[2])):
        kept.setdefault(i, []).append(j)
    out = [
        {"path": files[i]["path"], "diagnostics": [files[i]["diagnostics"][j] for j in js]}
        for i, js in kept.items()
    ]
    return {"files": out, "total": total, "truncated": total - limit}


def _diagnostics(result: Any) -> JsonObject:
    """Grouped by file, the path once: a workspace's 10,000 items are the hot path."""
    by_uri: dict[str, list[JsonObject]] = {}
    total = 0
    for item in _items(result, "diagnostics"):
        uri = item.get("uri")
        out = _range(item.get("range"))
        if not isinstance(uri, str) or out is None:
            continue
        out["severity"] = SEVERITIES.get(item.get("severity") or 1, "error")
        source, code = item.get("source"), item.get("code")
        if source is not None:
            out["source"] = source
        if code is not None:
            out["code"] = code
        out["message"] = str(item.get("message", ""))
        by_uri.setdefault(uri, []).append(out)
        total += 1
    files = [{"path": _path(uri), "diagnostics": items} for uri, items in by_uri.items()]
    # an editor that cut its answer to the limit counts what it had (before the cut)
    counted = result.get("total") if isinstance(result, dict) else None
    if isinstance(counted, int) and not isinstance(counted, bool) and counted > total:
        total = counted
    return {"files": files, "total": total}


def _location(item: JsonObject) -> JsonObject | None:
    path = _path(item.get("uri") or item.get("targetUri"))
    where = _range(item.get("range") or item.get("targetSelectionRange"))
    if path is None or where is None:
        return None
    out = {"path": path, **where}
    if isinstance(item.get("preview"), str):
        out["preview"] = item["preview"]
    return out


def _symbols(items: list[JsonObject], container: str | None, out: list[JsonObject]) -> None:
    """Flatten DocumentSymbol trees (children name their parent as container)."""
    for item in items:
        name = item.get("name")
        where = _range(item.get("range"))
        if not isinstance(name, str) or where is None:
            continue
        symbol: JsonObject = {"name": name, "kind": _kind(item.get("kind")), **where}
        parent = item.get("containerName", container)
        if isinstance(parent, str) and parent:
            symbol["containerName"] = parent
        out.append(symbol)
        children = item.get("children")
        if isinstance(children, list):
            _symbols([c for c in children if isinstance(c, dict)], name, out)


def _workspace_symbol(item: JsonObject) -> JsonObject | None:
    name = item.get("name")
    location = item.get("location")
    if not isinstance(name, str) or not isinstance(location, dict):
        return None
    path = _path(location.get("uri"))
    if path is None:
        return None
    where = _range(location.get("range")) or {"line": 1, "column": 1}
    out: JsonObject = {
        "name": name,
        "kind": _kind(item.get("kind")),
        "path": path,
        "line": where["line"],
        "column": where["column"],
    }
    if isinstance(item.get("containerName"), str) and item["containerName"]:
        out["containerName"] = item["containerName"]
    return out


def _editor(item: JsonObject) -> JsonObject | None:
    path = _path(item.get("uri"))
    if path is None:
        return None
    return {
        "path": path,
        "languageId": str(item.get("languageId") or ""),
        "dirty": bool(item.get("dirty")),
        "active": bool(item.get("active")),
    }


def from_lsp(tool: str, result: Any) -> JsonObject:
    """The MCP shape of an editor's acp/editorTool answer: always an object, since MCP
    clients (Gemini CLI) refuse a list or null as structured content."""
    if tool == "diagnostics":
        return _diagnostics(result)
    if tool in ("definition", "references"):
        return {"locations": [loc for i in _items(result, "locations") if (loc := _location(i))]}
    if tool == "hover":
        contents = result.get("contents") if isinstance(result, dict) else None
        if isinstance(contents, dict):  # a MarkupContent
            contents = contents.get("value")
        return {"text": contents if isinstance(contents, str) else ""}
    if tool == "documentSymbols":
        flat: list[JsonObject] = []
        _symbols(_items(result, "symbols"), None, flat)
        return {"symbols": flat}
    if tool == "workspaceSymbols":
        return {"symbols": [s for i in _items(result, "symbols") if (s := _workspace_symbol(i))]}
    if tool == "openEditors":
        return {"editors": [e for i in _items(result, "editors") if (e := _editor(i))]}
    if tool == "selection":
        sel = result.get("selection") if isinstance(result, dict) else None
        return {"selection": selection(sel)}
    if tool == "openDiff":
        answer = result.get("answer") if isinstance(result, dict) else None
        out: JsonObject = {"answer": "accept" if answer == "accept" else "reject"}
        if isinstance(result, dict) and isinstance(result.get("text"), str):
            out["text"] = result["text"]
        return out
    return result if isinstance(result, dict) else {"result": result}


def selection(sel: Any) -> JsonObject | None:
    """An LSP ``{uri, range, text}`` selection in MCP shape (None when there is none)."""
    if not isinstance(sel, dict):
        return None
    path = _path(sel.get("uri"))
    where = _range(sel.get("range"))
    if path is None or where is None:
        return None
    return {"path": path, **where, "text": str(sel.get("text") or "")}
