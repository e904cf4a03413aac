"""acp/* over the store: list, read, resume, rename, delete and export stored sessions.

Live sessions stay the hub's; this module adds the ones earlier processes stored. A stored
session comes back under the id the editor knows: through the agent's own session/load or
session/resume where it has them, else as a new agent session primed with the transcript.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError
from acp_lsp.history.export import primer, to_markdown
from acp_lsp.history.recorder import Recorder
from acp_lsp.history.snapshot import SessionRow
from acp_lsp.history.store import HistoryStore
from acp_lsp.session import Session

if TYPE_CHECKING:
    from acp_lsp.hub import Hub

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]
LIVE = ("idle", "running", "awaiting_permission", "cancelling")


def _entry(row: SessionRow) -> JsonObject:
    entry: JsonObject = {
        "sessionId": row.id,
        "agent": row.agent,
        "live": False,
        "stored": True,
        "createdAt": row.created_at,
        "updatedAt": row.updated_at,
        "messageCount": row.message_count,
    }
    for key, value in (("title", row.title), ("cwd", row.cwd), ("status", row.status)):
        if value:
            entry[key] = value
    return entry


class History:
    def __init__(self, hub: Hub, recorder: Recorder) -> None:
        self.hub = hub
        self.recorder = recorder

    async def _store(self) -> HistoryStore | None:
        return await self.recorder.store()

    async def snapshot(self, session_id: str) -> JsonObject | None:
        store = await self._store()
        if store is None:
            return None
        await self.recorder.flush()  # what was just said is part of it
        return await store.run(store.snapshot, session_id)

    # -- acp/listSessions ---------------------------------------------------------------------
    async def list_sessions(
        self,
        agent: str | None,
        cwd: str | None,
        query: str | None,
        cursor: str | None,
        limit: int | None,
    ) -> JsonObject:
        offset = int(cursor) if cursor and cursor.isdigit() else 0
        found: dict[str, JsonObject] = {}
        store = await self._store()
        if not query:
            # what the agent itself lists (ACP session/list, AAP GET /sessions) and live ones
            deleted = await store.run(store.deleted) if store is not None else set()
            listed: list[JsonObject] = []
            try:
                listed = await self.hub.list_sessions(agent)
            except BackendError:
                if agent is not None:
                    raise
            for entry in listed:
                if entry["sessionId"] in deleted and not entry.get("live"):
                    continue  # deleted here; its agent cannot delete it
                if cwd is None or entry.get("cwd") in (None, cwd):
                    found[entry["sessionId"]] = {**entry, "stored": False}
        if store is not None:
            await self.recorder.flush()
            rows = await store.run(
                lambda: store.list(agent=agent, cwd=cwd, query=query, offset=0, limit=None)
            )
            for row in rows:
                entry = _entry(row)
                live = self.hub.sessions.get(row.id)
                entry["live"] = live is not None and live.status in LIVE
                if live is not None:
                    entry["status"] = live.status
                found[row.id] = {**found.get(row.id, {}), **entry}
        entries = sorted(found.values(), key=lambda e: str(e.get("updatedAt") or ""), reverse=True)
        page = entries[offset : offset + limit] if limit is not None else entries[offset:]
        result: JsonObject = {"sessions": page}
        if limit is not None and offset + limit < len(entries):
            result["nextCursor"] = str(offset + limit)
        return result

    # -- acp/loadSession on a stored session ---------------------------------------------------
    async def resume(self, session_id: str, agent: str | None, cwd: str | None) -> Session:
        live = self.hub.sessions.get(session_id)
        if live is not None and live.status in LIVE:
            return live
        snapshot = await self.snapshot(session_id)
        if snapshot is None:
            if agent is None:
                raise BackendError(
                    p.INVALID_PARAMS,
                    f"acp/loadSession: agent: required (no stored session {session_id!r})",
                )
            return await self.hub.load_session(agent, session_id, cwd)
        store = await self._store()
        row = await store.run(store.session_row, session_id) if store else None
        agent = agent or snapshot["agent"]
        cwd = cwd or snapshot.get("cwd") or None
        agent_sid = (row.agent_session_id if row else None) or session_id
        try:
            session = await self.hub.load_session(agent, agent_sid, cwd)
            self.hub.rekey(session, session_id)
            session.resumed_from = "agent"
            if session.message_count() == 0:  # resumed without a replay: keep what we had
                session.restore(snapshot)
        except BackendError as exc:
            if exc.code in (p.UNKNOWN_AGENT, p.AGENT_UNAVAILABLE, p.AUTH_REQUIRED):
                raise
            log.info("resume of %s through the agent failed (%s): priming", session_id, exc.message)
            session = await self.hub.new_session(agent, cwd, snapshot.get("additionalDirectories"))
            self.hub.rekey(session, session_id)
            session.restore(snapshot)
            session.primer = [primer(snapshot)]
            session.resumed_from = "transcript"
            await self.hub.backend(agent).keep_mode(session, snapshot.get("modes"))
        if row is not None and row.extras:
            session.checkpoints.load(row.extras.get("checkpoints"))
        return session

    # -- rename / delete / export --------------------------------------------------------------
    async def rename(self, session_id: str, title: str) -> None:
        live = self.hub.sessions.get(session_id)
        store = await self._store()
        stored = False
        if store is not None:
            await self.recorder.flush()
            stored = await store.run(store.rename, session_id, title)
        if live is not None:
            update = {"sessionUpdate": "session_info_update", "title": title}
            self.hub.editor.publish(live, live.apply_update(update))
        elif not stored:
            raise BackendError(
                p.UNKNOWN_SESSION, f"unknown session {session_id!r}", {"sessionId": session_id}
            )

    async def checkpoint_roots(self, session_id: str) -> set[str]:
        """The folders whose shadow repositories hold the stored session's checkpoints."""
        store = await self._store()
        row = await store.run(store.session_row, session_id) if store else None
        stored = (row.extras or {}).get("checkpoints") if row else None
        if not isinstance(stored, dict):
            return set()
        return {str(c["root"]) for c in stored.values() if isinstance(c, dict) and "root" in c}

    async def forget(self, session_id: str) -> bool:
        self.recorder.forget(session_id)
        store = await self._store()
        return bool(store is not None and await store.run(store.delete, session_id))

    async def export(self, session_id: str, live_snapshot: JsonObject | None) -> str:
        snapshot = live_snapshot or await self.snapshot(session_id)
        if snapshot is None:
            raise BackendError(
                p.UNKNOWN_SESSION, f"unknown session {session_id!r}", {"sessionId": session_id}
            )
        return to_markdown(snapshot)
