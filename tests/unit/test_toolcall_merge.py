"""Hypothesis properties of the session model's merge rules (DESIGN §2, §3).

1. Random tool_call / tool_call_update / tool_call_content_chunk / permission patches (and turn
   ends) give the same states as a naive reference model of the upsert rule.
2. An editor that applies the returned updates (replace, or keep content and append for
   ``contentAppend``), JSON-serialised only after everything was applied, ends with exactly
   ``session.tool_call(id)`` for every call, in creation order.
3. Message text reassembles exactly, in order, for random chunkings, roles and messageIds.
4. Unknown keys and variants survive verbatim into updates and the snapshot.
"""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from acp_lsp.session import Session
from tests.support.editor_model import EditorModel, view_of

JSON = Any

# No deadline: the machine is shared, and a slow example is not a wrong one.
merge_settings = settings(deadline=None, max_examples=100)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
ids = st.sampled_from(["a", "b", "c"])
content_items = st.one_of(
    st.builds(
        lambda t: {"type": "content", "content": {"type": "text", "text": t}}, st.text(max_size=3)
    ),
    st.builds(
        lambda p, old, new: {"type": "diff", "path": p, "oldText": old, "newText": new},
        st.sampled_from(["/w/a.py", "/w/b.py"]),
        st.none() | st.text(max_size=3),
        st.text(max_size=3),
    ),
    st.builds(lambda t: {"type": "terminal", "terminalId": t}, st.sampled_from(["t1", "t2"])),
    st.builds(lambda v: {"type": "_acme/chart", "data": v}, json_values),
)
locations = st.builds(
    lambda p, line: {"path": p} if line is None else {"path": p, "line": line},
    st.sampled_from(["/w/a.py", "/w/b.py", "rel/c.py"]),
    st.none() | st.integers(0, 9),
)
# Every field a patch may carry; None (null) clears. The values repeat often on purpose, so
# that "set to the same value" and "content only grew" happen.
field_values: dict[str, st.SearchStrategy[JSON]] = {
    "title": st.none() | st.sampled_from(["Read", "Edit", ""]),
    "kind": st.none() | st.sampled_from(["read", "edit", "execute", "other", "_acme_kind"]),
    "status": st.none()
    | st.sampled_from(["pending", "in_progress", "completed", "failed", "cancelled", "_queued"]),
    "content": st.none() | st.lists(content_items, max_size=3),
    "locations": st.none() | st.lists(locations, max_size=2),
    "rawInput": json_values,
    "rawOutput": json_values,
    "_meta": st.none() | st.dictionaries(st.sampled_from(["x", "y"]), json_values, max_size=2),
    "name": st.none() | st.sampled_from(["grep", "_custom"]),
}


@st.composite
def patch_fields(draw: st.DrawFn) -> dict[str, JSON]:
    keys = draw(st.lists(st.sampled_from(sorted(field_values)), unique=True, max_size=4))
    return {key: draw(field_values[key]) for key in keys}


@st.composite
def operations(draw: st.DrawFn) -> tuple[str, JSON]:
    kind = draw(
        st.sampled_from(
            [
                "tool_call",
                "tool_call_update",
                "chunk",
                "permission",
                "grow",
                "turn",
                "finish",
                "cancel",
            ]
        )
    )
    tool_call_id = draw(ids)
    if kind == "tool_call":
        fields = draw(patch_fields())
        return kind, {
            "sessionUpdate": "tool_call",
            "toolCallId": tool_call_id,
            "title": "T",
            **fields,
        }
    if kind == "tool_call_update":
        fields = draw(patch_fields())
        return kind, {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, **fields}
    if kind == "chunk":
        item = draw(content_items)
        return kind, {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": tool_call_id,
            "content": item,
        }
    if kind == "permission":
        return kind, {"toolCallId": tool_call_id, **draw(patch_fields())}
    if kind == "grow":
        # A v1 agent resending the whole, grown content array (resolved against the model).
        return kind, (tool_call_id, draw(st.lists(content_items, min_size=1, max_size=2)))
    if kind == "finish":
        return kind, draw(st.sampled_from(["cancelled", "failed", "completed"]))
    return kind, None


# -- the reference model ----------------------------------------------------------------------

DEFAULTS: dict[str, JSON] = {"title": "", "kind": "other", "status": "pending"}


class Reference:
    """The upsert rule written as plainly as possible (deep copies everywhere)."""

    def __init__(self) -> None:
        self.calls: dict[str, dict[str, JSON]] = {}
        self.turn: list[str] = []

    def _get(self, tool_call_id: str) -> dict[str, JSON]:
        if tool_call_id not in self.calls:
            self.calls[tool_call_id] = {
                "toolCallId": tool_call_id,
                **DEFAULTS,
                "content": [],
                "locations": [],
            }
        if tool_call_id not in self.turn:
            self.turn.append(tool_call_id)
        return self.calls[tool_call_id]

    def upsert(self, fields: dict[str, JSON]) -> None:
        state = self._get(fields["toolCallId"])
        for key, value in copy.deepcopy(fields).items():
            if key in ("toolCallId", "sessionUpdate"):
                continue
            if value is not None:
                state[key] = value
            elif key in DEFAULTS:
                state[key] = DEFAULTS[key]
            elif key in ("content", "locations"):
                state[key] = []
            else:
                state.pop(key, None)

    def append(self, tool_call_id: str, item: JSON) -> None:
        state = self._get(tool_call_id)
        state["content"] = [*state["content"], copy.deepcopy(item)]

    def finish(self, status: str) -> None:
        for tool_call_id in self.turn:
            if self.calls[tool_call_id]["status"] in ("pending", "in_progress"):
                self.calls[tool_call_id]["status"] = status


def run(session: Session, ref: Reference, op: tuple[str, JSON]) -> list[dict[str, JSON]]:
    kind, payload = op
    if kind in ("tool_call", "tool_call_update"):
        ref.upsert(payload)
        return session.apply_update(payload)
    if kind == "chunk":
        ref.append(payload["toolCallId"], payload["content"])
        return session.apply_update(payload)
    if kind == "permission":
        ref.upsert(payload)
        return session.upsert_tool_call(payload)
    if kind == "grow":
        tool_call_id, extra = payload
        current = ref.calls.get(tool_call_id, {}).get("content", [])
        update = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": tool_call_id,
            "content": current + extra,
        }
        ref.upsert(update)
        return session.apply_update(update)
    if kind == "turn":
        ref.turn = []
        session.begin_turn()
        return []
    if kind == "finish":
        ref.finish(payload)
        return session.finish_turn(payload)
    ref.finish("cancelled")
    return session.cancel_unfinished()


def as_json(value: JSON) -> JSON:
    return json.loads(json.dumps(value))


# -- properties -----------------------------------------------------------------------------


@merge_settings
@given(st.lists(operations(), max_size=25))
def test_merge_matches_the_reference_model(ops: list[tuple[str, JSON]]) -> None:
    session = Session("s", "demo", "/w")
    ref = Reference()
    for op in ops:
        run(session, ref, op)
        for tool_call_id, expected in ref.calls.items():
            assert as_json(session.tool_call(tool_call_id)) == as_json(expected)
    snap = session.snapshot()
    assert [c["toolCallId"] for c in snap["toolCalls"]] == list(ref.calls)
    assert snap["timeline"] == [{"toolCall": i} for i in ref.calls]
    assert session.turn_tool_call_ids() == ref.turn


@merge_settings
@given(st.lists(operations(), max_size=25))
def test_editor_applying_the_updates_ends_with_the_session_state(
    ops: list[tuple[str, JSON]],
) -> None:
    session = Session("s", "demo", "/w")
    ref = Reference()
    sent: list[dict[str, JSON]] = []
    for op in ops:
        sent.extend(run(session, ref, op))
    # Serialise only now, as a batcher would: later changes must not leak into held updates.
    editor = EditorModel(wire=True)
    for update in sent:
        assert update["sessionUpdate"] == "tool_call"
        assert ("contentAppend" in update) == ("content" not in update["toolCall"])
        editor.apply(update)
    assert list(editor.tool_calls) == [c["toolCallId"] for c in session.tool_calls()]
    for tool_call_id, state in editor.tool_calls.items():
        assert state == as_json(session.tool_call(tool_call_id))
    assert editor.view() == view_of(session.snapshot())


@merge_settings
@given(st.lists(operations(), max_size=25), st.integers(0, 25))
def test_editor_starting_from_a_mid_stream_snapshot_converges(
    ops: list[tuple[str, JSON]], cut: int
) -> None:
    session = Session("s", "demo", "/w")
    ref = Reference()
    for op in ops[:cut]:
        run(session, ref, op)
    editor = EditorModel(session.snapshot())
    for op in ops[cut:]:
        editor.apply_all(run(session, ref, op))
    assert editor.view() == view_of(session.snapshot())


# -- messages -------------------------------------------------------------------------------

ROLE_KINDS = {
    "agent": "agent_message_chunk",
    "thought": "agent_thought_chunk",
    "user": "user_message_chunk",
}


@st.composite
def chunked_stream(draw: st.DrawFn) -> list[tuple[str, str | None, str]]:
    """(role, messageId | None, text) chunks; messages are random texts cut at random points."""
    stream: list[tuple[str, str | None, str]] = []
    for _ in range(draw(st.integers(1, 6))):
        role = draw(st.sampled_from(sorted(ROLE_KINDS)))
        message_id = draw(st.none() | st.sampled_from(["m1", "m2", "m3"]))
        whole = draw(st.text(max_size=30))
        cuts = sorted(draw(st.lists(st.integers(0, len(whole)), max_size=5)))
        bounds = [0, *cuts, len(whole)]
        stream.extend((role, message_id, whole[a:b]) for a, b in itertools.pairwise(bounds))
    return stream


def expected_messages(
    stream: list[tuple[str, str | None, str | int]],
) -> tuple[list[tuple[str, str | None, str]], list[JSON]]:
    """The chunk rule, spelled out: [(role, messageId, text)] and the timeline."""
    messages: list[list[Any]] = []
    timeline: list[JSON] = []
    for role, message_id, piece in stream:
        if role == "tool":
            timeline.append({"toolCall": piece})
            continue
        target = None
        if message_id is not None:
            target = next(
                (i for i, m in enumerate(messages) if m[0] == role and m[1] == message_id), None
            )
        elif (
            timeline and "message" in timeline[-1] and messages[timeline[-1]["message"]][0] == role
        ):
            target = timeline[-1]["message"]
        if target is None:
            messages.append([role, message_id, ""])
            target = len(messages) - 1
            timeline.append({"message": target})
        messages[target][2] += piece
    return [(r, i, t) for r, i, t in messages], timeline


@merge_settings
@given(chunked_stream(), st.lists(st.integers(0, 40), max_size=3))
def test_message_text_reassembles_exactly(
    stream: list[tuple[str, str | None, str]], tool_positions: list[int]
) -> None:
    events: list[tuple[str, str | None, Any]] = list(stream)
    for n, position in enumerate(sorted(tool_positions, reverse=True)):
        events.insert(min(position, len(events)), ("tool", None, f"t{n}"))
    session = Session("s", "demo", "/w")
    editor = EditorModel()
    for role, message_id, piece in events:
        if role == "tool":
            update: dict[str, JSON] = {
                "sessionUpdate": "tool_call",
                "toolCallId": piece,
                "title": "",
            }
        else:
            update = {"sessionUpdate": ROLE_KINDS[role], "content": {"type": "text", "text": piece}}
            if message_id is not None:
                update["messageId"] = message_id
        editor.apply_all(session.apply_update(update))
    messages, timeline = expected_messages(events)
    snap = session.snapshot()
    assert snap["timeline"] == timeline
    assert [
        (m["role"], m.get("messageId"), session.message_text(i))
        for i, m in enumerate(snap["messages"])
    ] == messages
    # Plain text chunks of one message always end up as one text block.
    for (_, _, text), message in zip(messages, snap["messages"], strict=True):
        assert message["content"] == [{"type": "text", "text": text}]
    assert editor.view() == view_of(snap)


@merge_settings
@given(st.lists(st.text(max_size=8), min_size=1, max_size=6), st.data())
def test_prompt_echo_in_any_chunking_is_not_stored_twice(
    pieces: list[str], data: st.DataObject
) -> None:
    prompt_text = "".join(pieces)
    session = Session("s", "demo", "/w")
    editor = EditorModel()
    editor.apply_all(session.add_user_prompt([{"type": "text", "text": p} for p in pieces]))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(prompt_text)), max_size=4)))
    bounds = [0, *cuts, len(prompt_text)]
    for a, b in itertools.pairwise(bounds):
        echoed = {
            "sessionUpdate": "user_message_chunk",
            "content": {"type": "text", "text": prompt_text[a:b]},
        }
        editor.apply_all(session.apply_update(echoed))
    editor.apply_all(
        session.apply_update(
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "ok"}}
        )
    )
    texts = [session.message_text(i) for i in range(session.message_count())]
    assert texts == [prompt_text, "ok"]
    assert editor.view() == view_of(session.snapshot())


# -- unknown keys and variants ------------------------------------------------------------------

unknown_keys = st.text(min_size=1, max_size=6).map(lambda k: "_" + k)


@merge_settings
@given(
    st.text(min_size=1, max_size=8)
    .filter(lambda k: k not in ROLE_KINDS.values())
    .map(lambda k: "_" + k),
    st.dictionaries(unknown_keys, json_values, max_size=4),
)
def test_unknown_variants_pass_through_verbatim(variant: str, body: dict[str, JSON]) -> None:
    update = {"sessionUpdate": variant, **body}
    before = copy.deepcopy(update)
    session = Session("s", "demo", "/w")
    assert session.apply_update(update) == [before]
    assert update == before


@merge_settings
@given(
    st.dictionaries(unknown_keys, json_values, min_size=1, max_size=4),
    st.dictionaries(unknown_keys, json_values, max_size=3),
    json_values,
)
def test_unknown_fields_survive_into_updates_and_snapshot(
    call_extra: dict[str, JSON], block_extra: dict[str, JSON], raw: JSON
) -> None:
    session = Session("s", "demo", "/w")
    item = {"type": "_acme/widget", **block_extra, "payload": raw}
    block = {"type": "_acme/block", **block_extra, "value": raw}
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "x",
        "kind": "_acme_kind",
        "status": "_acme_status",
        **call_extra,
        "content": [item],
    }
    out = session.apply_update(update)
    for key, value in call_extra.items():
        if value is not None:  # null clears, as for any field
            assert out[0]["toolCall"][key] == value
            assert session.snapshot()["toolCalls"][0][key] == value
    assert out[0]["toolCall"]["content"] == [item]
    session.apply_update({"sessionUpdate": "agent_message_chunk", "content": block, **call_extra})
    snap = as_json(session.snapshot())
    assert snap["messages"][0]["content"] == [as_json(block)]
    assert snap["toolCalls"][0]["kind"] == "_acme_kind"
    assert snap["toolCalls"][0]["status"] == "_acme_status"
    assert snap["toolCalls"][0]["content"] == [as_json(item)]


block_shapes = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=4)),
    st.builds(lambda t: {"type": "text", "text": t, "_meta": {"k": 1}}, st.text(max_size=4)),
    st.builds(
        lambda t, a: {"type": "text", "text": t, "annotations": {"audience": [a]}},
        st.text(max_size=4),
        st.sampled_from(["user", "assistant"]),
    ),
    st.just({"type": "resource_link", "uri": "file:///w/a.py", "name": "a.py"}),
    st.just({"type": "text", "text": None}),  # malformed text: kept as an opaque block
)


@merge_settings
@given(st.lists(st.tuples(st.sampled_from(["agent", "user"]), block_shapes), max_size=20))
def test_mixed_blocks_match_the_editor_and_keep_all_text(
    chunks: list[tuple[str, dict[str, JSON]]],
) -> None:
    session = Session("s", "demo", "/w")
    editor = EditorModel()
    for role, block in chunks:
        editor.apply_all(
            session.apply_update({"sessionUpdate": ROLE_KINDS[role], "content": block})
        )
    snap = session.snapshot()
    assert editor.view() == view_of(snap)
    all_text = "".join(
        b["text"] for _, b in chunks if b["type"] == "text" and isinstance(b["text"], str)
    )
    assert "".join(session.message_text(i) for i in range(session.message_count())) == all_text
    for message in snap["messages"]:
        for left, right in itertools.pairwise(message["content"]):
            joinable = left.get("type") == right.get("type") == "text" and all(
                isinstance(b.get("text"), str) for b in (left, right)
            )
            if joinable:  # adjacent text blocks only survive when their extras differ
                assert {k: v for k, v in left.items() if k != "text"} != {
                    k: v for k, v in right.items() if k != "text"
                }
