"""HTTP for one AAP v3 server: JSON endpoints and turn streams, errors as BackendError.

Paths are joined under the configured base URL (a server may mount AAP at ``…/v1``). Control
requests time out after ``request_timeout``; a turn only bounds connecting, since a model may
think for minutes between events. The API key goes in ``Authorization: Bearer`` and is
scrubbed from every error text.
"""

from __future__ import annotations

import functools
import json
import logging
import ssl
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any
from urllib.parse import quote

import httpx
from httpx_sse import EventSource

from acp_lsp import protocol as p
from acp_lsp.backends.aap_events import Event, message_events
from acp_lsp.backends.base import BackendError

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]


@functools.cache
def _tls_context() -> ssl.SSLContext:
    # Loading the CA bundle takes ~0.1 s: every AAP client of the process shares one context.
    return httpx.create_ssl_context()


def session_path(session_id: str, *rest: str) -> str:
    return "/".join(("sessions", quote(session_id, safe=""), *rest))


class AapHttp:
    def __init__(
        self,
        agent: str,
        url: str,
        api_key: str | None,
        timeout: float,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.agent = agent
        self.url = url
        self.timeout = timeout
        self._api_key = api_key or None
        headers = {"Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        self._client = httpx.AsyncClient(
            base_url=url.rstrip("/") + "/",
            headers=headers,
            timeout=httpx.Timeout(timeout),
            transport=transport,
            verify=_tls_context(),
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    # -- JSON endpoints ----------------------------------------------------------------------

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        params: dict[str, str] | None = None,
        session_id: str | None = None,
    ) -> Any:
        """One control request; the parsed JSON answer (None for an empty body)."""
        what = f"{method} /{path.split('?')[0]}"
        try:
            response = await self._client.request(method, path, json=body, params=params)
        except httpx.TimeoutException:
            raise BackendError(
                p.AGENT_UNAVAILABLE,
                f"AAP agent {self.agent!r}: {what} got no answer within {self.timeout:g}s "
                f"from {self.url}",
            ) from None
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from None
        self._check(response, what, session_id)
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise BackendError(
                p.AGENT_ERROR, f"AAP agent {self.agent!r}: {what} answered with invalid JSON"
            ) from None

    # -- turns -------------------------------------------------------------------------------

    async def turn(self, session_id: str, body: JsonObject) -> AsyncGenerator[Event, None]:
        """POST a turn and yield its events in order (SSE, or a JSON answer replayed as events).

        Use with ``contextlib.aclosing``: closing the generator aborts the request (cancel).
        The last event is ``turn_stop`` unless the stream ended early.
        """
        path = session_path(session_id, "turns")
        what = f"POST /{path}"
        timeout = httpx.Timeout(self.timeout, read=None)
        headers = {"Accept": "text/event-stream, application/json"}
        try:
            async with self._client.stream(
                "POST", path, json=body, timeout=timeout, headers=headers
            ) as response:
                if response.is_error:
                    await response.aread()
                self._check(response, what, session_id)
                kind = response.headers.get("content-type", "").partition(";")[0].strip()
                if kind == "text/event-stream":
                    async for sse in EventSource(response).aiter_sse():
                        yield sse.event, self._event_data(sse.event, sse.data)
                else:
                    async for event in self._json_turn(response, what):
                        yield event
        except httpx.TimeoutException:
            raise BackendError(
                p.AGENT_UNAVAILABLE,
                f"AAP agent {self.agent!r}: {what} timed out after {self.timeout:g}s "
                f"(connecting to {self.url})",
            ) from None
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            raise BackendError(
                p.AGENT_ERROR,
                f"AAP agent {self.agent!r}: the turn stream broke ({self._scrub(str(exc))})",
            ) from None
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from None

    def _event_data(self, event: str, raw: str) -> Any:
        if not raw:
            return {}
        try:
            return json.loads(raw)
        except ValueError:
            log.warning("AAP agent %s: event %r with invalid JSON data ignored", self.agent, event)
            return None

    async def _json_turn(self, response: httpx.Response, what: str) -> AsyncIterator[Event]:
        try:
            data = json.loads(await response.aread())
        except ValueError:
            raise BackendError(
                p.AGENT_ERROR,
                f"AAP agent {self.agent!r}: {what} answered with invalid JSON "
                "(the connection may have been cut)",
            ) from None
        if not isinstance(data, dict):
            raise BackendError(p.AGENT_ERROR, f"AAP agent {self.agent!r}: {what}: not an object")
        yield "turn_start", {}
        messages = data.get("messages")
        for event in message_events(messages if isinstance(messages, list) else []):
            if event[0] != "user":
                yield event
        if "stopReason" in data:
            yield "turn_stop", {"stopReason": data["stopReason"]}

    # -- errors ------------------------------------------------------------------------------

    def _scrub(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    def _unreachable(self, exc: httpx.HTTPError) -> BackendError:
        return BackendError(
            p.AGENT_UNAVAILABLE,
            f"AAP agent {self.agent!r}: cannot reach {self.url}: "
            f"{self._scrub(str(exc)) or type(exc).__name__}",
        )

    def _check(self, response: httpx.Response, what: str, session_id: str | None) -> None:
        status = response.status_code
        if status < 400:
            return
        detail = self._error_text(response)
        suffix = f": {detail}" if detail else ""
        data: JsonObject = {"status": status}
        if detail:
            data["error"] = detail
        if status in (401, 403):
            raise BackendError(
                p.AUTH_REQUIRED,
                f"AAP agent {self.agent!r} refused the request (HTTP {status}{suffix}); "
                "check its apiKey setting",
                {**data, "authMethods": []},
            )
        if status == 404 and session_id is not None:
            raise BackendError(
                p.UNKNOWN_SESSION,
                f"AAP agent {self.agent!r} has no session {session_id!r}{suffix}",
                {**data, "sessionId": session_id},
            )
        raise BackendError(
            p.AGENT_ERROR, f"AAP agent {self.agent!r}: {what} failed: HTTP {status}{suffix}", data
        )

    def _error_text(self, response: httpx.Response) -> str:
        """The reference SDK's ``{"error": "…"}`` body, else a short plain-text body."""
        try:
            body = response.json()
        except ValueError:
            text = response.text.strip()
            return self._scrub(text[:300]) if text and "<" not in text[:1] else ""
        if isinstance(body, dict) and isinstance(body.get("error"), str):
            return self._scrub(body["error"])
        return ""

    async def history(self, session_id: str, kinds: list[str]) -> list[Any]:
        """The session's history: the first of ``kinds`` the server has (``full`` is exact,
        then ``compacted``); [] when none is available."""
        for kind in kinds:
            try:
                answer = await self.request(
                    "GET", session_path(session_id, "history"), params={"type": kind}
                )
            except BackendError as exc:
                if isinstance(exc.data, dict) and exc.data.get("status") in (400, 404):
                    continue  # type not available after all: try the other one
                raise
            history = answer.get("history") if isinstance(answer, dict) else None
            messages = history.get(kind) if isinstance(history, dict) else None
            if isinstance(messages, list):
                return messages
        return []
