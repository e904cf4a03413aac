"""The scripted model server's faults (tests/model_server/faults.py), per API dialect, seen
by an HTTP client: the status, headers and body of an error; the shape of a faulted stream;
which requests get a fault and how many."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.model_server import ModelServer
from tests.model_server.faults import (
    Fault,
    bad_key,
    cut_stream,
    html_page,
    malformed_sse,
    overloaded,
    rate_limited,
    server_error,
    stall_stream,
)
from tests.model_server.script import HUGE_END, Say, Script, huge_answer

TEXT = "one two three four five six"
SCRIPT = Script("faults", [[Say(TEXT, chunks=6)], [Say("Second turn.")]])


def _prompt(api: str, stream: bool = True, side: bool = False) -> tuple[str, dict[str, Any]]:
    """(path, body) of a turn request (or a side request: no tools) in ``api``'s dialect."""
    if api == "anthropic":
        tools = [] if side else [{"name": "Read", "input_schema": {"type": "object"}}]
        body = {"model": "m", "stream": stream, "tools": tools}
        return "/v1/messages", {**body, "messages": [{"role": "user", "content": "hi"}]}
    if api == "openai-chat":
        fn = {"name": "read_file", "parameters": {"type": "object"}}
        body = {
            "model": "m",
            "stream": stream,
            "tools": [] if side else [{"type": "function", "function": fn}],
        }
        return "/v1/chat/completions", {**body, "messages": [{"role": "user", "content": "hi"}]}
    if api == "openai-responses":
        tools = [] if side else [{"type": "function", "name": "exec_command", "parameters": {}}]
        item = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "hi"}],
        }
        return "/v1/responses", {"model": "m", "stream": stream, "tools": tools, "input": [item]}
    decl = [{"name": "read_file", "parametersJsonSchema": {"type": "object"}}]
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    return f"/v1beta/models/m:{method}", {
        **body,
        "tools": [] if side else [{"functionDeclarations": decl}],
    }


APIS = ("anthropic", "openai-chat", "openai-responses", "gemini")


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer(SCRIPT) as model:
        yield model


def _post(model: ModelServer, api: str, stream: bool = True, side: bool = False) -> httpx.Response:
    path, body = _prompt(api, stream, side)
    return httpx.post(model.url + path, json=body, timeout=30)


def _events(raw: bytes) -> list[bytes]:
    return [e for e in raw.replace(b"\r\n", b"\n").split(b"\n\n") if e.strip()]


def _data(event: bytes) -> Any:
    line = next(ln for ln in event.split(b"\n") if ln.startswith(b"data:"))
    payload = line[5:].strip()
    return payload.decode() if payload == b"[DONE]" else json.loads(payload)


def _text(api: str, raw: bytes) -> str:
    """The answer's text out of a whole stream."""
    out = []
    for event in _events(raw):
        data = _data(event)
        if api == "anthropic" and data.get("type") == "content_block_delta":
            out.append(data["delta"].get("text", ""))
        elif api == "openai-chat" and data != "[DONE]" and data["choices"]:
            out.append(data["choices"][0]["delta"].get("content") or "")
        elif api == "openai-responses" and data["type"] == "response.output_text.delta":
            out.append(data["delta"])
        elif api == "gemini":
            out += [p.get("text", "") for p in data["candidates"][0]["content"]["parts"]]
    return "".join(out)


def _error_reason(api: str, body: Any) -> str:
    if api == "anthropic":
        assert body["type"] == "error"
        return f"{body['error']['type']}: {body['error']['message']}"
    if api == "gemini":
        return f"{body['error']['status']} {body['error']['code']}: {body['error']['message']}"
    return f"{body['error']['type']}/{body['error']['code']}: {body['error']['message']}"


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    ("fault", "status"),
    [(rate_limited(2), 429), (server_error(), 500), (bad_key(), 401), (overloaded(503), 503)],
    ids=["429", "500", "401", "503"],
)
def test_a_status_fault_answers_the_dialects_own_error_once(
    server: ModelServer, api: str, fault: Fault, status: int
) -> None:
    server.inject(fault)
    first = _post(server, api)
    assert first.status_code == status
    assert first.headers["content-type"] == "application/json"
    assert _error_reason(api, first.json())  # the dialect's shape, with a message
    if status == 429:
        assert first.headers["retry-after"] == "2"
    second = _post(server, api)
    assert second.status_code == 200
    assert _text(api, second.content) == TEXT
    assert [(f, r.kind) for f, r in server.faulted] == [(fault, "turn")]


@pytest.mark.parametrize(
    ("api", "reason"),
    [
        ("anthropic", "overloaded_error: Overloaded"),
        ("openai-chat", "server_error/None: The server is overloaded or not ready yet."),
        ("gemini", "UNAVAILABLE 503: The model is overloaded. Please try again later."),
    ],
)
def test_overloaded_reads_as_each_api_words_it(server: ModelServer, api: str, reason: str) -> None:
    server.inject(overloaded(529 if api == "anthropic" else 503))
    assert _error_reason(api, _post(server, api).json()) == reason


@pytest.mark.parametrize("api", APIS)
def test_side_requests_are_never_faulted(server: ModelServer, api: str) -> None:
    server.inject(server_error())
    assert _post(server, api, side=True).status_code == 200
    assert server.faulted == []
    assert _post(server, api).status_code == 500


def test_faults_apply_in_order_times_each(server: ModelServer) -> None:
    server.inject(server_error(times=2), bad_key(), Fault("status", 418, body='{"odd": 1}'))
    got = [_post(server, "anthropic") for _ in range(5)]
    assert [r.status_code for r in got] == [500, 500, 401, 418, 200]
    assert got[3].json() == {"odd": 1}
    assert [f.status for f, _ in server.faulted] == [500, 500, 401, 418]


@pytest.mark.parametrize("api", APIS)
def test_an_html_page_comes_instead_of_json(server: ModelServer, api: str) -> None:
    server.inject(html_page(502))
    response = _post(server, api)
    assert response.status_code == 502
    assert response.headers["content-type"].startswith("text/html")
    assert "<title>502 Bad Gateway</title>" in response.text


def _stream(model: ModelServer, api: str) -> tuple[list[bytes], Exception | None]:
    """The raw chunks a streamed turn request got, and the error that ended it if any."""
    path, body = _prompt(api)
    chunks: list[bytes] = []
    try:
        with httpx.stream("POST", model.url + path, json=body, timeout=30) as response:
            assert response.status_code == 200
            for chunk in response.iter_raw():
                chunks.append(chunk)
    except httpx.HTTPError as exc:
        return chunks, exc
    return chunks, None


@pytest.mark.parametrize("api", APIS)
def test_a_cut_stream_closes_the_connection_after_some_events(
    server: ModelServer, api: str
) -> None:
    server.inject(cut_stream(after=3))
    chunks, error = _stream(server, api)
    assert isinstance(error, httpx.RemoteProtocolError)  # incomplete chunked read
    assert len(_events(b"".join(chunks))) == 3
    again, error = _stream(server, api)
    assert error is None and _text(api, b"".join(again)) == TEXT


@pytest.mark.parametrize("api", APIS)
def test_a_malformed_line_comes_mid_stream(server: ModelServer, api: str) -> None:
    server.inject(malformed_sse(after=2))
    chunks, error = _stream(server, api)
    assert error is None
    events = _events(b"".join(chunks))
    with pytest.raises(json.JSONDecodeError):
        _data(events[2])
    rest = b"\n\n".join(events[:2] + events[3:])
    assert _text(api, rest) == TEXT  # the stream went on after the garbage
    if api in ("anthropic", "openai-responses"):  # the broken event keeps the event name
        assert events[2].split(b"\n")[0] == events[1].split(b"\n")[0]


@pytest.mark.parametrize("api", APIS)
def test_a_stalled_stream_waits_then_goes_on(server: ModelServer, api: str) -> None:
    server.inject(stall_stream(after=2, seconds=60))
    result: list[tuple[list[bytes], Exception | None]] = []
    reader = threading.Thread(target=lambda: result.append(_stream(server, api)))
    reader.start()
    assert server.wait_stalled(10)
    assert reader.is_alive()  # nothing more came while stalled
    server.release()
    reader.join(30)
    chunks, error = result[0]
    assert error is None and _text(api, b"".join(chunks)) == TEXT


def test_a_stall_ends_by_itself_after_its_seconds(server: ModelServer) -> None:
    server.inject(stall_stream(after=1, seconds=0.2))
    chunks, error = _stream(server, "openai-chat")
    assert error is None and _text("openai-chat", b"".join(chunks)) == TEXT
    assert server.wait_stalled(0)


def test_a_client_that_leaves_a_stall_is_not_waited_for(server: ModelServer) -> None:
    """The cancel case: the client closes during the stall; the next request is answered."""
    server.inject(stall_stream(after=2, seconds=600))
    path, body = _prompt("anthropic")
    with httpx.stream("POST", server.url + path, json=body, timeout=30) as response:
        got = b""
        for chunk in response.iter_raw():
            got += chunk
            if len(_events(got)) >= 2:
                break
    assert server.wait_stalled(10)
    chunks, error = _stream(server, "anthropic")
    assert error is None and _text("anthropic", b"".join(chunks)) == TEXT


@pytest.mark.parametrize("api", ["anthropic", "openai-chat"])
def test_stream_faults_break_an_answer_that_is_not_streamed(server: ModelServer, api: str) -> None:
    server.inject(cut_stream(), malformed_sse())
    with pytest.raises(httpx.RemoteProtocolError):
        _post(server, api, stream=False)
    broken = _post(server, api, stream=False)
    assert broken.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        broken.json()
    assert _post(server, api, stream=False).json()


def test_a_huge_answer_streams_whole() -> None:
    script = huge_answer(10 * 1024 * 1024)
    first = script.turns[0][0]
    assert isinstance(first, Say) and len(first.text) > 10_000_000
    with ModelServer(script) as model:
        chunks, error = _stream(model, "openai-chat")
    text = _text("openai-chat", b"".join(chunks))
    assert error is None and text == first.text and text.endswith(HUGE_END)


def test_cleared_faults_are_not_played(server: ModelServer) -> None:
    server.inject(server_error(times=50))
    assert _post(server, "gemini").status_code == 500
    server.clear_faults()
    assert _post(server, "gemini").status_code == 200
    assert len(server.faulted) == 1


def test_qwens_recovery_prompt_after_a_cut_gets_the_rest_of_the_answer(server: ModelServer) -> None:
    """Qwen Code asks the model to go on after a stream cut mid-answer: the same turn, and the
    answer's text past what was delivered."""
    path, body = _prompt("openai-chat")
    recovery = "The connection dropped mid-response. Resume directly — no apology."
    body["messages"] += [
        {"role": "assistant", "content": "one two th"},
        {"role": "user", "content": recovery},
    ]
    response = httpx.post(server.url + path, json=body, timeout=30)
    assert _text("openai-chat", response.content) == "ree four five six"
    assert [r.kind for r in server.requests] == ["turn"]


def test_requests_say_when_they_came(server: ModelServer) -> None:
    server.inject(rate_limited(1))
    first = _post(server, "openai-chat")
    second = _post(server, "openai-chat")
    assert (first.status_code, second.status_code) == (429, 200)
    before, after = server.turn_requests()
    assert before.at < after.at
