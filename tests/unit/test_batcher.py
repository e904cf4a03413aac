"""UpdateBatcher (acp_lsp.editor.batcher): order, safe joining, seq per session, hold/release.

Flushes are driven explicitly (a long window that never fires in a test) or, for the timer
and release paths, with a zero window and explicit turns of the event loop: no sleeps.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_lsp.editor.batcher import BURST, UpdateBatcher
from acp_lsp.session import Session

JsonObject = dict[str, Any]
METHOD = "acp/sessionUpdate"


class Sink:
    def __init__(self) -> None:
        self.sent: list[JsonObject] = []
        self.events: list[str] = []

    def __call__(self, method: str, params: JsonObject) -> None:
        assert method == METHOD
        # the batcher hands the params over: later publishing must not change what was sent
        self.sent.append(json.loads(json.dumps(params)))
        self.events.append(f"notify {params['sessionId']} {params['seq']}")

    def updates(self, session_id: str | None = None) -> list[JsonObject]:
        return [u for n in self.sent if session_id in (None, n["sessionId"]) for u in n["updates"]]


def chunk(text: str, kind: str = "agent_message_chunk", **extra: Any) -> JsonObject:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}, **extra}


def tool(tool_call_id: str) -> JsonObject:
    return {"sessionUpdate": "tool_call", "toolCall": {"toolCallId": tool_call_id}}


async def turns(n: int = 4) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


@pytest.fixture
def sink() -> Sink:
    return Sink()


@pytest.fixture
def batcher(sink: Sink) -> UpdateBatcher:
    return UpdateBatcher(sink, METHOD, flush_s=3600, adaptive=False)


def test_adjacent_text_of_one_message_is_joined_in_order(
    batcher: UpdateBatcher, sink: Sink
) -> None:
    s = Session("s", "demo", "/w")
    batcher.publish(s, [chunk("Hel", messageId="m"), chunk("lo", messageId="m")])
    batcher.publish(s, [chunk(", world", messageId="m")])
    batcher.flush(s)
    assert sink.sent == [
        {"sessionId": "s", "seq": 1, "updates": [chunk("Hello, world", messageId="m")]}
    ]
    assert s.seq == 1


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (chunk("a", messageId="m1"), chunk("b", messageId="m2")),  # another message
        (chunk("a", messageId="m"), chunk("b")),  # with and without an id
        (chunk("a"), chunk("b", kind="agent_thought_chunk")),  # another kind
        (chunk("a", kind="user_message_chunk"), chunk("b")),
        # anything beyond a bare text chunk is kept exactly as sent
        (chunk("a"), chunk("b", _meta={"x": 1})),
        (
            chunk("a"),
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "b", "annotations": {"priority": 1}},
            },
        ),
        (
            chunk("a"),
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "image", "data": "AA==", "mimeType": "image/png"},
            },
        ),
        (
            chunk("a"),
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": 5}},
        ),
        (chunk("a"), {"sessionUpdate": "agent_message_chunk", "content": "b"}),
        (chunk("a"), {"sessionUpdate": "plan", "entries": []}),
    ],
)
def test_joining_only_when_safe(
    batcher: UpdateBatcher, sink: Sink, first: JsonObject, second: JsonObject
) -> None:
    s = Session("s", "demo", "/w")
    batcher.publish(s, [first, second])
    batcher.flush(s)
    assert sink.updates() == [first, second]


def test_a_tool_call_between_text_chunks_splits_them(batcher: UpdateBatcher, sink: Sink) -> None:
    s = Session("s", "demo", "/w")
    batcher.publish(s, [chunk("a"), chunk("b"), tool("t"), chunk("c"), chunk("d")])
    batcher.flush(s)
    assert sink.updates() == [chunk("ab"), tool("t"), chunk("cd")]


def test_updates_already_sent_are_not_changed_by_later_joins(sink: Sink) -> None:
    sent: list[JsonObject] = []
    batcher = UpdateBatcher(
        lambda _m, params: sent.append(params), METHOD, flush_s=3600, adaptive=False
    )
    s = Session("s", "demo", "/w")
    batcher.publish(s, [chunk("a")])
    batcher.flush(s)
    batcher.publish(s, [chunk("b")])
    batcher.flush(s)
    assert [n["updates"] for n in sent] == [[chunk("a")], [chunk("b")]]


def test_seq_rises_by_one_per_notification_and_session(batcher: UpdateBatcher, sink: Sink) -> None:
    a, b = Session("a", "demo", "/w"), Session("b", "demo", "/w")
    b.seq = 41  # a loaded session continues from its snapshot's seq
    for i in range(3):
        batcher.publish(a, [chunk(f"a{i}")])
        batcher.publish(b, [tool(f"b{i}")])
        batcher.flush_all()
    batcher.flush_all()  # nothing queued: no empty notification
    assert [(n["sessionId"], n["seq"]) for n in sink.sent] == [
        ("a", 1),
        ("b", 42),
        ("a", 2),
        ("b", 43),
        ("a", 3),
        ("b", 44),
    ]
    assert (a.seq, b.seq) == (3, 44)
    assert batcher.notifications_sent == 6


def test_a_session_resumed_under_a_dead_ones_id_counts_its_own_seq(
    batcher: UpdateBatcher, sink: Sink
) -> None:
    dead = Session("s", "claude", "/w")
    batcher.publish(dead, [chunk("before the crash")])
    batcher.flush_all()
    resumed = Session("s", "claude", "/w")  # acp/loadSession: a new object, the same id
    resumed.seq = 7  # as its snapshot told the editor
    batcher.hold(resumed)
    batcher.publish(resumed, [chunk("held")])
    assert sink.sent[-1]["seq"] == 1
    batcher.publish(dead, [])  # nothing: the dead one's queue is gone with it
    # a late update of the dead object (its end still under way) must neither go out under
    # the id nor take the resumed one's queue (its held update, its seq) away: once it sent
    # seq 8 first, and the editor dropped the resumed session's answer as stale
    batcher.publish(dead, [chunk("late, from the dead one")])
    resumed_queue = batcher._queues["s"]
    assert resumed_queue.session is resumed and resumed_queue.held
    resumed_queue.held = False
    batcher.flush_all()
    assert (sink.sent[-1]["seq"], resumed.seq, dead.seq) == (8, 8, 1)
    assert sink.updates("s")[-1] == chunk("held")
    assert chunk("late, from the dead one") not in sink.updates("s")


def test_a_session_rekeyed_onto_a_dead_ones_id_owns_it(batcher: UpdateBatcher, sink: Sink) -> None:
    # acp/loadSession primed from the transcript: a new agent session (its own id) takes the
    # dead one's id; the dead one's pending update never goes out under it
    dead = Session("s", "claude", "/w")
    batcher.publish(dead, [chunk("pending when it died")])
    resumed = Session("new-agent-id", "claude", "/w")
    batcher.hold(resumed)
    resumed.session_id = "s"
    batcher.rekey(resumed, "new-agent-id")
    batcher.publish(dead, [chunk("late, from the dead one")])
    batcher._queues["s"].held = False
    batcher.publish(resumed, [chunk("First answer.")])
    batcher.flush_all()
    assert sink.updates("s") == [chunk("First answer.")]
    assert sink.sent[-1]["seq"] == 1


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b"]),
            st.one_of(
                st.builds(
                    chunk,
                    st.text(max_size=3),
                    st.sampled_from(["agent_message_chunk", "agent_thought_chunk"]),
                ),
                st.builds(chunk, st.text(max_size=3), messageId=st.sampled_from(["m1", "m2"])),
                st.builds(tool, st.sampled_from(["t1", "t2"])),
            ),
            st.booleans(),
        ),
        max_size=30,
    )
)
def test_nothing_is_reordered_or_lost(ops: list[tuple[str, JsonObject, bool]]) -> None:
    """Per session, the sent updates re-split into chunks equal the published ones."""
    sink = Sink()
    batcher = UpdateBatcher(sink, METHOD, flush_s=3600, adaptive=False)
    sessions = {sid: Session(sid, "demo", "/w") for sid in "ab"}
    published: dict[str, list[JsonObject]] = {"a": [], "b": []}
    for sid, update, flush in ops:
        batcher.publish(sessions[sid], [update])
        published[sid].append(update)
        if flush:
            batcher.flush(sessions[sid])
    batcher.flush_all()
    for sid in "ab":
        assert normalise(sink.updates(sid)) == normalise(published[sid])
        seqs = [n["seq"] for n in sink.sent if n["sessionId"] == sid]
        assert seqs == list(range(1, len(seqs) + 1))


def normalise(updates: list[JsonObject]) -> list[Any]:
    """Adjacent text chunks of one message and kind merged: all that joining may change."""
    out: list[Any] = []
    for u in updates:
        content = u.get("content")
        if u.get("sessionUpdate", "").endswith("_chunk") and isinstance(content, dict):
            key = (u["sessionUpdate"], u.get("messageId"))
            if out and isinstance(out[-1], list) and out[-1][0] == key:
                out[-1][1] += content["text"]
            else:
                out.append([key, content["text"]])
        else:
            out.append(u)
    return out


async def test_the_window_flushes_every_session_once(sink: Sink) -> None:
    batcher = UpdateBatcher(sink, METHOD, flush_s=0, adaptive=False)
    a, b = Session("a", "demo", "/w"), Session("b", "demo", "/w")
    batcher.publish(a, [chunk("1")])
    batcher.publish(b, [chunk("2")])
    batcher.publish(a, [chunk("3")])
    assert sink.sent == []  # nothing before the window ends
    await turns()
    assert sink.sent == [
        {"sessionId": "a", "seq": 1, "updates": [chunk("13")]},
        {"sessionId": "b", "seq": 1, "updates": [chunk("2")]},
    ]
    batcher.close()


async def test_a_held_session_is_released_after_the_response_that_names_it(
    sink: Sink,
) -> None:
    """acp/newSession: updates queued before the snapshot are in it and dropped; those after
    it are sent, but only once the response has gone out."""
    batcher = UpdateBatcher(sink, METHOD, flush_s=0, adaptive=False)
    s = Session("s", "demo", "/w")

    async def handler() -> str:
        batcher.hold(s)
        batcher.publish(s, [chunk("in the snapshot")])
        await turns()  # the window passes while held: nothing is sent
        assert sink.sent == []
        batcher.release_after_response(s)  # the snapshot was taken here
        batcher.publish(s, [chunk("after the snapshot")])
        return "snapshot"

    task = asyncio.get_running_loop().create_task(handler())
    # like pygls: the response goes out from the handler task's done-callback
    task.add_done_callback(lambda _t: sink.events.append("response"))
    await task
    await turns()
    assert sink.events == ["response", "notify s 1"]
    assert sink.updates() == [chunk("after the snapshot")]
    batcher.close()


def test_forget_flushes_what_is_queued(batcher: UpdateBatcher, sink: Sink) -> None:
    s = Session("s", "demo", "/w")
    batcher.publish(s, [chunk("last words")])
    batcher.forget(s)
    assert sink.updates() == [chunk("last words")]
    batcher.flush(s)
    assert len(sink.sent) == 1


# -- adaptive flushing (issue 16): an injected clock, explicit loop turns, no sleeps ------------
class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_an_update_on_an_idle_channel_goes_out_on_the_next_loop_turn(sink: Sink) -> None:
    clock = Clock()
    batcher = UpdateBatcher(sink, METHOD, flush_s=0.03, clock=clock)
    s = Session("s", "demo", "/w")
    batcher.publish(s, [chunk("a", messageId="m")])
    batcher.publish(s, [chunk("b", messageId="m")])  # read together: travels together
    assert sink.sent == []
    await turns(1)
    assert sink.updates() == [chunk("ab", messageId="m")]


async def test_a_flood_widens_the_gap_a_steady_stream_does_not_and_a_pause_resets(
    sink: Sink,
) -> None:
    clock = Clock()
    batcher = UpdateBatcher(sink, METHOD, flush_s=0.03, min_gap=0.01, clock=clock)
    s = Session("s", "demo", "/w")
    count = 0

    def publish(n: int) -> None:
        nonlocal count
        batcher.publish(s, [chunk(f"<{count + k}>", messageId="m") for k in range(n)])
        count += n

    publish(1)
    await turns(1)
    assert len(sink.sent) == 1  # idle: at once
    queue = batcher._queues["s"]
    for sent in (2, 3):  # right behind it, a burst of BURST more goes at once too
        clock.now += 0.001
        publish(1)
        await turns(1)
        assert len(sink.sent) == sent
    assert queue.credit == 0

    def step(n: int) -> float:
        clock.now += 0.001  # within the gap: waits for its timer
        publish(n)
        assert queue.timer is not None and len(sink.updates()) < count
        clock.now = queue.last_sent + queue.gap  # the timer's time comes
        queue.timer._run()  # type: ignore[union-attr]
        return queue.gap

    flood = [step(100) for _ in range(5)]  # many chunks a notification: the gap widens
    assert flood == sorted(flood) and max(flood) == pytest.approx(0.03)
    steady = [step(3) for _ in range(6)]  # a few a notification: back to the smallest
    assert steady == sorted(steady, reverse=True) and steady[-1] == pytest.approx(0.01)
    text = "".join(u["content"]["text"] for u in sink.updates())
    assert text == "".join(f"<{i}>" for i in range(count))
    # after a pause the next update goes at once again, with the burst credit back
    clock.now += 1.0
    publish(1)
    assert batcher._delay(queue) == 0
    await turns(1)
    assert queue.gap == pytest.approx(0.01) and queue.credit == BURST


async def test_flush_sends_at_once_whatever_the_gap(sink: Sink) -> None:
    clock = Clock()
    batcher = UpdateBatcher(sink, METHOD, flush_s=0.03, clock=clock)
    s = Session("s", "demo", "/w")
    batcher.publish(s, [chunk("a")])
    await turns(1)
    batcher.publish(s, [tool("t1")])  # within the gap: waits for the timer
    assert len(sink.sent) == 1
    batcher.flush(s)  # a status change / permission prompt / turn end
    assert len(sink.sent) == 2 and batcher._queues["s"].timer is None


class Timers:
    """An injected scheduler on the injected clock: flushes run when the test says so."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.pending: list[tuple[float, Any]] = []

    def __call__(self, delay: float, fn: Any) -> Any:
        entry = [self.clock.now + delay, fn]
        self.pending.append(entry)  # type: ignore[arg-type]

        class Handle:
            def cancel(self_inner) -> None:
                entry[1] = None

        return Handle()

    def run_due(self) -> None:
        due = [e for e in self.pending if e[0] <= self.clock.now and e[1] is not None]
        self.pending = [e for e in self.pending if e not in due]
        for entry in due:
            entry[1]()


@given(
    st.lists(
        st.tuples(st.floats(min_value=0, max_value=0.05), st.sampled_from(["m1", "m2", None])),
        max_size=60,
    ),
    # (flushMs, 1 / maxNotificationsPerSecond): the default, a high cap, a cap over flushMs
    st.sampled_from([(0.03, 0.01), (0.03, 0.002), (0.005, 0.02)]),
)
def test_adaptive_order_and_content_are_kept(
    arrivals: list[tuple[float, str | None]], windows: tuple[float, float]
) -> None:
    """Whatever the timing, the editor gets every chunk once, in order, and at most one
    notification plus the burst per min_gap of the clock."""
    flush_s, min_gap = windows
    clock = Clock()
    timers = Timers(clock)
    sink = Sink()
    sent_at: list[float] = []

    def record(method: str, params: JsonObject) -> None:
        sent_at.append(clock.now)
        sink(method, params)

    batcher = UpdateBatcher(
        record, METHOD, flush_s=flush_s, min_gap=min_gap, clock=clock, schedule=timers
    )
    s = Session("s", "demo", "/w")
    texts = []
    for i, (dt, message) in enumerate(arrivals):
        clock.now += dt
        timers.run_due()
        extra = {"messageId": message} if message else {}
        batcher.publish(s, [chunk(f"<{i}>", **extra)])
        texts.append(f"<{i}>")
        timers.run_due()
    clock.now += 1.0
    timers.run_due()
    got = "".join(u["content"]["text"] for u in sink.updates())
    assert got == "".join(texts)
    # the cap: in any min_gap, one notification plus the burst at most (so ~100/s by default)
    for start in sent_at:
        close = [t for t in sent_at if start <= t < start + min_gap - 1e-9]
        assert len(close) <= 1 + BURST, sent_at


def timed_batcher(
    flush_s: float, min_gap: float
) -> tuple[Clock, Timers, list[float], UpdateBatcher]:
    """A batcher on a fake clock that records when each notification went."""
    clock = Clock()
    timers = Timers(clock)
    sent_at: list[float] = []
    batcher = UpdateBatcher(
        lambda method, params: sent_at.append(clock.now),
        METHOD,
        flush_s=flush_s,
        min_gap=min_gap,
        clock=clock,
        schedule=timers,
    )
    return clock, timers, sent_at, batcher


def test_a_flood_never_beats_a_cap_set_below_flush_ms() -> None:
    """maxNotificationsPerSecond = 50 with flushMs = 5: the flood's widening gap is bounded
    by flushMs, but never below the cap's 20 ms."""
    clock, timers, sent_at, batcher = timed_batcher(flush_s=0.005, min_gap=0.02)
    s = Session("s", "demo", "/w")
    for _ in range(400):  # 100 chunks every ms for 0.4 s
        batcher.publish(s, [chunk("x") for _ in range(100)])
        clock.now += 0.001
        timers.run_due()
    late = [b - a for a, b in zip(sent_at[BURST:-1], sent_at[BURST + 1 :], strict=True)]
    assert late and min(late) >= 0.02 - 1e-9, late


def test_a_flush_on_credit_counts_however_close_to_the_gap() -> None:
    """Found by hypothesis: a chunk let through on credit 0.2 ms before the gap was over was
    taken for a timer firing on time, kept its credit, and four notifications went in 10 ms."""
    clock, timers, sent_at, batcher = timed_batcher(flush_s=0.03, min_gap=0.01)
    s = Session("s", "demo", "/w")
    for dt in (0.0, 0.0, 0.009765625, 0.0):
        clock.now += dt
        timers.run_due()
        batcher.publish(s, [chunk("x", messageId="m1")])
        timers.run_due()
    clock.now += 1.0
    timers.run_due()
    assert len([t for t in sent_at if t < sent_at[0] + 0.01]) <= 1 + BURST, sent_at
