"""Follow-along end to end (DESIGN §2): window/showDocument for tool-call locations.

The debounce itself is unit-tested with an injected clock (tests/unit/test_follow.py). Here
the order of jumps is the clock: jumps of one length of debounce fire in the order they were
scheduled, so a later jump arriving proves an earlier one that should not happen did not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.uris import from_fs_path

from acp_lsp import protocol as p
from tests.e2e import conftest
from tests.e2e.test_files import finish, scripted_editor
from tests.support.lsp_editor import TestEditor

pytestmark = pytest.mark.timeout(90)

JsonObject = dict[str, Any]
# Long enough that an agent's burst of updates always lands inside one window.
DEBOUNCE = {"followDebounceMs": 400}


def tool_call(tool_call_id: str, *locations: JsonObject, **fields: Any) -> JsonObject:
    update: JsonObject = {"sessionUpdate": "tool_call", "toolCallId": tool_call_id}
    update.update({"title": f"call {tool_call_id}", "kind": "read", "status": "in_progress"})
    update.update(fields)
    if locations:
        update["locations"] = list(locations)
    return {"update": update}


def at(path: str, line: int | None = None) -> JsonObject:
    return {"path": path} if line is None else {"path": path, "line": line}


def gate(name: str) -> JsonObject:
    return {
        "request": "session/request_permission",
        "id": name,
        "params": {
            "sessionId": "{sessionId}",
            "toolCall": {"toolCallId": name, "title": name},
            "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
        },
    }


def wait_for_jumps(editor: TestEditor, counts: dict[str, int]) -> Any:
    """Permission policy: answer gate ``name`` once ``counts[name]`` jumps were shown."""

    async def policy(params: JsonObject) -> JsonObject:
        wanted = counts[params["toolCall"]["toolCallId"]]
        await editor.wait_for(lambda: len(editor.shown_documents) >= wanted)
        return {"outcome": {"outcome": "selected", "optionId": "ok"}}

    return policy


def jumps(editor: TestEditor) -> list[tuple[str, int]]:
    out = []
    for shown in editor.shown_documents:
        assert shown.take_focus is False
        assert shown.selection is not None and shown.selection.start == shown.selection.end
        assert shown.selection.start.character == 0
        out.append((shown.uri, shown.selection.start.line))
    return out


def uri(workspace: Path, rel: str) -> str:
    return from_fs_path(str(workspace / rel)) or ""


@pytest.mark.parametrize("profile", ["visual_studio_code", "neovim"])
async def test_tool_call_locations_are_shown_zero_based_and_debounced(
    tmp_path: Path, workspace: Path, profile: str
) -> None:
    first = [
        tool_call("read", at("{cwd}/src/app.py", 9)),
        gate("g1"),
        # created without a location, given one by tool_call_update
        tool_call("edit", kind="edit"),
        {
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "edit",
                "locations": [at("{cwd}/src/util.py", 4)],
            }
        },
        gate("g2"),
        # one burst: only its last followable location is shown
        tool_call("b1", at("{cwd}/README.md", 1)),
        tool_call("b2", at("{cwd}/src/app.py", 2), status="completed"),
        tool_call("b3", at("src/util.py", 5)),  # relative: ignored
        tool_call("b4", at("{cwd}/src/missing.py", 5)),  # no such file: ignored
        # the first call completes: same location, already followed, no jump back to it (nor
        # when the turn ends and the bridge finalises the calls left in progress)
        {
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "read",
                "status": "completed",
            }
        },
    ]
    second = [tool_call("later", at("{cwd}/README.md", 5))]
    editor, _log = await scripted_editor(
        tmp_path,
        workspace,
        profile,
        first,
        options=DEBOUNCE,
        script={"on": {"session/prompt#2": second}},
    )
    editor.permission_policy = wait_for_jumps(editor, {"g1": 1, "g2": 2})
    sid = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(sid, "go"))["stopReason"] == "end_turn"
    await editor.wait_for(lambda: len(editor.shown_documents) >= 3)
    await editor.prompt(sid, "again")
    await editor.wait_for(lambda: len(editor.shown_documents) >= 4)
    assert jumps(editor) == [
        (uri(workspace, "src/app.py"), 8),
        (uri(workspace, "src/util.py"), 3),
        (uri(workspace, "src/app.py"), 1),
        (uri(workspace, "README.md"), 4),
    ]
    await finish(editor)


async def test_follow_is_switched_per_session_with_the_setting_as_default(
    tmp_path: Path, workspace: Path
) -> None:
    steps = [tool_call("t{n}", at("{cwd}/src/app.py", "{n}"))]
    options = {**DEBOUNCE, "followAlong": False}
    editor, _log = await scripted_editor(tmp_path, workspace, "neovim", steps, options=options)
    quiet = (await editor.new_session())["sessionId"]
    loud = (await editor.new_session())["sessionId"]
    assert await editor.acp(p.ACP_SET_FOLLOW, {"sessionId": loud, "enabled": True}) == {
        "enabled": True
    }
    await editor.prompt(quiet, "1")  # followAlong false: no jump (line 1)
    await editor.prompt(loud, "2")  # switched on: jumps (line 2)
    await editor.wait_for(lambda: len(editor.shown_documents) >= 1)
    assert await editor.acp(p.ACP_SET_FOLLOW, {"sessionId": loud, "enabled": False}) == {
        "enabled": False
    }
    await editor.prompt(loud, "3")  # switched off again: no jump
    await editor.acp(p.ACP_SET_FOLLOW, {"sessionId": quiet, "enabled": True})
    await editor.prompt(quiet, "4")  # the other session switched on: jumps (line 4)
    await editor.wait_for(lambda: len(editor.shown_documents) >= 2)
    # the jump of call 4 came after the (absent) jumps of calls 1 and 3 would have
    assert jumps(editor) == [(uri(workspace, "src/app.py"), 1), (uri(workspace, "src/app.py"), 3)]
    await finish(editor)


async def test_no_show_document_for_a_client_without_support(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def without_show_document(profile: str, *, rich: bool = True) -> types.ClientCapabilities:
        caps = capabilities(profile, rich=rich)
        assert caps.window is not None
        caps.window.show_document = None
        return caps

    capabilities = conftest.capabilities
    monkeypatch.setattr(conftest, "capabilities", without_show_document)
    steps = [tool_call("t", at("{cwd}/src/app.py", 3))]
    # no debounce: the jump would be due before the agent even ends its turn
    options = {"followDebounceMs": 0}
    editor, _log = await scripted_editor(
        tmp_path, workspace, "visual_studio_code", steps, options=options
    )
    sid = (await editor.new_session())["sessionId"]
    await editor.prompt(sid, "go")
    await editor.acp(p.ACP_GET_SESSION, {"sessionId": sid})
    assert editor.shown_documents == []
    assert editor.sessions[sid].tool_calls["t"]["locations"] == [
        {"path": str(workspace / "src/app.py"), "line": 3}
    ]
    await finish(editor)
