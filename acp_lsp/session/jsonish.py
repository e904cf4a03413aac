"""Raw-JSON type aliases and a log helper shared by the session modules."""

from __future__ import annotations

from typing import Any

JSON = Any  # a raw JSON value, kept exactly as the agent sent it
Update = dict[str, JSON]  # one SessionUpdate object


def brief(value: object, limit: int = 200) -> str:
    """A bounded repr for log lines (agent payloads can be megabytes)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"
