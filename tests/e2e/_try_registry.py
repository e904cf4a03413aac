"""Not part of the suite: try every agent of the shipped registry snapshot offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from acp_lsp import protocol as p
from tests.e2e.conftest import start_editor, with_fast_demo

pytestmark = pytest.mark.timeout(3000)


async def test_try_all(tmp_path: Path, workspace: Path) -> None:
    editor = await start_editor(
        tmp_path,
        workspace,
        "visual_studio_code",
        with_fast_demo({"registry": {"url": "http://127.0.0.1:9/registry.json"}}),
    )
    agents = (await editor.acp(p.ACP_LIST_AGENTS, {"includeRegistry": True}))["agents"]
    results = {}
    for agent in agents:
        name = agent["name"]
        if not name.startswith("registry:"):
            continue
        row: dict[str, object] = {"version": agent.get("version")}
        try:
            row["install"] = await editor.acp(p.ACP_INSTALL_AGENT, {"agent": name}, timeout=600)
        except JsonRpcException as exc:
            row["install_error"] = str(exc)[:300]
            results[name] = row
            continue
        try:
            snap = await editor.acp(p.ACP_NEW_SESSION, {"agent": name}, timeout=300)
            row["session"] = {
                "modes": [m["id"] for m in (snap.get("modes") or {}).get("availableModes", [])],
                "configOptions": [o["id"] for o in snap.get("configOptions") or []],
            }
            try:
                await editor.acp(
                    p.ACP_PROMPT, {"sessionId": snap["sessionId"], "prompt": "hi"}, timeout=120
                )
                row["prompt"] = "answered"
            except JsonRpcException as exc:
                row["prompt_error"] = str(exc)[:300]
        except JsonRpcException as exc:
            row["session_error"] = str(exc)[:300]
        listed = (await editor.acp(p.ACP_LIST_AGENTS, {}))["agents"]
        row["auth"] = [a.get("authMethods") for a in listed if a["name"] == name]
        results[name] = row
    Path("/tmp/registry-trial.json").write_text(json.dumps(results, indent=1, default=str))
    await editor.shutdown_session()
