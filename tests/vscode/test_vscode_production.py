"""Real VS Code (code-server) with real production agents: claude-agent-acp 0.101 and codex-acp
against the scripted model server (tests/model_server), through the real acp-lsp server and the
packaged extension. Both edit files on disk themselves (Claude's Edit tool and Bash, Codex's
apply_patch and shell): the case issue 25 is about. tests/vscode/production.mjs uses the
workbench and the chat webview as a person would:

- turn 1: the model reads greet.py and edits it (Hello -> Howdy) while the open editor holds an
  unsaved line; the chat shows the tool calls, the diff and "1 file changed"; the editor shows
  the agent's change with the unsaved line; Ctrl+S saves with no "file is newer" question;
  Keep from the summary;
- turn 2: the model runs `sed` (world -> everyone), the editor again holding an unsaved line;
  Reject from the summary restores the disk byte for byte, the editor follows and keeps the
  line; Ctrl+S again asks nothing.

Screenshots: artifacts/vscode/files-changed-<agent>.png (and -rejected). Skipped, with the
reason, when scripts/setup-vscode.sh or scripts/fetch-agents.sh has not been run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.model_server import ModelServer, Say, Script, Tool
from tests.support.production import agent_config
from tests.vscode import tools
from tests.vscode.tools import (
    REPO,
    code_server_missing,
    kill_group,
)

DRIVER = Path(__file__).with_name("production.mjs")
# Codex's sandbox needs bubblewrap and user namespaces: where it cannot sandbox, only
# full-access runs commands (tests/e2e/test_production_turns.py)
AGENTS = {"claude": None, "codex": "full-access"}
ARTIFACTS = Path(os.environ.get("ACP_LSP_ARTIFACTS", REPO / "artifacts")) / "vscode"
CHECKS = re.findall(r'check\(\s*"([^"]+)"', DRIVER.read_text(encoding="utf-8"))

GREET = """def greet(name: str) -> str:
    return f"Hello, {name}!"


if __name__ == "__main__":
    print(greet("world"))
"""


def two_turns(root: Path) -> Script:
    path = str(root / "greet.py")
    return Script(
        "vscode-files-changed",
        [
            [
                Tool("read", {"path": path}),
                Tool("edit", {"path": path, "old": "Hello", "new": "Howdy"}),
                Say("I updated the greeting in greet.py.", chunks=3),
            ],
            [
                Tool("shell", {"command": f"sed -i 's/world/everyone/' {path}"}),
                Say("I ran sed on greet.py.", chunks=2),
            ],
        ],
    )


@pytest.fixture(scope="module", params=sorted(AGENTS))
def flow(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    name: str = request.param
    reason = code_server_missing()
    if reason is not None:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp(f"vscode-{name}")
    home = root / "home"
    home.mkdir()
    workspace = root / "ws"
    workspace.mkdir()
    (workspace / "greet.py").write_text(GREET, encoding="utf-8")
    with ModelServer(two_turns(workspace)) as model:
        agent = agent_config(name, model, home)  # skips when the agent is not installed
        settings = {
            **tools.SETTINGS,
            # the web workbench saves a second after typing by default: the unsaved line this
            # test is about would not stay unsaved
            "files.autoSave": "off",
            "acpLsp.agents": {name: {**agent, "title": f"{name} (scripted model)"}},
            "acpLsp.defaultAgent": name,
            "acpLsp.followAlong": False,
        }
        server = tools.start_with_agents(
            root, settings, {"HOME": str(home), "ACP_LSP_DATA_DIR": str(home / "acp-lsp-data")}
        )
        try:
            env = tools.driver_env(
                server,
                workspace,
                ACP_LSP_ARTIFACTS=str(ARTIFACTS),
                ACP_LSP_AGENT=name,
                ACP_LSP_MODE=AGENTS[name] or "",
            )
            run = tools.run_driver(DRIVER, env, timeout=420)
            yield {
                "checks": run.checks,
                "output": f"{run.stdout}\n{run.stderr}\n--- code-server log ---\n{server.log_tail()}",
                "requests": [r.kind for r in model.requests],
            }
        finally:
            kill_group(server.proc)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", [n for n in CHECKS if n != "flow"])
def test_agent_in_vscode(flow: dict[str, Any], name: str) -> None:
    tools.assert_check(flow["checks"], name, flow["output"])


@pytest.mark.timeout(600)
def test_the_agent_only_talked_to_the_scripted_model(flow: dict[str, Any]) -> None:
    assert flow["requests"], "the agent sent the scripted model nothing"
    assert "unknown" not in flow["requests"], flow["requests"]
