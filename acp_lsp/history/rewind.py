"""``acp/rewindSession``: a new session holding the conversation before one user message.

The original session is left as it was. The new one is a new agent session (same agent,
folder and mode) primed with the transcript before that message, as a stored session is
resumed when its agent cannot load it: the rewound message and everything after it never
reach the agent again. Where the user asks, the files first go back to that message's
checkpoint (``checkpoint_restore``).
"""

from __future__ import annotations

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
    session = await hub.new_session(source.agent, source.cwd, source.additional_directories)
    session.restore(cut)
    session.title = source.title
    session.checkpoints = source.checkpoints.until(ordinal)
    session.rewound_from = {"sessionId": session_id, "messageIndex": message_index}
    if cut["messages"]:
        session.primer = [primer(cut)]
    await hub.backend(source.agent).keep_mode(session, source.modes)
    return session, restored
