"""The session model: the single source of truth for one conversation.

Pure Python (no LSP, no wire format, no agent SDK). See ``model.Session``.
"""

from acp_lsp.session.jsonish import JSON
from acp_lsp.session.model import Session
from acp_lsp.session.toolcalls import UNFINISHED_STATUSES, named_paths, new_tool_call

__all__ = ["JSON", "UNFINISHED_STATUSES", "Session", "named_paths", "new_tool_call"]
