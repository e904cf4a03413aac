"""``acp/rewindSession``: a new session holding the conversation before one user message.

The original session is left as it was. Where the agent forks at a message (claude-agent-acp)
the new one is its fork at the answer before that message; elsewhere a new agent session
(same agent, folder and mode) primed with the transcript before that message, as a stored
session is resumed when its agent cannot load it. Either way the rewound message and
everything after it never reach the agent again. Where the user asks, the files first go
back to that message's checkpoint (``checkpoint_restore``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError
from acp_lsp.history.export import primer
from acp_lsp.session import Session
from acp_lsp.session.checkpoints import user_ordinal

if TYPE_CHECKING:
    from acp_lsp.editor.checkpoint_restore import CheckpointRestore
    from acp_lsp.hub import Hub

JsonObject = dict[str, Any]
log = logging.getLogger(__name__)


def before_message(snapshot: JsonObject, index: int) -> JsonObject:
    """``snapshot`` cut before message ``index``: its messages, and the tool calls the
    timeline shows before it."""
    messages = snapshot.get("messages") or []
    timeline: list[JsonObject] = []
    for entry in snapshot.get("timeline") or []:
        if entry.get("message") == index:
            break
        timeline.append(entry)
    kept_calls = {entry["toolCall"] for entry in timeline if "toolCall" in entry}
    calls = [c for c in snapshot.get("toolCalls") or [] if c.get("toolCallId") in kept_calls]
    return {
        **snapshot,
        "messages": messages[:index],
        "toolCalls": calls,
        "timeline": [e for e in timeline if e.get("message", -1) < index],
    }


async def rewind(
    hub: Hub,
    restorer: CheckpointRestore,
    session_id: str,
    message_index: int,
    restore_files: bool,
) -> tuple[Session, list[JsonObject] | None]:
    """The rewound session, and what restoring the files did (None when not asked)."""
    source = hub.session(session_id)
    ordinal = user_ordinal(source, message_index)
    if ordinal is None:
        raise BackendError(
            p.INVALID_PARAMS, f"messageIndex: message {message_index} is not a user message"
        )
    if session_id in hub.turns:
        raise BackendError(
            p.TURN_RUNNING,
            f"a turn is running in {session_id!r}: cancel it or wait for its end before rewinding",
        )
    restored = await restorer.restore(source, message_index) if restore_files else None
    cut = before_message(source.snapshot(), message_index)
    session = await _forked(hub, source, cut)
    if session is None:
        session = await hub.new_session(source.agent, source.cwd, source.additional_directories)
        session.restore(cut)
        session.title = source.title
        if cut["messages"]:
            session.primer = [primer(cut)]
    session.checkpoints = source.checkpoints.until(ordinal)
    session.rewound_from = {"sessionId": session_id, "messageIndex": message_index}
    await hub.backend(source.agent).keep_mode(session, source.modes)
    return session, restored


async def _forked(hub: Hub, source: Session, cut: JsonObject) -> Session | None:
    """The agent's own fork at the answer before the rewound message, where it can fork at a
    message (Claude: its prompt cache and its own record of tool results are kept); None
    where it cannot, and the rewound session is primed instead."""
    messages = cut["messages"]
    last = messages[-1] if messages else {}
    message_id = last.get("messageId") if last.get("role") == "agent" else None
    if not isinstance(message_id, str) or message_id.startswith("acp-lsp:"):
        return None
    at = Session(source.session_id, source.agent, source.cwd, source.additional_directories)
    at.restore(cut)
    at.title = source.title
    try:
        return await hub.fork_session(source.session_id, at)
    except BackendError as exc:
        log.info("rewind of %s primes a new session: %s", source.session_id, exc.message)
        return None
