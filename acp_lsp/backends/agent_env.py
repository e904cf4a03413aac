"""What the bridge adds to a known agent's environment so that a feature works there."""

from __future__ import annotations

from acp_lsp.backends.agent_sandbox import known_agent
from acp_lsp.config import AgentConfig

# Qwen Code 0.24 discovers the MCP servers of session/new in the background, and its ACP
# session/prompt neither waits for that nor announces the tools found later: they never reach
# its model (seen against the scripted model, turn after turn). With this variable (its own
# switch back to the old way) session/new discovers them before it answers.
QWEN_MCP_BLOCKING = {"QWEN_CODE_LEGACY_MCP_BLOCKING": "1"}


def start_env(name: str, config: AgentConfig, env: dict[str, str], mcp: bool) -> dict[str, str]:
    """``env`` plus what agent ``name`` needs when its sessions get MCP servers (``mcp``);
    the agent config's own env wins."""
    if mcp and known_agent(name, config) == "qwen":
        return {**QWEN_MCP_BLOCKING, **env}
    return env
