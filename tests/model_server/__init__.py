"""A scripted stand-in for the model APIs the production agents call (no network).

Claude (Anthropic Messages), Codex (OpenAI Responses), Qwen Code (OpenAI Chat Completions)
and Gemini CLI (Gemini ``generateContent``) point their base URL at a :class:`ModelServer`
on 127.0.0.1; it plays a :class:`Script` (steps per user turn) and records every request.
See ``script.py`` for the interface the API modules share and ``docs/agents.md`` for how
each agent is pointed here.

Run standalone: ``python -m tests.model_server --port 8765 --script read-edit --root DIR``.
"""

from tests.model_server.app import ModelServer, create_app
from tests.model_server.script import SCRIPTS, Recorded, Say, Script, ServerState, Tool
from tests.model_server.tool_calls import ToolCall, render_tool

__all__ = [
    "SCRIPTS",
    "ModelServer",
    "Recorded",
    "Say",
    "Script",
    "ServerState",
    "Tool",
    "ToolCall",
    "create_app",
    "render_tool",
]
