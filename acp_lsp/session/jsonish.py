"""Raw-JSON type aliases and a log helper shared by the session modules."""

from __future__ import annotations

import sys
from typing import Any

JSON = Any  # a raw JSON value, kept exactly as the agent sent it
Update = dict[str, JSON]  # one SessionUpdate object


def brief(value: object, limit: int = 200) -> str:
    """A bounded repr for log lines (agent payloads can be megabytes)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


_SHORT = 24  # strings up to this length are interned: kinds, statuses, types, ids


def intern_key(key: Any) -> Any:
    return sys.intern(key) if type(key) is str else key


def compact(value: JSON) -> JSON:
    """An equal JSON value whose dict keys and short strings are interned.

    Each decoded frame brings its own copies of the same few keys ("type", "content", …)
    and values ("text", "completed", …), ~50 bytes apiece: a session that keeps thousands
    of tool calls keeps one of each instead. Never mutates ``value``.
    """
    try:
        return _compact(value)
    except RecursionError:  # absurdly deep: keep it as it is
        return value


def _compact(value: JSON) -> JSON:
    kind = type(value)
    if kind is dict:
        return {intern_key(k): _compact(v) for k, v in value.items()}
    if kind is list:
        return [_compact(v) for v in value]
    if kind is str and len(value) <= _SHORT:
        return sys.intern(value)
    return value
