"""Follow-along (acp_lsp.editor.follow): debounce with an injected scheduler, no sleeps."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_lsp.editor.follow import Follower, location_target


class FakeClock:
    """A scheduler whose timers fire only when the test advances time."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[FakeTimer] = []

    def schedule(self, delay: float, fn: Callable[[], None]) -> FakeTimer:
        timer = FakeTimer(self.now + delay, fn)
        self.timers.append(timer)
        return timer

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for timer in sorted(self.timers, key=lambda t: t.due):
            if timer.due <= self.now and not timer.cancelled and not timer.fired:
                timer.fired = True
                timer.fn()

    def live(self) -> list[FakeTimer]:
        return [t for t in self.timers if not t.cancelled and not t.fired]


class FakeTimer:
    def __init__(self, due: float, fn: Callable[[], None]) -> None:
        self.due = due
        self.fn = fn
        self.cancelled = False
        self.fired = False

    def cancel(self) -> None:
        self.cancelled = True


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    out = {}
    for name in ("a.py", "b.py", "c.py"):
        path = tmp_path / name
        path.write_text("x\n" * 50, encoding="utf-8")
        out[name] = str(path)
    return out


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def shown() -> list[tuple[str, int]]:
    return []


@pytest.fixture
def follower(clock: FakeClock, shown: list[tuple[str, int]]) -> Follower:
    return Follower(clock.schedule, lambda path, line: shown.append((path, line)), 0.2)


def call(tool_call_id: str, *locations: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"toolCallId": tool_call_id, "locations": list(locations), **fields}


def test_jumps_after_the_debounce_with_a_zero_based_line(
    follower: Follower, clock: FakeClock, shown: list[tuple[str, int]], files: dict[str, str]
) -> None:
    follower.on_tool_call("s", call("1", {"path": files["a.py"], "line": 12}))
    clock.advance(0.19)
    assert shown == []
    clock.advance(0.01)
    assert shown == [(files["a.py"], 11)]
    assert follower.jumps == 1


def test_last_location_in_the_window_wins(
    follower: Follower, clock: FakeClock, shown: list[tuple[str, int]], files: dict[str, str]
) -> None:
    follower.on_tool_call("s", call("1", {"path": files["a.py"], "line": 1}))
    clock.advance(0.1)
    follower.on_tool_call("s", call("2", {"path": files["b.py"], "line": 2}))
    clock.advance(0.15)  # 0.25 after the first, 0.15 after the second: the first was cancelled
    assert shown == []
    follower.on_tool_call("s", call("3", {"path": files["c.py"], "line": 3}))
    clock.advance(0.2)
    assert shown == [(files["c.py"], 2)]
    assert len(clock.live()) == 0
    # each new location restarted the window, so exactly one jump happened
    assert sum(1 for t in clock.timers if t.cancelled) == 2


def test_windows_are_per_session(
    follower: Follower, clock: FakeClock, shown: list[tuple[str, int]], files: dict[str, str]
) -> None:
    follower.on_tool_call("s1", call("1", {"path": files["a.py"], "line": 5}))
    follower.on_tool_call("s2", call("1", {"path": files["b.py"], "line": 6}))
    clock.advance(0.2)
    assert sorted(shown) == [(files["a.py"], 4), (files["b.py"], 5)]


@pytest.mark.parametrize(
    ("line", "expected"), [(None, 0), (1, 0), (0, 0), (-3, 0), (True, 0), ("7", 0), (40, 39)]
)
def test_line_conversion(files: dict[str, str], line: Any, expected: int) -> None:
    loc: dict[str, Any] = {"path": files["a.py"]}
    if line is not None:
        loc["line"] = line
    assert location_target(loc) == (files["a.py"], expected)


def test_relative_and_missing_paths_are_ignored_with_a_log_line(
    follower: Follower,
    clock: FakeClock,
    shown: list[tuple[str, int]],
    files: dict[str, str],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="acp_lsp.editor.follow")
    follower.on_tool_call("s", call("1", {"path": "src/a.py", "line": 3}))
    follower.on_tool_call("s", call("2", {"path": str(tmp_path / "gone.py"), "line": 3}))
    follower.on_tool_call("s", call("3", {"path": str(tmp_path), "line": 3}))  # a directory
    follower.on_tool_call("s", call("4", {"line": 3}, "not a location"))  # type: ignore[arg-type]
    clock.advance(1)
    assert shown == [] and clock.timers == []
    text = caplog.text
    assert "relative path 'src/a.py'" in text
    assert "gone.py" in text and "no such file" in text
    # the first followable location of a call is the one taken
    follower.on_tool_call(
        "s",
        call("5", {"path": "rel.py"}, {"path": files["b.py"], "line": 9}, {"path": files["c.py"]}),
    )
    clock.advance(0.2)
    assert shown == [(files["b.py"], 8)]


def test_a_call_is_followed_when_its_location_is_new_not_on_every_change(
    follower: Follower,
    clock: FakeClock,
    shown: list[tuple[str, int]],
    files: dict[str, str],
    tmp_path: Path,
) -> None:
    a = {"path": files["a.py"], "line": 10}
    follower.on_tool_call("s", call("1", a, status="pending"))
    clock.advance(0.2)
    follower.on_tool_call("s", call("2", {"path": files["b.py"], "line": 20}))
    clock.advance(0.2)
    # call 1 completes later: its update carries the same location; no jump back to it
    follower.on_tool_call("s", call("1", a, status="completed"))
    clock.advance(0.2)
    assert shown == [(files["a.py"], 9), (files["b.py"], 19)]
    # the same call moving to another line is followed
    follower.on_tool_call("s", call("1", {"path": files["a.py"], "line": 30}))
    clock.advance(0.2)
    assert shown[-1] == (files["a.py"], 29)
    # a file that only exists after the call wrote it is followed once it does
    created = tmp_path / "created.py"
    follower.on_tool_call("s", call("3", {"path": str(created)}, status="in_progress"))
    clock.advance(0.2)
    assert len(shown) == 3
    created.write_text("new\n", encoding="utf-8")
    follower.on_tool_call("s", call("3", {"path": str(created)}, status="completed"))
    clock.advance(0.2)
    assert shown[-1] == (str(created), 0)


def test_calls_without_locations_change_nothing(
    follower: Follower, clock: FakeClock, shown: list[tuple[str, int]], files: dict[str, str]
) -> None:
    follower.on_tool_call("s", call("1", {"path": files["a.py"], "line": 2}))
    follower.on_tool_call("s", {"toolCallId": "2", "locations": []})
    follower.on_tool_call("s", {"toolCallId": "3"})
    follower.on_tool_call("s", {"toolCallId": "4", "locations": None})
    clock.advance(0.2)
    assert shown == [(files["a.py"], 1)]


def test_per_session_switch_and_default(
    follower: Follower, clock: FakeClock, shown: list[tuple[str, int]], files: dict[str, str]
) -> None:
    follower.on_tool_call("s", call("1", {"path": files["a.py"], "line": 2}))
    follower.set_enabled("s", False)  # switched off inside the window: the pending jump is dropped
    clock.advance(1)
    assert shown == [] and not follower.enabled("s")
    follower.on_tool_call("s", call("2", {"path": files["b.py"]}))
    clock.advance(1)
    assert shown == []
    follower.on_tool_call("other", call("1", {"path": files["c.py"]}))
    clock.advance(1)
    assert shown == [(files["c.py"], 0)]  # other sessions still follow
    follower.set_enabled("s", True)
    follower.on_tool_call("s", call("3", {"path": files["b.py"], "line": 4}))
    clock.advance(1)
    assert shown[-1] == (files["b.py"], 3)
    # the setting's default applies to sessions without their own switch
    follower.default = False
    assert follower.enabled("s") and not follower.enabled("fresh")
    follower.on_tool_call("fresh", call("1", {"path": files["a.py"]}))
    clock.advance(1)
    assert shown[-1] == (files["b.py"], 3)
    follower.set_enabled("fresh", True)
    follower.on_tool_call("fresh", call("1", {"path": files["a.py"]}))
    clock.advance(1)
    assert shown[-1] == (files["a.py"], 0)


def test_forget_drops_pending_jumps_and_the_switch(
    follower: Follower, clock: FakeClock, shown: list[tuple[str, int]], files: dict[str, str]
) -> None:
    follower.set_enabled("s", False)
    follower.forget("s")
    assert follower.enabled("s")  # back to the default
    follower.on_tool_call("s", call("1", {"path": files["a.py"]}))
    follower.forget("s")
    clock.advance(1)
    assert shown == []
    # what was followed is forgotten too: the same call is followed again in a new life
    follower.on_tool_call("s", call("1", {"path": files["a.py"]}))
    clock.advance(1)
    assert shown == [(files["a.py"], 0)]


def test_never_follows_a_file_the_agent_may_not_touch(
    follower: Follower, clock: FakeClock, shown: list[tuple[str, int]], files: dict[str, str]
) -> None:
    outside = files["a.py"]
    allowed = {files["b.py"]}
    follower.on_tool_call(
        "s",
        call("1", {"path": outside, "line": 3}, {"path": files["b.py"], "line": 5}),
        allowed=lambda path: path in allowed,
    )
    clock.advance(1)
    assert shown == [(files["b.py"], 4)]
    follower.on_tool_call("s", call("2", {"path": outside}), allowed=lambda path: path in allowed)
    clock.advance(1)
    assert shown == [(files["b.py"], 4)]


def test_an_edit_that_lands_is_shown_once_more_while_it_is_the_call_followed_last(
    follower: Follower, clock: FakeClock, shown: list[tuple[str, int]], files: dict[str, str]
) -> None:
    """The jump to an edit came before it landed; the edit then moved the editor's view
    (Neovim's cursor keeps to its line, now below the inserted one). Its completion shows the
    changed line again, once, and never jumps back to an edit another call has followed."""
    at = {"path": files["a.py"], "line": 2}
    follower.on_tool_call("s", call("e1", at, kind="edit", status="pending"))
    clock.advance(0.2)
    follower.on_tool_call("s", call("e1", at, kind="edit", status="in_progress"))
    clock.advance(0.2)
    assert shown == [(files["a.py"], 1)]
    follower.on_tool_call("s", call("e1", at, kind="edit", status="completed"))
    clock.advance(0.2)
    assert shown == [(files["a.py"], 1)] * 2
    follower.on_tool_call("s", call("e1", at, kind="edit", status="completed"))
    clock.advance(0.2)
    assert len(shown) == 2  # once
    # another call was followed meanwhile: the edit's landing does not pull the view back
    follower.on_tool_call("s", call("e2", at, kind="edit", status="pending"))
    follower.on_tool_call("s", call("r", {"path": files["b.py"], "line": 7}))
    clock.advance(0.2)
    follower.on_tool_call("s", call("e2", at, kind="edit", status="completed"))
    clock.advance(0.2)
    assert shown[2:] == [(files["b.py"], 6)]
    # an edit first reported already done is shown once
    follower.on_tool_call(
        "s", call("e3", {"path": files["c.py"], "line": 4}, kind="edit", status="completed")
    )
    clock.advance(0.2)
    follower.on_tool_call(
        "s", call("e3", {"path": files["c.py"], "line": 4}, kind="edit", status="completed")
    )
    clock.advance(0.2)
    assert shown[3:] == [(files["c.py"], 3)]
