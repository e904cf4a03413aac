"""Static data of the demo agent: identity, modes, slash commands, config options, timing."""

from __future__ import annotations

import os
from typing import Any

from acp_lsp import __version__

AGENT_NAME = "acp-lsp-demo"
AGENT_TITLE = "acp-lsp demo agent"
AGENT_VERSION = __version__

DEFAULT_DELAY = 0.03
# "slow" prompts stream this slowly whatever ACP_DEMO_DELAY says, so a cancel can land.
SLOW_DELAY = 0.1

MODES: list[dict[str, str]] = [
    {"id": "ask", "name": "Ask", "description": "Answer questions; read files, change nothing"},
    {"id": "code", "name": "Code", "description": "Read, edit and run things in the workspace"},
    {"id": "architect", "name": "Architect", "description": "Plan the work, touch nothing"},
]
DEFAULT_MODE = "code"

COMMANDS: list[dict[str, Any]] = [
    {"name": "explain", "description": "Read a file and explain it", "input": {"hint": "path"}},
    {"name": "edit", "description": "Propose an edit to a file", "input": {"hint": "path"}},
    {"name": "run", "description": "Run a quick check in a terminal"},
    {"name": "plan", "description": "Only make a plan"},
    {"name": "help", "description": "List these commands"},
]

VERBOSITY_VALUES = ["concise", "normal", "detailed"]
MODEL_VALUES = {"demo-small": 32_000, "demo-large": 200_000}


def default_config() -> dict[str, str | bool]:
    return {"verbosity": "normal", "model": "demo-large", "run_checks": True}


def config_options(values: dict[str, str | bool], *, boolean: bool) -> list[dict[str, Any]]:
    """The session's config options in wire shape; booleans only for clients that take them."""
    options: list[dict[str, Any]] = [
        {
            "id": "verbosity",
            "name": "Verbosity",
            "description": "How much the demo agent says",
            "type": "select",
            "currentValue": values["verbosity"],
            "options": [{"value": v, "name": v.capitalize()} for v in VERBOSITY_VALUES],
        },
        {
            "id": "model",
            "name": "Model",
            "category": "model",
            "type": "select",
            "currentValue": values["model"],
            "options": [
                {"value": name, "name": name, "description": f"{size // 1000}k context"}
                for name, size in MODEL_VALUES.items()
            ],
        },
    ]
    if boolean:
        options.append(
            {
                "id": "run_checks",
                "name": "Run checks",
                "description": "Run a terminal command after editing",
                "type": "boolean",
                "currentValue": bool(values["run_checks"]),
            }
        )
    return options


def modes_state(current: str) -> dict[str, Any]:
    return {"currentModeId": current, "availableModes": MODES}


def turn_delay() -> float:
    """Seconds between streamed steps: env ACP_DEMO_DELAY, default 0.03, clamped to [0, 1]."""
    raw = os.environ.get("ACP_DEMO_DELAY")
    if raw is None:
        return DEFAULT_DELAY
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_DELAY
    return min(max(value, 0.0), 1.0)


# Counts the lines of the workspace files: runs in the client's terminal, output deterministic.
LINE_COUNT_SCRIPT = """\
import os
shown = 0
for root, dirs, files in os.walk("."):
    dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
    for name in sorted(files):
        path = os.path.join(root, name)
        try:
            with open(path, "rb") as f:
                lines = sum(1 for _ in f)
        except OSError:
            continue
        print(f"{lines:6d}  {path[2:]}")
        shown += 1
        if shown >= 20:
            raise SystemExit(0)
"""
