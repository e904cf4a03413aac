"""PermissionBroker (acp_lsp.editor.permissions): rules, editor answers, exactly one answer
for every prompt, cancellation. The editor is a fake whose answers the test releases."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from acp_lsp.backends.base import PermissionAnswer
from acp_lsp.config import PermissionRule
from acp_lsp.editor.permissions import PermissionBroker, describe, rule_matches
from acp_lsp.session import Session

JsonObject = dict[str, Any]

OPTIONS = [
    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
    {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]
NO_REJECT = [OPTIONS[0], {"optionId": "never", "name": "Never", "kind": "reject_always"}]
SELECTED_YES = {"outcome": "selected", "optionId": "yes"}
CANCELLED = {"outcome": "cancelled"}


class FakeEditor:
    """Records prompts; each waits for the test to answer it (or fail it)."""

    def __init__(self) -> None:
        self.prompts: dict[str, tuple[str, JsonObject]] = {}
        self.answers: dict[str, asyncio.Future[Any]] = {}
        self.withdrawn: list[str] = []
        self.arrived = asyncio.Event()

    def send_request(self, method: str, params: JsonObject, msg_id: str) -> asyncio.Future[Any]:
        """Sent at the call, as the server's is; the future is the answer."""
        self.prompts[msg_id] = (method, params)
        future = self.answers[msg_id] = asyncio.get_running_loop().create_future()
        self.arrived.set()
        return future

    def withdraw(self, msg_id: str) -> None:
        self.withdrawn.append(msg_id)

    async def wait_prompts(self, count: int) -> list[str]:
        while len(self.prompts) < count:
            self.arrived.clear()
            await self.arrived.wait()
        return list(self.prompts)

    def answer(self, msg_id: str, value: Any) -> None:
        self.answers[msg_id].set_result(value)


def make_broker(
    editor: FakeEditor, rules: list[PermissionRule] | None = None, *, rich: bool = True
) -> tuple[PermissionBroker, list[tuple[str, int]]]:
    changes: list[tuple[str, int]] = []
    broker = PermissionBroker(
        editor.send_request,
        editor.withdraw,
        rules=lambda: rules or [],
        rich_editor=lambda: rich,
        on_change=lambda session, pending: changes.append((session.session_id, pending)),
    )
    return broker, changes


def call(**fields: Any) -> JsonObject:
    return {"toolCallId": "t1", "title": "Edit src/app.py", "kind": "edit", **fields}


def locs(*paths: str) -> list[JsonObject]:
    return [{"path": path} for path in paths]


# a rule's path is matched against the real path: on Windows /ws/src/a.py is C:\ws\src\a.py,
# which "/ws/src/*" never matches
posix_paths = pytest.mark.skipif(
    sys.platform == "win32", reason="a /ws/... rule against /ws/... paths (C:\\ws\\... on Windows)"
)

SESSION = Session("s1", "demo", "/ws")
OTHER = Session("s2", "demo", "/ws")


# -- rules -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rule", "tool_call", "matches"),
    [
        (PermissionRule(kind="edit"), call(), True),
        (PermissionRule(kind="read"), call(), False),
        (PermissionRule(title=r"^Edit .*\.py$"), call(), True),
        (PermissionRule(title="Delete"), call(), False),
        (PermissionRule(title="x"), call(title=None), False),
        # settings refuse a bad regex; one that gets past them anyway matches nothing
        (PermissionRule.model_construct(title="(unclosed"), call(), False),
        pytest.param(
            PermissionRule(path="/ws/src/*"),
            call(locations=locs("/ws/src/a.py")),
            True,
            marks=posix_paths,
        ),
        # every location must match
        (
            PermissionRule(path="/ws/src/*"),
            call(locations=locs("/ws/src/a.py", "/etc/passwd")),
            False,
        ),
        # a call without locations never matches a path rule
        (PermissionRule(path="*"), call(), False),
        # diff content names paths too
        (
            PermissionRule(path="/ws/*"),
            call(
                locations=locs("/ws/a"),
                content=[{"type": "diff", "path": "/other/b", "newText": ""}],
            ),
            False,
        ),
        pytest.param(
            PermissionRule(path="/ws/*"),
            call(content=[{"type": "diff", "path": "/ws/b", "newText": ""}]),
            True,
            marks=posix_paths,
        ),
        # ".." cannot walk out of a path rule
        (PermissionRule(path="/ws/*"), call(locations=locs("/ws/../etc/passwd")), False),
        (PermissionRule(path="*.md"), call(locations=locs("/ws/README.MD")), False),  # case counts
        (
            PermissionRule(kind="edit", path="/ws/*"),
            call(kind="read", locations=locs("/ws/a")),
            False,
        ),
    ],
)
def test_rule_matching(rule: PermissionRule, tool_call: JsonObject, matches: bool) -> None:
    assert rule_matches(rule, tool_call) is matches


@posix_paths
async def test_rules_answer_without_asking_and_the_first_match_decides() -> None:
    editor = FakeEditor()
    rules = [
        PermissionRule(kind="read", action="allow"),
        PermissionRule(path="/ws/secret/*", action="reject"),
        PermissionRule(kind="edit", action="ask"),
        PermissionRule(kind="edit", action="allow"),  # never reached: "ask" came first
        PermissionRule(kind="execute", action="allow"),
    ]
    broker, _ = make_broker(editor, rules)
    read = await broker.ask(SESSION, call(kind="read", locations=locs("/ws/secret/k")), OPTIONS)
    assert read.outcome == SELECTED_YES  # allow → allow_once
    secret = await broker.ask(SESSION, call(kind="fetch", locations=locs("/ws/secret/k")), OPTIONS)
    assert secret.outcome == {"outcome": "selected", "optionId": "no"}  # reject → reject_once
    only_always = await broker.ask(SESSION, call(kind="execute"), [OPTIONS[1], OPTIONS[2]])
    assert only_always.outcome == {"outcome": "selected", "optionId": "always"}
    assert editor.prompts == {} and broker.asked == 0
    # "ask" stops the rules: the editor is asked
    task = asyncio.ensure_future(broker.ask(SESSION, call(), OPTIONS))
    (msg_id,) = await editor.wait_prompts(1)
    editor.answer(msg_id, {"outcome": SELECTED_YES})
    assert (await task).outcome == SELECTED_YES


async def test_a_rule_whose_option_is_not_offered_asks_the_editor() -> None:
    editor = FakeEditor()
    broker, _ = make_broker(editor, [PermissionRule(kind="edit", action="reject")])
    task = asyncio.ensure_future(broker.ask(SESSION, call(), [OPTIONS[0]]))
    (msg_id,) = await editor.wait_prompts(1)
    editor.answer(msg_id, {"outcome": SELECTED_YES})
    assert (await task).outcome == SELECTED_YES


# -- editor answers ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("answer", "options", "expected"),
    [
        ({"outcome": SELECTED_YES}, OPTIONS, SELECTED_YES),
        ({"outcome": SELECTED_YES, "reason": "fine"}, OPTIONS, SELECTED_YES),
        # dismissed / cancelled: reject_once when offered, else cancelled
        ({"outcome": CANCELLED}, OPTIONS, {"outcome": "selected", "optionId": "no"}),
        ({"outcome": CANCELLED}, NO_REJECT, CANCELLED),
        # an option id the agent never offered is never approval
        (
            {"outcome": {"outcome": "selected", "optionId": "root"}},
            OPTIONS,
            {"outcome": "selected", "optionId": "no"},
        ),
        ({"outcome": {"outcome": "selected", "optionId": "root"}}, NO_REJECT, CANCELLED),
        ({"outcome": {"outcome": "selected"}}, OPTIONS, {"outcome": "selected", "optionId": "no"}),
        ({"outcome": "weird"}, OPTIONS, {"outcome": "selected", "optionId": "no"}),
        (None, OPTIONS, {"outcome": "selected", "optionId": "no"}),
        ("garbage", NO_REJECT, CANCELLED),
    ],
)
async def test_rich_editor_answers(
    answer: Any, options: list[JsonObject], expected: JsonObject
) -> None:
    editor = FakeEditor()
    broker, _ = make_broker(editor)
    task = asyncio.ensure_future(broker.ask(SESSION, call(), options))
    (msg_id,) = await editor.wait_prompts(1)
    method, params = editor.prompts[msg_id]
    assert method == "acp/requestPermission"
    assert params == {"sessionId": "s1", "toolCall": call(), "options": options}
    editor.answer(msg_id, answer)
    result = await task
    assert result.outcome == expected
    if isinstance(answer, dict) and "reason" in answer:
        assert result.reason == "fine"
    assert editor.withdrawn == []  # answered by the editor: nothing to withdraw


async def test_an_editor_error_is_a_dismissed_prompt() -> None:
    editor = FakeEditor()
    broker, _ = make_broker(editor)
    task = asyncio.ensure_future(broker.ask(SESSION, call(), OPTIONS))
    (msg_id,) = await editor.wait_prompts(1)
    editor.answers[msg_id].set_exception(RuntimeError("editor gone"))
    assert (await task).outcome == {"outcome": "selected", "optionId": "no"}


@pytest.mark.parametrize(
    ("title", "options", "expected"),
    [
        ("Always allow", OPTIONS, {"outcome": "selected", "optionId": "always"}),
        (None, OPTIONS, {"outcome": "selected", "optionId": "no"}),  # closed the prompt
        ("Something else", NO_REJECT, CANCELLED),
    ],
)
async def test_plain_editor_gets_show_message_request(
    title: str | None, options: list[JsonObject], expected: JsonObject
) -> None:
    editor = FakeEditor()
    broker, _ = make_broker(editor, rich=False)
    tool_call = call(locations=locs("/ws/src/app.py"), rawInput={"command": "rm -rf build"})
    task = asyncio.ensure_future(broker.ask(SESSION, tool_call, options))
    (msg_id,) = await editor.wait_prompts(1)
    method, params = editor.prompts[msg_id]
    assert method == "window/showMessageRequest"
    assert [a["title"] for a in params["actions"]] == [o["name"] for o in options]
    assert "Edit src/app.py" in params["message"] and "/ws/src/app.py" in params["message"]
    assert "rm -rf build" in params["message"]
    editor.answer(msg_id, None if title is None else {"title": title})
    assert (await task).outcome == expected


def test_describe_names_title_paths_and_command() -> None:
    text = describe(call(locations=locs("/a", "/a", "/b"), rawInput={"command": "make"}))
    assert text == "Agent wants to run: Edit src/app.py — touching /a, /b — command: make"


# -- several at once, cancellation -------------------------------------------------------
async def test_several_pending_prompts_each_get_exactly_their_own_answer() -> None:
    editor = FakeEditor()
    broker, changes = make_broker(editor)
    tasks = [
        asyncio.ensure_future(broker.ask(SESSION, call(toolCallId=f"t{i}"), OPTIONS))
        for i in range(3)
    ]
    ids = await editor.wait_prompts(3)
    assert broker.pending_count("s1") == 3
    by_call = {editor.prompts[m][1]["toolCall"]["toolCallId"]: m for m in ids}
    # answered out of order, and one answered twice: the first answer counts
    editor.answer(by_call["t2"], {"outcome": {"outcome": "selected", "optionId": "always"}})
    editor.answer(by_call["t0"], {"outcome": CANCELLED})
    assert (await tasks[2]).outcome["optionId"] == "always"
    assert (await tasks[0]).outcome == {"outcome": "selected", "optionId": "no"}
    assert not tasks[1].done()
    assert broker.pending_count("s1") == 1
    editor.answer(by_call["t1"], {"outcome": SELECTED_YES})
    assert (await tasks[1]).outcome == SELECTED_YES
    assert broker.pending_count("s1") == 0
    assert (broker.asked, broker.answered) == (3, 3)
    # the status callback saw the count rise to 3 and fall back to 0
    assert [n for _, n in changes] == [1, 2, 3, 2, 1, 0]


async def test_the_status_says_a_prompt_waits_only_once_the_editor_has_been_sent_it() -> None:
    """An editor that shows "needs permission" when the status comes must already have the
    prompt: the status change follows the request, never precedes it."""
    editor = FakeEditor()
    seen: list[tuple[int, int]] = []
    broker = PermissionBroker(
        editor.send_request,
        editor.withdraw,
        rules=lambda: [],
        rich_editor=lambda: True,
        on_change=lambda _session, pending: seen.append((pending, len(editor.prompts))),
    )
    task = asyncio.ensure_future(broker.ask(SESSION, call(), OPTIONS))
    (msg_id,) = await editor.wait_prompts(1)
    assert seen == [(1, 1)]
    editor.answer(msg_id, {"outcome": SELECTED_YES})
    assert (await task).outcome == SELECTED_YES
    assert seen == [(1, 1), (0, 1)]


async def test_cancel_session_answers_its_pending_prompts_cancelled_and_withdraws_them() -> None:
    editor = FakeEditor()
    broker, _ = make_broker(editor)
    mine = [
        asyncio.ensure_future(broker.ask(SESSION, call(toolCallId=f"m{i}"), OPTIONS))
        for i in range(2)
    ]
    other = asyncio.ensure_future(broker.ask(OTHER, call(toolCallId="o"), OPTIONS))
    await editor.wait_prompts(3)
    assert broker.cancel_session("s1") == 2
    # cancelled, never reject_once: the turn was cancelled, the user did not say no
    assert [(await t).outcome for t in mine] == [CANCELLED, CANCELLED]
    assert len(editor.withdrawn) == 2
    withdrawn_calls = {editor.prompts[m][1]["toolCall"]["toolCallId"] for m in editor.withdrawn}
    assert withdrawn_calls == {"m0", "m1"}
    assert broker.cancel_session("s1") == 0  # nothing left to answer
    # the editor answering late changes nothing
    for msg_id in editor.withdrawn:
        if not editor.answers[msg_id].done():
            editor.answer(msg_id, {"outcome": SELECTED_YES})
    await asyncio.sleep(0)
    assert [t.result().outcome for t in mine] == [CANCELLED, CANCELLED]
    # another session's prompt is untouched until its editor answers
    assert not other.done()
    editor.answer(
        next(m for m, (_, p) in editor.prompts.items() if p["sessionId"] == "s2"),
        {"outcome": SELECTED_YES},
    )
    assert (await other).outcome == SELECTED_YES


async def test_cancel_all_answers_everything_cancelled() -> None:
    editor = FakeEditor()
    broker, _ = make_broker(editor)
    tasks = [asyncio.ensure_future(broker.ask(s, call(), OPTIONS)) for s in (SESSION, OTHER)]
    await editor.wait_prompts(2)
    broker.cancel_all()
    results: list[PermissionAnswer] = [await t for t in tasks]
    assert [r.outcome for r in results] == [CANCELLED, CANCELLED]
