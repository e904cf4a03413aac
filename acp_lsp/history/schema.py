"""The store's schema: each version's migration, and what search needs stored.

A store opens at any older version and is migrated one step per transaction
(``HistoryStore.open``); a newer one is refused.
"""

from __future__ import annotations

SCHEMA_VERSION = 4
MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        agent_session_id TEXT,
        protocol TEXT,
        cwd TEXT,
        title TEXT,
        title_search TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        status TEXT,
        message_count INTEGER NOT NULL DEFAULT 0,
        extras TEXT
    );
    CREATE INDEX sessions_updated ON sessions(updated_at DESC);
    CREATE TABLE messages (
        session_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        pos INTEGER NOT NULL,
        role TEXT NOT NULL,
        message_id TEXT,
        content TEXT NOT NULL,
        search TEXT NOT NULL,
        PRIMARY KEY (session_id, idx)
    ) WITHOUT ROWID;
    CREATE TABLE tool_calls (
        session_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        pos INTEGER NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (session_id, tool_call_id)
    ) WITHOUT ROWID;
    """,
    2: """
    CREATE TABLE message_appends (
        session_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        text TEXT NOT NULL,
        search TEXT NOT NULL
    );
    CREATE INDEX message_appends_message ON message_appends(session_id, idx);
    """,
    # sessions the user deleted that their agent still lists (it cannot delete them)
    3: """
    CREATE TABLE deleted_sessions (id TEXT PRIMARY KEY, deleted_at TEXT NOT NULL) WITHOUT ROWID;
    """,
    # an append's search copy may be NULL: search then reads its text (see search_copy); rows
    # keep their rowid, which orders a message's appends
    4: """
    CREATE TABLE message_appends_4 (
        session_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        text TEXT NOT NULL,
        search TEXT
    );
    INSERT INTO message_appends_4 (rowid, session_id, idx, text, search)
        SELECT rowid, session_id, idx, text, nullif(search, text) FROM message_appends;
    DROP TABLE message_appends;
    ALTER TABLE message_appends_4 RENAME TO message_appends;
    CREATE INDEX message_appends_message ON message_appends(session_id, idx);
    """,
}


def search_copy(text: str) -> str | None:
    """The casefolded copy of ``text`` that search needs, or None when the text itself serves.

    Search is ``LIKE`` against a casefolded needle, and SQLite's ``LIKE`` already ignores the
    case of ASCII letters (its default; this store never sets case_sensitive_like). So ASCII
    text, most of what agents stream, needs no copy: the store writes each appended character
    once, not twice. Other text needs one unless casefolding leaves it as it is.
    """
    if text.isascii():
        return None
    folded = text.casefold()
    return None if folded == text else folded
