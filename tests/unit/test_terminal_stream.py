"""Live terminal output to the editor: correct reconstruction and a bounded byte count."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from acp_lsp.terminal_stream import TerminalStream
from acp_lsp.terminals import OutputBuffer

EXIT = {"exitCode": 0, "signal": None}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def cap(text: str, limit: int | None) -> str:
    """The editor's rule: keep at most ``limit`` bytes, cut on a character boundary."""
    if limit is None:
        return text
    data = text.encode()
    if len(data) <= limit:
        return text
    data = data[len(data) - limit :]
    while data and data[0] & 0xC0 == 0x80:
        data = data[1:]
    return data.decode()


@dataclass
class Editor:
    """What an editor does with acp/terminalOutput messages."""

    limit: int | None
    text: str = ""
    truncated: bool = False
    exit_status: dict[str, Any] | None = None
    messages: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    clock: Clock | None = None
    # Everything the command wrote so far, to check each message leaves a true view.
    written: list[str] = field(default_factory=list)
    written_bytes: int = 0

    def apply(self, message: dict[str, Any]) -> None:
        assert self.exit_status is None, "message after the exit message"
        self.messages.append((self.clock.now if self.clock else 0.0, message))
        if message.get("reset"):
            self.text = message["data"]
        else:
            self.text += message["data"]
        self.text = cap(self.text, self.limit)
        self.truncated = bool(message.get("truncated", False))
        if "exitStatus" in message:
            self.exit_status = message["exitStatus"]
        # Every message brings the view up to the latest output: a suffix of it, flagged
        # truncated exactly when its head is missing.
        if self.written_bytes < 20_000:
            assert "".join(self.written).endswith(self.text)
        assert self.truncated == (len(self.text.encode()) < self.written_bytes)

    @property
    def bytes_received(self) -> int:
        return sum(len(m["data"].encode()) for _, m in self.messages)


class Harness:
    """A stream, its editor, a reference retained output and a timer firing at due()."""

    def __init__(self, limit: int | None, min_interval: float = 0.05) -> None:
        self.clock = Clock()
        self.editor = Editor(limit, clock=self.clock)
        self.stream = TerminalStream(
            limit, self.editor.apply, clock=self.clock, min_interval=min_interval
        )
        self.reference = OutputBuffer(limit)

    def advance(self, dt: float) -> None:
        """Let ``dt`` seconds pass, flushing whenever the stream asks to be."""
        end = self.clock.now + dt
        while (due := self.stream.due()) is not None and due <= end:
            self.clock.now = max(self.clock.now, due)
            self.stream.flush()
        self.clock.now = end

    def feed(self, text: str) -> None:
        self.editor.written.append(text)
        self.editor.written_bytes += len(text.encode())
        self.reference.append(text)
        self.stream.feed(text)
        self.advance(0)

    def exit(self, status: dict[str, Any] = EXIT) -> None:
        self.stream.exit(status)


CHARS = st.sampled_from(["a", "b", "\n", "é", "€", "😀", "\u0301"])
TEXT = st.lists(CHARS, max_size=120).map("".join)
BIG_TEXT = st.integers(0, 3000).map(lambda n: ("aé😀\n" * (n // 4 + 1))[:n])
FEEDS = st.lists(
    st.tuples(
        st.one_of(st.just(0.0), st.floats(0, 0.2), st.floats(0, 100)),
        st.one_of(TEXT, BIG_TEXT),
    ),
    max_size=60,
)
LIMITS = st.one_of(st.none(), st.integers(0, 12), st.integers(13, 2000))


@settings(max_examples=150, deadline=None)
@given(limit=LIMITS, feeds=FEEDS, min_interval=st.sampled_from([0.0, 0.05, 1.0]))
def test_editor_copy_ends_equal_and_bytes_stay_within_twice_kept(
    limit: int | None, feeds: list[tuple[float, str]], min_interval: float
) -> None:
    h = Harness(limit, min_interval)
    for dt, text in feeds:
        h.advance(dt)
        h.feed(text)
    h.exit()
    kept = h.reference.text()
    assert h.editor.text == kept
    assert h.editor.truncated == h.reference.truncated
    assert h.editor.exit_status == EXIT
    assert h.editor.bytes_received == h.stream.bytes_sent
    assert h.editor.bytes_received <= 2 * len(kept.encode())
    assert all(m["data"] or "exitStatus" in m for _, m in h.editor.messages), "empty message"
    live = [t for t, m in h.editor.messages if "exitStatus" not in m]
    assert all(b - a >= min_interval - 1e-9 for a, b in itertools.pairwise(live))


@settings(max_examples=80, deadline=None)
@given(limit=st.integers(40, 3000), feeds=FEEDS)
def test_small_output_streams_as_plain_appends(limit: int, feeds: list[tuple[float, str]]) -> None:
    """While the output stays within half the limit nothing is reset or held back."""
    h = Harness(limit)
    total = 0
    for dt, text in feeds:
        if total + len(text.encode()) > limit // 2:
            break
        total += len(text.encode())
        h.advance(dt)
        h.feed(text)
        h.advance(0.05)
        assert h.editor.text == h.reference.text()  # live, not only at exit
    h.exit()
    assert not any(m.get("reset") or m.get("truncated") for _, m in h.editor.messages)
    assert "".join(m["data"] for _, m in h.editor.messages) == h.reference.text()


@settings(max_examples=50, deadline=None)
@given(feeds=FEEDS)
def test_without_a_limit_every_byte_is_sent_once(feeds: list[tuple[float, str]]) -> None:
    h = Harness(None)
    for dt, text in feeds:
        h.advance(dt)
        h.feed(text)
    h.exit()
    everything = "".join(text for _, text in feeds)
    assert "".join(m["data"] for _, m in h.editor.messages) == everything
    assert h.editor.bytes_received == len(everything.encode())


def test_first_output_goes_out_at_once_then_batches_per_interval() -> None:
    h = Harness(1000, min_interval=0.05)
    h.feed("one\n")
    assert [m["data"] for _, m in h.editor.messages] == ["one\n"]
    h.feed("two\n")
    h.feed("three\n")
    assert len(h.editor.messages) == 1  # within the interval: held
    assert h.stream.due() == h.clock.now + 0.05
    h.advance(0.05)
    assert [m["data"] for _, m in h.editor.messages] == ["one\n", "two\nthree\n"]
    assert h.stream.due() is None


def test_flush_before_due_sends_nothing() -> None:
    h = Harness(1000)
    h.feed("a")
    h.feed("b")
    h.stream.flush(h.clock.now + 0.01)
    assert len(h.editor.messages) == 1


def test_exit_sends_one_message_with_the_rest_and_the_status() -> None:
    h = Harness(1000)
    h.feed("a")
    h.feed("b")
    h.exit({"exitCode": None, "signal": "SIGKILL"})
    assert h.editor.messages[-1][1] == {
        "data": "b",
        "exitStatus": {"exitCode": None, "signal": "SIGKILL"},
    }
    assert h.editor.text == "ab"
    h.stream.exit(EXIT)  # idempotent
    h.stream.feed("late")
    assert h.stream.due() is None
    assert len(h.editor.messages) == 2


def test_exit_with_nothing_pending_still_reports_the_status() -> None:
    h = Harness(10)
    h.exit()
    assert [m for _, m in h.editor.messages] == [{"data": "", "exitStatus": EXIT}]


def test_backlog_over_the_limit_is_sent_as_a_reset_tail() -> None:
    h = Harness(100)
    h.feed("x")
    h.feed("0123456789" * 50)  # 500 bytes arrive before the next flush
    assert len(h.editor.messages) == 1
    h.advance(0.05)
    _, last = h.editor.messages[-1]
    assert last["reset"] is True
    assert last["truncated"] is True
    assert len(last["data"]) < 100
    assert h.reference.text().endswith(last["data"])
    h.exit()
    assert h.editor.text == h.reference.text()


def test_fifty_megabytes_with_a_one_megabyte_limit() -> None:
    """The case from the performance issue: a fast producer, a 1 MB limit."""
    limit = 1 << 20
    h = Harness(limit)
    chunk = ("0123456789abcdé\n" * 4096)[: 64 * 1024 - 8]
    fed = 0
    while fed < 50 * (1 << 20):
        h.feed(chunk)
        fed += len(chunk.encode())
        h.advance(0.001)
    h.exit()
    kept = h.reference.nbytes
    assert h.editor.text == h.reference.text()
    assert h.editor.bytes_received <= 2 * kept
    assert len(h.editor.messages) < 60
    # The editor kept seeing the latest output while the command ran.
    live = [m for _, m in h.editor.messages if "exitStatus" not in m]
    assert sum(1 for m in live if m.get("reset")) >= 5


def test_intervals_grow_while_the_producer_keeps_overflowing() -> None:
    h = Harness(10_000, min_interval=0.05)
    for _ in range(3000):
        h.feed("z" * 200)
        h.advance(0.01)
    times = [t for t, _ in h.editor.messages]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert gaps[0] >= 0.05 - 1e-9
    assert gaps[-1] > 4 * 0.05
    assert h.editor.bytes_received <= 2 * 10_000
    h.exit()
    assert h.editor.text == h.reference.text()


def test_slow_endless_producer_stays_bounded() -> None:
    """A trickle that never overflows the backlog still cannot stream unbounded bytes."""
    h = Harness(2000)
    for i in range(20_000):
        h.feed(f"line {i}\n")
        h.advance(0.1)
    assert h.stream.bytes_sent <= 2000
    h.exit()
    assert h.editor.text == h.reference.text()
    assert h.editor.bytes_received <= 2 * h.reference.nbytes


def test_zero_limit_sends_only_the_exit() -> None:
    h = Harness(0)
    h.feed("hello")
    h.exit()
    assert [m for _, m in h.editor.messages] == [
        {"data": "", "reset": True, "truncated": True, "exitStatus": EXIT}
    ]


def test_a_big_first_chunk_shows_its_tail_then_exit_completes_it() -> None:
    h = Harness(1000)
    h.feed("é" * 350)  # 700 bytes at once: more than the free half of the budget
    [(_, first)] = h.editor.messages
    assert first["reset"] is True
    assert first["truncated"] is True  # the editor's view lacks the head (for now)
    assert 0 < len(first["data"].encode()) <= 500
    h.exit()
    assert h.editor.text == "é" * 350
    assert not h.editor.truncated
    assert h.editor.bytes_received <= 2 * 700
