"""Unit tests of the session model (acp_lsp.session): messages, tool calls, turns, snapshot."""

from __future__ import annotations

import copy
import json
import logging
import tracemalloc
from typing import Any

import pytest

from acp_lsp.session import Session
from tests.support.editor_model import EditorModel, view_of

JSON = Any


def text(t: str, **extra: JSON) -> dict[str, JSON]:
    return {"type": "text", "text": t, **extra}


def chunk(t: str, role: str = "agent", message_id: str | None = None, **extra: JSON) -> JSON:
    kind = {"agent": "agent_message_chunk", "user": "user_message_chunk"}.get(
        role, "agent_thought_chunk"
    )
    update: dict[str, JSON] = {"sessionUpdate": kind, "content": text(t)}
    if message_id is not None:
        update["messageId"] = message_id
    update.update(extra)
    return update


def new_session() -> Session:
    return Session("s1", "demo", "/work")


class Recorder:
    """A session plus an editor fed with everything the session returns."""

    def __init__(self) -> None:
        self.session = new_session()
        self.editor = EditorModel()
        self.sent: list[dict[str, JSON]] = []

    def __call__(self, updates: list[dict[str, JSON]]) -> list[dict[str, JSON]]:
        self.sent.extend(updates)
        self.editor.apply_all(updates)
        return updates

    def apply(self, *updates: JSON) -> list[dict[str, JSON]]:
        out: list[dict[str, JSON]] = []
        for update in updates:
            out.extend(self(self.session.apply_update(update)))
        return out

    def consistent(self) -> None:
        assert self.editor.view() == view_of(self.session.snapshot())


# -- messages -------------------------------------------------------------------------------


def test_chunks_are_returned_as_received_and_join_into_one_text_block() -> None:
    session = new_session()
    updates = [chunk(t) for t in ["Hel", "lo", ", ", "world"]]
    for update in updates:
        assert session.apply_update(update)[0] is update
    snap = session.snapshot()
    assert snap["messages"] == [{"role": "agent", "content": [text("Hello, world")]}]
    assert snap["timeline"] == [{"message": 0}]


def test_twenty_thousand_chunks_make_one_block_with_exact_text() -> None:
    session = new_session()
    pieces = [f"{i}," for i in range(20_000)]
    for piece in pieces:
        session.apply_update(chunk(piece, message_id="m"))
    messages = session.snapshot()["messages"]
    assert len(messages) == 1
    assert messages[0]["content"] == [text("".join(pieces))]
    # Reading does not freeze the message: later chunks still join the same block.
    session.apply_update(chunk("end", message_id="m"))
    assert session.snapshot()["messages"][0]["content"] == [text("".join(pieces) + "end")]


def test_chunks_with_the_same_message_id_form_one_message_even_when_interleaved() -> None:
    rec = Recorder()
    rec.apply(chunk("a1", message_id="a"), chunk("b1", message_id="b"), chunk("a2", message_id="a"))
    snap = rec.session.snapshot()
    assert [m["messageId"] for m in snap["messages"]] == ["a", "b"]
    assert rec.session.message_text(0) == "a1a2"
    assert rec.session.message_text(1) == "b1"
    assert snap["timeline"] == [{"message": 0}, {"message": 1}]
    rec.consistent()


def test_chunk_without_id_appends_only_to_the_last_entry_of_the_same_role() -> None:
    rec = Recorder()
    rec.apply(
        chunk("think "),
        chunk("hard", role="thought"),
        chunk("answer"),  # role changed: new message
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read"},
        chunk("after tool"),  # last entry is a tool call: new message
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"},
        chunk(" and more"),  # an update of an existing call adds no entry: same message
    )
    snap = rec.session.snapshot()
    assert [(m["role"], rec.session.message_text(i)) for i, m in enumerate(snap["messages"])] == [
        ("agent", "think "),
        ("thought", "hard"),
        ("agent", "answer"),
        ("agent", "after tool and more"),
    ]
    assert snap["timeline"] == [
        {"message": 0},
        {"message": 1},
        {"message": 2},
        {"toolCall": "t1"},
        {"message": 3},
    ]
    rec.consistent()


def test_same_message_id_in_different_roles_is_two_messages() -> None:
    session = new_session()
    session.apply_update(chunk("reasoning", role="thought", message_id="m1"))
    session.apply_update(chunk("answer", message_id="m1"))
    roles = [m["role"] for m in session.snapshot()["messages"]]
    assert roles == ["thought", "agent"]


def test_text_blocks_join_only_when_they_differ_in_text_alone() -> None:
    rec = Recorder()
    link = {"type": "resource_link", "uri": "file:///a.py", "name": "a.py"}
    annotated = {"audience": ["user"]}
    rec.apply(
        {"sessionUpdate": "agent_message_chunk", "content": text("a", _meta={"k": 1})},
        {"sessionUpdate": "agent_message_chunk", "content": text("b", _meta={"k": 1})},
        {"sessionUpdate": "agent_message_chunk", "content": text("c", annotations=annotated)},
        {"sessionUpdate": "agent_message_chunk", "content": link},
        chunk("d"),
        chunk("e"),
        {"sessionUpdate": "agent_message_chunk", "content": text("f", annotations=annotated)},
    )
    assert rec.session.snapshot()["messages"][0]["content"] == [
        text("ab", _meta={"k": 1}),
        text("c", annotations=annotated),
        link,
        text("de"),
        text("f", annotations=annotated),
    ]
    rec.consistent()


def test_v2_whole_message_upserts_replace_clear_and_keep() -> None:
    rec = Recorder()
    rec.apply({"sessionUpdate": "agent_message", "messageId": "m", "content": [text("draft")]})
    rec.apply(chunk(" more", message_id="m"))
    assert rec.session.message_text(0) == "draft more"
    rec.apply({"sessionUpdate": "agent_message", "messageId": "m", "content": [text("final")]})
    assert rec.session.snapshot()["messages"] == [
        {"messageId": "m", "role": "agent", "content": [text("final")]}
    ]
    rec.apply({"sessionUpdate": "agent_message", "messageId": "m", "_meta": {"x": 1}})  # keep
    assert rec.session.message_text(0) == "final"
    rec.apply({"sessionUpdate": "agent_message", "messageId": "m", "content": None})  # clear
    assert rec.session.snapshot()["messages"][0]["content"] == []
    rec.apply({"sessionUpdate": "agent_thought", "messageId": "t", "content": [text("hmm")]})
    assert rec.session.snapshot()["timeline"] == [{"message": 0}, {"message": 1}]
    rec.consistent()


def test_inputs_are_never_mutated() -> None:
    session = new_session()
    updates = [
        chunk("a"),
        chunk("b"),
        {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x", "content": []},
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "t",
            "content": {"type": "content", "content": text("out")},
        },
        {"sessionUpdate": "tool_call_update", "toolCallId": "t", "title": None},
        {"sessionUpdate": "current_mode_update", "modeId": "plan"},
        {"sessionUpdate": "agent_message", "messageId": "m", "content": [text("x")]},
        chunk("y", message_id="m"),
    ]
    prompt = [text("hi"), {"type": "resource_link", "uri": "file:///x", "name": "x"}]
    before = copy.deepcopy((updates, prompt))
    session.add_user_prompt(prompt)
    for update in updates:
        session.apply_update(update)
    session.snapshot()
    assert (updates, prompt) == before


# -- the user's prompt and its echo -------------------------------------------------------


def test_prompt_is_a_new_user_message_sent_to_the_editor() -> None:
    rec = Recorder()
    blocks = [text("fix "), text("the bug"), {"type": "resource_link", "uri": "f", "name": "f"}]
    updates = rec(rec.session.add_user_prompt(blocks))
    assert [u["sessionUpdate"] for u in updates] == ["user_message_chunk"] * 3
    assert [u["content"] for u in updates] == blocks
    message_id = updates[0]["messageId"]
    assert all(u["messageId"] == message_id for u in updates)
    assert rec.session.snapshot()["messages"] == [
        {"messageId": message_id, "role": "user", "content": [text("fix the bug"), blocks[2]]}
    ]
    rec.consistent()


def test_two_prompts_in_a_row_stay_two_messages_for_the_editor_too() -> None:
    rec = Recorder()
    rec(rec.session.add_user_prompt([text("one")]))
    rec(rec.session.finish_turn())
    rec(rec.session.add_user_prompt([text("two")]))
    assert rec.editor.message_texts() == ["one", "two"]
    rec.consistent()


@pytest.mark.parametrize(
    "echo",
    [
        [chunk("hello world", role="user")],
        [chunk("hello ", role="user"), chunk("world", role="user")],
        [chunk("hello world", role="user", message_id="agent-u1")],
    ],
    ids=["whole", "split", "with-agent-id"],
)
def test_echo_of_the_prompt_is_not_stored_twice(echo: list[JSON]) -> None:
    rec = Recorder()
    rec(rec.session.add_user_prompt([text("hello world")]))
    assert rec.apply(*echo) == []
    rec.apply(chunk("hi there"))
    assert rec.editor.message_texts() == ["hello world", "hi there"]
    assert [m["role"] for m in rec.session.snapshot()["messages"]] == ["user", "agent"]
    rec.consistent()


def test_agent_id_of_an_echo_names_the_prompt_message_afterwards() -> None:
    rec = Recorder()
    prompt_id = rec(rec.session.add_user_prompt([text("hi")]))[0]["messageId"]
    rec.apply(chunk("hi", role="user", message_id="u7"))
    forwarded = rec.apply(chunk(" [context]", role="user", message_id="u7"))
    assert forwarded == [chunk(" [context]", role="user", message_id=prompt_id)]
    assert rec.session.message_text(0) == "hi [context]"
    rec.consistent()


def test_user_chunk_that_is_not_the_prompt_is_stored() -> None:
    rec = Recorder()
    rec(rec.session.add_user_prompt([text("hello world")]))
    other = chunk("something else", role="user")
    assert rec.apply(other) == [other]
    # No messageId, and the prompt is the last entry: it continues the prompt message.
    assert rec.editor.message_texts() == ["hello worldsomething else"]
    rec.apply(chunk("own message", role="user", message_id="u2"))
    assert rec.editor.message_texts() == ["hello worldsomething else", "own message"]
    rec.consistent()


def test_partial_echo_that_diverges_loses_nothing() -> None:
    rec = Recorder()
    rec(rec.session.add_user_prompt([text("hello world")]))
    first = chunk("hello ", role="user")
    assert rec.apply(first) == []  # held back: could still be the echo
    second = chunk("there", role="user", message_id="u1")
    assert rec.apply(second) == [first, second]
    assert rec.editor.message_texts() == ["hello worldhello ", "there"]
    rec.consistent()


def test_echo_is_only_expected_during_the_turn() -> None:
    rec = Recorder()
    rec(rec.session.add_user_prompt([text("again")]))
    rec(rec.session.finish_turn())
    late = chunk("again", role="user")
    assert rec.apply(late) == [late]  # e.g. a later replay: stored
    assert rec.session.message_text(0) == "againagain"
    rec.consistent()


def test_echo_is_matched_once() -> None:
    rec = Recorder()
    rec(rec.session.add_user_prompt([text("go")]))
    assert rec.apply(chunk("go", role="user")) == []
    again = chunk("go", role="user")
    assert rec.apply(again) == [again]
    assert rec.session.message_text(0) == "gogo"  # appended to the last user message
    rec.consistent()


def test_v2_user_message_echo_is_swallowed_and_its_id_adopted() -> None:
    rec = Recorder()
    rec(rec.session.add_user_prompt([text("hi")]))
    echo = {"sessionUpdate": "user_message", "messageId": "srv-1", "content": [text("hi")]}
    assert rec.apply(echo) == []
    assert rec.session.message_count() == 1
    # Later upserts of the agent's id patch the prompt message (forwarded under our id).
    patch = {"sessionUpdate": "user_message", "messageId": "srv-1", "content": [text("hi!")]}
    forwarded = rec.apply(patch)
    assert forwarded == [{**patch, "messageId": "acp-lsp:prompt:1"}]
    assert rec.session.message_count() == 1
    assert rec.session.message_text(0) == "hi!"
    rec.apply({"sessionUpdate": "agent_message", "messageId": "a", "content": [text("yo")]})
    rec.consistent()


# -- tool calls ---------------------------------------------------------------------------


def test_tool_call_is_returned_as_full_merged_state_with_defaults() -> None:
    session = new_session()
    out = session.apply_update({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Read"})
    assert out == [
        {
            "sessionUpdate": "tool_call",
            "toolCall": {
                "toolCallId": "t",
                "title": "Read",
                "kind": "other",
                "status": "pending",
                "content": [],
                "locations": [],
            },
        }
    ]


def test_update_for_unknown_id_creates_the_call() -> None:
    session = new_session()
    out = session.apply_update(
        {"sessionUpdate": "tool_call_update", "toolCallId": "late", "status": "in_progress"}
    )
    assert out[0]["toolCall"] == {
        "toolCallId": "late",
        "title": "",
        "kind": "other",
        "status": "in_progress",
        "content": [],
        "locations": [],
    }
    assert session.snapshot()["timeline"] == [{"toolCall": "late"}]


def test_omitted_keeps_null_clears_value_replaces() -> None:
    session = new_session()
    diff = {"type": "diff", "path": "/w/a.py", "oldText": None, "newText": "x"}
    session.apply_update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t",
            "title": "Edit a.py",
            "kind": "edit",
            "status": "in_progress",
            "content": [diff],
            "locations": [{"path": "/w/a.py", "line": 3}],
            "rawInput": {"path": "/w/a.py"},
            "_meta": {"vendor": True},
        }
    )
    out = session.apply_update(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t",
            "title": None,
            "kind": None,
            "status": None,
            "content": None,
            "locations": [],
            "rawInput": None,
            "rawOutput": {"ok": True},
        }
    )
    expected = {
        "toolCallId": "t",
        "title": "",
        "kind": "other",
        "status": "pending",
        "content": [],
        "locations": [],
        "_meta": {"vendor": True},
        "rawOutput": {"ok": True},
    }
    assert out[0]["toolCall"] == expected
    assert session.tool_call("t") == expected
    session.apply_update({"sessionUpdate": "tool_call_update", "toolCallId": "t", "_meta": None})
    assert "_meta" not in (session.tool_call("t") or {})


def test_content_and_locations_replace_whole_arrays() -> None:
    session = new_session()
    a = {"type": "content", "content": text("a")}
    b = {"type": "content", "content": text("b")}
    session.apply_update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t",
            "title": "x",
            "content": [a, b],
            "locations": [{"path": "/1"}, {"path": "/2"}],
        }
    )
    out = session.apply_update(
        {"sessionUpdate": "tool_call_update", "toolCallId": "t", "content": [b], "locations": []}
    )
    assert out[0]["toolCall"]["content"] == [b]
    assert out[0]["toolCall"]["locations"] == []
    assert "contentAppend" not in out[0]


def test_content_chunk_is_sent_as_an_append() -> None:
    session = new_session()
    session.apply_update(
        {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Run", "kind": "execute"}
    )
    item = {"type": "terminal", "terminalId": "term-1"}
    out = session.apply_update(
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t", "content": item}
    )
    assert out == [
        {
            "sessionUpdate": "tool_call",
            "toolCall": {
                "toolCallId": "t",
                "title": "Run",
                "kind": "execute",
                "status": "pending",
                "locations": [],
            },
            "contentAppend": [item],
        }
    ]
    assert (session.tool_call("t") or {})["content"] == [item]


def test_content_chunk_for_unknown_id_creates_with_full_state() -> None:
    session = new_session()
    item = {"type": "content", "content": text("x")}
    out = session.apply_update(
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "new", "content": item}
    )
    assert "contentAppend" not in out[0]
    assert out[0]["toolCall"]["content"] == [item]


def test_v1_update_that_only_grows_content_is_sent_as_an_append() -> None:
    rec = Recorder()
    a = {"type": "content", "content": text("line 1")}
    b = {"type": "content", "content": text("line 2")}
    rec.apply({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x", "content": [a]})
    out = rec.apply(
        {"sessionUpdate": "tool_call_update", "toolCallId": "t", "title": "x", "content": [a, b]}
    )
    assert out[0]["contentAppend"] == [b]
    assert "content" not in out[0]["toolCall"]
    # Growing content together with another change is a full update.
    c = {"type": "content", "content": text("line 3")}
    out = rec.apply(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t",
            "status": "completed",
            "content": [a, b, c],
        }
    )
    assert "contentAppend" not in out[0]
    assert out[0]["toolCall"]["content"] == [a, b, c]
    rec.consistent()


def test_unknown_kinds_statuses_content_types_and_fields_are_kept_verbatim() -> None:
    rec = Recorder()
    odd = {"type": "_acme/chart", "series": [1, 2, 3]}
    rec.apply(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t",
            "title": "Plot",
            "kind": "_acme_plot",
            "status": "_queued",
            "content": [odd],
            "name": "plot_tool",
            "_meta": {"acme": {"x": 1}},
        }
    )
    state = rec.session.tool_call("t")
    assert state is not None
    assert state["kind"] == "_acme_plot"
    assert state["status"] == "_queued"
    assert state["content"] == [odd]
    assert state["name"] == "plot_tool"
    assert state["_meta"] == {"acme": {"x": 1}}
    rec.consistent()


def test_returned_updates_do_not_change_when_the_call_changes_later() -> None:
    session = new_session()
    held = session.apply_update(
        {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x", "content": []}
    )
    appended = session.apply_update(
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "t",
            "content": {"type": "content", "content": text("1")},
        }
    )
    frozen = json.dumps([held, appended])
    snap = session.snapshot()
    frozen_snap = json.dumps(snap)
    for i in range(3):
        session.apply_update(
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "t",
                "content": {"type": "content", "content": text(str(i))},
            }
        )
    session.apply_update({"sessionUpdate": "tool_call_update", "toolCallId": "t", "title": "y"})
    session.apply_update(chunk("more"))
    assert json.dumps([held, appended]) == frozen
    assert json.dumps(snap) == frozen_snap


def test_tool_calls_are_listed_in_creation_order() -> None:
    session = new_session()
    for tool_call_id in ["c", "a", "b"]:
        session.apply_update(
            {"sessionUpdate": "tool_call", "toolCallId": tool_call_id, "title": ""}
        )
    session.apply_update(
        {"sessionUpdate": "tool_call_update", "toolCallId": "a", "status": "failed"}
    )
    snap = session.snapshot()
    assert [c["toolCallId"] for c in snap["toolCalls"]] == ["c", "a", "b"]
    assert snap["timeline"] == [{"toolCall": "c"}, {"toolCall": "a"}, {"toolCall": "b"}]


def test_permission_tool_call_merges_into_the_stored_call() -> None:
    session = new_session()
    session.apply_update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "call_2",
            "title": "Modify config",
            "kind": "edit",
            "locations": [{"path": "/project/config.json"}],
        }
    )
    out = session.upsert_tool_call(
        {"toolCallId": "call_2", "locations": [{"path": "/home/user/project/config.json"}]}
    )
    assert out[0]["toolCall"]["title"] == "Modify config"
    assert out[0]["toolCall"]["locations"] == [{"path": "/home/user/project/config.json"}]


def test_set_review_shows_on_the_call() -> None:
    session = new_session()
    session.apply_update({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Edit"})
    out = session.set_review("t", {"status": "accepted", "files": ["/w/a.py"]})
    assert out[0]["toolCall"]["review"] == {"status": "accepted", "files": ["/w/a.py"]}
    assert (session.tool_call("t") or {})["review"]["status"] == "accepted"
    assert session.set_review("missing", {"status": "accepted"}) == []


# -- turns --------------------------------------------------------------------------------


def call(tool_call_id: str, status: JSON) -> dict[str, JSON]:
    return {"sessionUpdate": "tool_call", "toolCallId": tool_call_id, "title": "", "status": status}


def test_finish_turn_finalizes_only_unfinished_calls_of_this_turn() -> None:
    rec = Recorder()
    rec.apply(call("old", "in_progress"))
    rec.session.begin_turn()
    rec.apply(
        call("p", "pending"),
        call("i", "in_progress"),
        call("c", "completed"),
        call("f", "failed"),
        call("x", "_custom"),
        call("weird", {"not": "a string"}),
    )
    finished = rec(rec.session.finish_turn("cancelled"))
    assert [u["toolCall"]["toolCallId"] for u in finished] == ["p", "i"]
    statuses = {c["toolCallId"]: c["status"] for c in rec.session.snapshot()["toolCalls"]}
    assert statuses == {
        "old": "in_progress",
        "p": "cancelled",
        "i": "cancelled",
        "c": "completed",
        "f": "failed",
        "x": "_custom",
        "weird": {"not": "a string"},
    }
    rec.consistent()


def test_finish_turn_with_another_final_status() -> None:
    session = new_session()
    session.begin_turn()
    session.apply_update(call("p", "pending"))
    out = session.finish_turn("failed")
    assert out[0]["toolCall"]["status"] == "failed"


def test_an_update_of_an_older_call_joins_the_running_turn() -> None:
    session = new_session()
    session.apply_update(call("old", "completed"))
    session.begin_turn()
    assert session.turn_tool_call_ids() == []
    session.apply_update(
        {"sessionUpdate": "tool_call_update", "toolCallId": "old", "status": "in_progress"}
    )
    session.apply_update(call("new", "pending"))
    assert session.turn_tool_call_ids() == ["old", "new"]
    assert len(session.finish_turn()) == 2
    assert session.turn_tool_call_ids() == ["old", "new"]  # still "the last turn"
    session.begin_turn()
    assert session.turn_tool_call_ids() == []


def test_cancel_unfinished_keeps_the_turn_going() -> None:
    session = new_session()
    session.begin_turn()
    session.apply_update(call("a", "in_progress"))
    out = session.cancel_unfinished()
    assert [u["toolCall"]["status"] for u in out] == ["cancelled"]
    # The agent keeps sending until it answers; a call it starts now is still finalized.
    session.apply_update(call("b", "pending"))
    session.apply_update(
        {"sessionUpdate": "tool_call_update", "toolCallId": "a", "status": "completed"}
    )
    assert [u["toolCall"]["toolCallId"] for u in session.finish_turn()] == ["b"]
    assert (session.tool_call("a") or {})["status"] == "completed"


# -- other variants -----------------------------------------------------------------------


def test_plan_commands_config_usage_are_stored_and_returned_as_received() -> None:
    rec = Recorder()
    plan = {
        "sessionUpdate": "plan",
        "entries": [{"content": "a", "priority": "high", "status": "pending"}],
    }
    plan2 = {
        "sessionUpdate": "plan",
        "entries": [{"content": "b", "priority": "low", "status": "_blocked"}],
    }
    commands = {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [{"name": "web", "description": "search", "input": {"hint": "q"}}],
    }
    config = {
        "sessionUpdate": "config_option_update",
        "configOptions": [
            {"id": "model", "name": "Model", "type": "select", "currentValue": "x", "options": []}
        ],
    }
    usage = {
        "sessionUpdate": "usage_update",
        "used": 10,
        "size": 100,
        "cost": {"amount": 1, "currency": "EUR"},
    }
    for update in [plan, plan2, commands, config, usage]:
        assert rec.apply(update)[0] is update
    snap = rec.session.snapshot()
    assert snap["plan"] == {"entries": plan2["entries"]}
    assert snap["commands"] == commands["availableCommands"]
    assert snap["configOptions"] == config["configOptions"]
    assert snap["usage"] == {"used": 10, "size": 100, "cost": {"amount": 1, "currency": "EUR"}}
    rec.consistent()


def test_invalid_usage_is_kept_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    session = new_session()
    with caplog.at_level(logging.WARNING):
        out = session.apply_update({"sessionUpdate": "usage_update", "used": None, "size": 5})
    assert out[0]["used"] is None
    assert session.snapshot()["usage"] == {"used": None, "size": 5}
    assert "usage_update" in caplog.text


def test_session_info_update_is_a_patch() -> None:
    rec = Recorder()
    rec.apply(
        {
            "sessionUpdate": "session_info_update",
            "title": "Fix bug",
            "updatedAt": "2026-01-01T00:00:00Z",
        }
    )
    rec.apply({"sessionUpdate": "session_info_update", "updatedAt": "2026-01-02T00:00:00Z"})
    assert rec.session.title == "Fix bug"
    assert rec.session.updated_at == "2026-01-02T00:00:00Z"
    rec.consistent()
    rec.apply({"sessionUpdate": "session_info_update", "title": None})
    snap = rec.session.snapshot()
    assert "title" not in snap
    assert snap["updatedAt"] == "2026-01-02T00:00:00Z"
    rec.consistent()


def test_modes_current_mode_update_and_the_mode_id_typo() -> None:
    rec = Recorder()
    modes = {
        "currentModeId": "ask",
        "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
    }
    rec.session.set_modes(modes)
    rec.editor = EditorModel(rec.session.snapshot())
    standard = {"sessionUpdate": "current_mode_update", "currentModeId": "code"}
    assert rec.apply(standard)[0] is standard
    assert rec.session.snapshot()["modes"] == {**modes, "currentModeId": "code"}
    # The docs' typo: accepted, and editors get the schema's field too.
    typo = {"sessionUpdate": "current_mode_update", "modeId": "ask", "_meta": {"m": 1}}
    out = rec.apply(typo)
    assert out == [{**typo, "currentModeId": "ask"}]
    assert rec.session.snapshot()["modes"]["currentModeId"] == "ask"
    assert rec(rec.session.set_current_mode("code")) == [standard]
    assert rec.session.snapshot()["modes"]["availableModes"] == modes["availableModes"]
    assert modes["currentModeId"] == "ask"  # the caller's dict is not changed
    rec.consistent()


def test_set_config_options_and_terminals_show_in_snapshot() -> None:
    session = new_session()
    options = [{"id": "effort", "name": "Effort", "type": "boolean", "currentValue": True}]
    session.set_config_options(options)
    session.set_terminal("term-1", "make: ok\n", False, {"exitCode": 0, "signal": None})
    session.set_terminal("term-2", "…tail", True, None)
    snap = session.snapshot()
    assert snap["configOptions"] == options
    assert snap["terminals"] == {
        "term-1": {
            "output": "make: ok\n",
            "truncated": False,
            "exitStatus": {"exitCode": 0, "signal": None},
        },
        "term-2": {"output": "…tail", "truncated": True},
    }
    session.set_config_options(None)
    assert "configOptions" not in session.snapshot()


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "_acme/progress", "percent": 40},
        {"sessionUpdate": "notice", "severity": "_loud", "title": "Heads up"},
        {"sessionUpdate": "state_update", "state": "running"},
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "markdown", "planId": "p", "text": "# x"},
        },
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "aGk="},
    ],
)
def test_unknown_variants_pass_through_unchanged(update: dict[str, JSON]) -> None:
    session = new_session()
    before = copy.deepcopy(update)
    out = session.apply_update(update)
    assert out == [update]
    assert out[0] is update
    assert update == before


# -- malformed payloads -------------------------------------------------------------------


@pytest.mark.parametrize(
    "update",
    [
        None,
        "agent_message_chunk",
        [{"sessionUpdate": "plan"}],
        {},
        {"sessionUpdate": 7},
        {"sessionUpdate": "tool_call", "title": "no id"},
        {"sessionUpdate": "tool_call_update", "toolCallId": 12},
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t"},
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t", "content": "text"},
    ],
)
def test_malformed_updates_are_logged_and_dropped(
    update: JSON, caplog: pytest.LogCaptureFixture
) -> None:
    session = new_session()
    with caplog.at_level(logging.WARNING):
        assert session.apply_update(update) == []
    assert caplog.records
    snap = session.snapshot()
    assert snap["messages"] == [] and snap["toolCalls"] == [] and snap["timeline"] == []


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "agent_message_chunk"},
        {"sessionUpdate": "agent_message_chunk", "content": "bare string"},
        {"sessionUpdate": "agent_message", "content": [text("no id")]},
        {"sessionUpdate": "plan", "entries": "soon"},
        {"sessionUpdate": "available_commands_update", "availableCommands": None},
        {"sessionUpdate": "config_option_update"},
        {"sessionUpdate": "current_mode_update"},
        {"sessionUpdate": "session_info_update", "title": 5},
    ],
)
def test_malformed_known_variants_pass_through_without_being_stored(update: JSON) -> None:
    session = new_session()
    assert session.apply_update(update) == [update]
    snap = session.snapshot()
    assert snap["messages"] == []
    assert not {"plan", "commands", "configOptions", "modes", "title"} & snap.keys()


def test_bad_field_shapes_do_not_break_the_call() -> None:
    session = new_session()
    session.apply_update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t",
            "title": "x",
            "content": "oops",
            "locations": {},
        }
    )
    state = session.tool_call("t")
    assert state is not None
    assert state["content"] == [] and state["locations"] == []
    session.apply_update(chunk("fine", messageId=42))
    assert session.message_text(0) == "fine"


# -- snapshot -----------------------------------------------------------------------------


def test_snapshot_has_exactly_the_design_shape() -> None:
    session = Session("s9", "claude", "/w", ["/extra"])
    session.status = "running"
    session.seq = 4
    session.add_user_prompt([text("hi")])
    session.apply_update(chunk("hello", message_id="a1"))
    session.apply_update({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read"})
    assert session.snapshot() == {
        "sessionId": "s9",
        "agent": "claude",
        "cwd": "/w",
        "status": "running",
        "seq": 4,
        "messages": [
            {"messageId": "acp-lsp:prompt:1", "role": "user", "content": [text("hi")]},
            {"messageId": "a1", "role": "agent", "content": [text("hello")]},
        ],
        "toolCalls": [
            {
                "toolCallId": "t1",
                "title": "Read",
                "kind": "other",
                "status": "pending",
                "content": [],
                "locations": [],
            }
        ],
        "timeline": [{"message": 0}, {"message": 1}, {"toolCall": "t1"}],
        "additionalDirectories": ["/extra"],
    }


def test_empty_session_snapshot_omits_optional_keys() -> None:
    snap = Session("s", "demo", "/w").snapshot()
    assert snap == {
        "sessionId": "s",
        "agent": "demo",
        "cwd": "/w",
        "status": "idle",
        "seq": 0,
        "messages": [],
        "toolCalls": [],
        "timeline": [],
    }


def test_an_editor_starting_from_a_snapshot_catches_up_with_later_updates() -> None:
    rec = Recorder()
    rec.apply(chunk("part 1 "), {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x"})
    editor = EditorModel(rec.session.snapshot())
    later = rec.apply(
        chunk("part 2"),
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "t",
            "content": {"type": "content", "content": text("out")},
        },
    )
    editor.apply_all(later)
    assert editor.view() == view_of(rec.session.snapshot())


def test_many_sessions_stay_small() -> None:
    """10 sessions x 1 000 items (chunks and tool calls) in well under 20 MB."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        sessions = []
        for s in range(10):
            session = Session(f"s{s}", "demo", "/w")
            for i in range(250):
                session.apply_update(chunk(f"token {i} "))
                tool_call_id = f"call-{i}"
                session.apply_update(
                    {
                        "sessionUpdate": "tool_call",
                        "toolCallId": tool_call_id,
                        "title": f"Read file {i}",
                        "kind": "read",
                        "locations": [{"path": f"/w/src/file_{i}.py", "line": 1}],
                    }
                )
                session.apply_update(
                    {
                        "sessionUpdate": "tool_call_content_chunk",
                        "toolCallId": tool_call_id,
                        "content": {"type": "content", "content": text("x" * 100)},
                    }
                )
                session.apply_update(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": tool_call_id,
                        "status": "completed",
                    }
                )
            sessions.append(session)
        used = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert used < 20 * 1024 * 1024, f"{used / 1e6:.1f} MB"
    assert len(sessions[0].snapshot()["toolCalls"]) == 250
