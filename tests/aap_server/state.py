"""What the AAP test server knows: its agents, sessions, settings and every request it got."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

JsonObject = dict[str, Any]

PROTOCOL_VERSION = 3

WEATHER_TOOL: JsonObject = {
    "name": "get_weather",
    "title": "Get weather",
    "description": "Current weather for a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
DELETE_TOOL: JsonObject = {
    "name": "delete_records",
    "title": "Delete records",
    "description": "Delete every row of a table",
    "parameters": {
        "type": "object",
        "properties": {"table": {"type": "string"}},
        "required": ["table"],
    },
}

# Two agents with different capabilities (aap.md §2).
AGENTS: list[JsonObject] = [
    {
        "name": "coder",
        "title": "Coder",
        "version": "1.2.0",
        "description": "Scripted agent with every capability",
        "tools": [WEATHER_TOOL, DELETE_TOOL],
        "options": [
            {
                "type": "select",
                "name": "model",
                "title": "Model",
                "options": ["small", "large"],
                "default": "small",
            },
            {"type": "secret", "name": "token", "default": ""},
        ],
        "capabilities": {
            "history": {"full": {}, "compacted": {}},
            "stream": {"delta": {}, "message": {}, "none": {}},
            "application": {"tools": {}},
            "image": {"data": {}},
        },
    },
    {
        "name": "basic",
        "title": "Basic",
        "version": "0.1.0",
        "tools": [WEATHER_TOOL],
        "capabilities": {
            "history": {"compacted": {}},
            "stream": {"none": {}},
            "application": {"tools": {}},
        },
    },
]


def agent_info(name: str) -> JsonObject | None:
    return next((a for a in AGENTS if a["name"] == name), None)


@dataclass
class RecordedRequest:
    method: str
    path: str  # relative to the AAP base URL, e.g. "/sessions/s1/turns"
    query: dict[str, str]
    body: Any  # parsed JSON, or None
    authorization: str | None


@dataclass
class AapSession:
    session_id: str
    agent: str
    tools: list[JsonObject]  # ServerToolRef[] enabled for the session
    options: dict[str, str]
    client_tools: list[JsonObject]
    history: list[JsonObject] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def next_call_id(self) -> str:
        return f"call_{next(self._ids):03d}"

    def server_tool(self, name: str) -> JsonObject | None:
        return next((t for t in self.tools if t.get("name") == name), None)

    def has_client_tool(self, name: str) -> bool:
        return any(t.get("name") == name for t in self.client_tools)

    def info(self) -> JsonObject:
        """SessionInfo, secrets redacted (aap.md §2 "Agent options")."""
        declared = (agent_info(self.agent) or {}).get("options", [])
        secret = {o["name"] for o in declared if o["type"] == "secret"}
        options = {k: ("***" if k in secret else v) for k, v in self.options.items()}
        out: JsonObject = {
            "sessionId": self.session_id,
            "agent": {"name": self.agent, "tools": self.tools, "options": options},
        }
        if self.client_tools:
            out["tools"] = self.client_tools
        return out


class ServerState:
    """Mutable settings and data of one test server; tests change settings between requests."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.api_key: str | None = None  # required bearer key (GET /meta stays public)
        self.meta_version = PROTOCOL_VERSION
        self.scenario: str | None = None  # forces a scenario for every turn
        self.page_size = 2
        self.silent_grants = False  # SDK deviation aap.md §10.2: no tool_result after a grant
        self.hang_seconds = 10.0  # upper bound of the "hang" scenario
        self.sessions: dict[str, AapSession] = {}
        self.requests: list[RecordedRequest] = []
        self.disconnects = 0  # streams the client closed before turn_stop
        self._session_ids = itertools.count(1)

    def new_session_id(self) -> str:
        return f"sess_{next(self._session_ids):04d}"

    # -- for tests ---------------------------------------------------------------------------
    def bodies(self, method: str, path: str) -> list[Any]:
        return [r.body for r in self.requests if r.method == method and r.path == path]

    def turn_bodies(self, session_id: str) -> list[JsonObject]:
        return self.bodies("POST", f"/sessions/{session_id}/turns")


@dataclass
class AapServer:
    """What the ``aap_server`` fixture yields: where the server is and its live state."""

    url: str  # the AAP base URL, e.g. http://127.0.0.1:PORT/v1
    state: ServerState
