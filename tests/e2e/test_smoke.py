from __future__ import annotations

from tests.support.lsp_editor import TestEditor


async def test_demo_turn(editor: TestEditor) -> None:
    agents = await editor.acp("acp/listAgents")
    names = [a["name"] for a in agents["agents"]]
    assert "demo" in names
    snap = await editor.new_session()
    sid = snap["sessionId"]
    result = await editor.prompt(sid, "hello")
    assert result["stopReason"] == "end_turn"
    model = editor.sessions[sid]
    print(model.message_texts())
    print(editor.statuses[sid])
    final = await editor.acp("acp/getSession", {"sessionId": sid})
    print({k: (v if k not in ("messages", "toolCalls") else len(v)) for k, v in final.items()})
