"""Built-in agents: the offline demo and today's production ACP agents, pinned.

Each production preset runs the agent's npm package through ``npx`` at an exact version
(a moving tag would change the agent under the user's feet). ``ProductionAgent`` keeps the
facts the tests check against the installed package: its name, version, the binary it
ships and the flag that turns on ACP.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class ProductionAgent:
    name: str
    title: str
    package: str
    version: str
    bin: str
    """The binary the package ships (what ``npx`` runs)."""
    flags: tuple[str, ...] = ()
    """Arguments that make the binary speak ACP on stdio."""
    env: dict[str, str] = field(default_factory=dict)
    """Credentials passed through from the server's environment when set."""

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}"

    def preset(self) -> JsonObject:
        return {
            "title": self.title,
            "command": "npx",
            "args": ["-y", self.spec, *self.flags],
            "env": dict(self.env),
            # a first start may download the package: give it time (requestTimeout is 30 s)
            "startTimeout": 300.0,
        }


PRODUCTION_AGENTS: tuple[ProductionAgent, ...] = (
    ProductionAgent(
        "claude",
        "Claude Code",
        "@agentclientprotocol/claude-agent-acp",
        "0.101.0",
        "claude-agent-acp",
        env={"ANTHROPIC_API_KEY": "${env:ANTHROPIC_API_KEY}"},
    ),
    ProductionAgent(
        "codex",
        "Codex",
        "@zed-industries/codex-acp",
        "0.16.0",
        "codex-acp",
        env={
            "CODEX_API_KEY": "${env:CODEX_API_KEY}",
            "OPENAI_API_KEY": "${env:OPENAI_API_KEY}",
        },
    ),
    ProductionAgent(
        "gemini",
        "Gemini CLI",
        "@google/gemini-cli",
        "0.61.0",
        "gemini",
        flags=("--acp",),  # --experimental-acp still works but is deprecated
        env={
            "GEMINI_API_KEY": "${env:GEMINI_API_KEY}",
            "GOOGLE_API_KEY": "${env:GOOGLE_API_KEY}",
        },
    ),
    ProductionAgent(
        "qwen",
        "Qwen Code",
        "@qwen-code/qwen-code",
        "0.24.4",
        "qwen",
        flags=("--acp",),
        env={
            "OPENAI_API_KEY": "${env:OPENAI_API_KEY}",
            "OPENAI_BASE_URL": "${env:OPENAI_BASE_URL}",
            "OPENAI_MODEL": "${env:OPENAI_MODEL}",
            # MCP servers (the editor's tools among them) connected before session/new answers:
            # by default Qwen Code connects them in the background, and a first prompt sent
            # at once reaches its model without them (read from its 0.24 package)
            "QWEN_CODE_LEGACY_MCP_BLOCKING": "1",
        },
    ),
)


def presets() -> dict[str, JsonObject]:
    """Built-in agents. ``demo`` (the offline agent) is the default when nothing is set."""
    out: dict[str, JsonObject] = {
        "demo": {
            "title": "Demo (built-in, offline)",
            "command": sys.executable,
            "args": ["-m", "acp_lsp.demo.agent"],
        },
    }
    for agent in PRODUCTION_AGENTS:
        out[agent.name] = agent.preset()
    return out
