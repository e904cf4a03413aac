"""Demo sessions: their state, their replayable history, optional persistence on disk."""

from __future__ import annotations

import copy
import json
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acp_lsp.demo.agent.catalog import DEFAULT_MODE, default_config

log = logging.getLogger(__name__)

_CHUNKS = ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass
class DemoSession:
    """One conversation. `history` holds wire-shaped updates, compacted for replay."""

    session_id: str
    cwd: Path
    mode_id: str = DEFAULT_MODE
    config: dict[str, str | bool] = field(default_factory=default_config)
    title: str | None = None
    updated_at: str = field(default_factory=now_iso)
    turns: int = 0
    always_allow_edits: bool = False
    live: bool = True
    history: list[dict[str, Any]] = field(default_factory=list)

    @staticmethod
    def create(cwd: Path) -> DemoSession:
        return DemoSession(session_id=f"demo-{uuid.uuid4().hex[:12]}", cwd=cwd)

    def record(self, update: dict[str, Any]) -> None:
        """Keep `update` for a later session/load, merged so the replay stays short."""
        kind = update.get("sessionUpdate")
        last = self.history[-1] if self.history else None
        if kind in _CHUNKS and last is not None and _same_text_message(last, update):
            last["content"]["text"] += update["content"]["text"]
            return
        if kind == "tool_call_update":
            for item in reversed(self.history):
                if item.get("sessionUpdate") == "tool_call" and item.get(
                    "toolCallId"
                ) == update.get("toolCallId"):
                    for key, value in update.items():
                        if key != "sessionUpdate":
                            item[key] = copy.deepcopy(value)
                    return
            update = {**update, "sessionUpdate": "tool_call", "title": update.get("title", "")}
        if kind == "plan":
            # A plan is replaced as a whole; only its latest state is worth replaying.
            self.history = [h for h in self.history if h.get("sessionUpdate") != "plan"]
        if kind in ("available_commands_update", "current_mode_update", "config_option_update"):
            return  # the load response and the commands update carry these
        self.history.append(copy.deepcopy(update))

    def info(self) -> dict[str, Any]:
        """`SessionInfo` for session/list."""
        info: dict[str, Any] = {
            "sessionId": self.session_id,
            "cwd": str(self.cwd),
            "updatedAt": self.updated_at,
        }
        if self.title:
            info["title"] = self.title
        return info

    def to_json(self) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "cwd": str(self.cwd),
            "modeId": self.mode_id,
            "config": self.config,
            "title": self.title,
            "updatedAt": self.updated_at,
            "turns": self.turns,
            "history": self.history,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> DemoSession:
        config = default_config()
        config.update(data.get("config") or {})
        return DemoSession(
            session_id=str(data["sessionId"]),
            cwd=Path(str(data["cwd"])),
            mode_id=str(data.get("modeId") or DEFAULT_MODE),
            config=config,
            title=data.get("title"),
            updated_at=str(data.get("updatedAt") or now_iso()),
            turns=int(data.get("turns") or 0),
            live=False,
            history=list(data.get("history") or []),
        )


def _same_text_message(last: dict[str, Any], update: dict[str, Any]) -> bool:
    return (
        last.get("sessionUpdate") == update.get("sessionUpdate")
        and last.get("messageId") is not None
        and last.get("messageId") == update.get("messageId")
        and last.get("content", {}).get("type") == "text"
        and update.get("content", {}).get("type") == "text"
    )


class SessionStore:
    """All sessions of this agent process; persisted to `state_dir` when one is given."""

    def __init__(self, state_dir: Path | None = None) -> None:
        self._sessions: dict[str, DemoSession] = {}
        self._state_dir = state_dir
        if state_dir is not None:
            self._load_all(state_dir)

    def __iter__(self) -> Iterator[DemoSession]:
        return iter(self._sessions.values())

    def get(self, session_id: str) -> DemoSession | None:
        return self._sessions.get(session_id)

    def add(self, session: DemoSession) -> None:
        self._sessions[session.session_id] = session
        self.save(session)

    def save(self, session: DemoSession) -> None:
        if self._state_dir is None:
            return
        try:
            self._state_dir.mkdir(parents=True, exist_ok=True)
            target = self._state_dir / f"{session.session_id}.json"
            tmp = target.with_suffix(".tmp")
            tmp.write_text(json.dumps(session.to_json()), encoding="utf-8")
            tmp.replace(target)
        except OSError as exc:
            log.warning("cannot save session %s: %s", session.session_id, exc)

    def _load_all(self, state_dir: Path) -> None:
        if not state_dir.is_dir():
            return
        for file in sorted(state_dir.glob("*.json")):
            try:
                session = DemoSession.from_json(json.loads(file.read_text(encoding="utf-8")))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("skipping unreadable session file %s: %s", file, exc)
                continue
            self._sessions[session.session_id] = session
