"""The LSP protocol subclass: typed acp/* params, the experimental capability, raw sends.

pygls structures unknown methods into untyped namedtuples and, when structuring fails, drops
the request without an answer. Here every acp/* request is validated into its params model
(acp_lsp.protocol) while the message is read; a bad one is answered with InvalidParams naming
the field, and nothing else is lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

import attrs
from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCProtocol,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)
from pygls.protocol.language_server import lsp_method

from acp_lsp import protocol as p

if TYPE_CHECKING:
    from pygls.lsp.client import LanguageClient  # the editor end only: not on the server's path

log = logging.getLogger(__name__)


@attrs.define
class InvalidRequest:
    """An acp/* request whose params failed validation; answered with an error at once."""

    id: int | str
    method: str
    message: str
    jsonrpc: str = "2.0"


class AcpProtocol(LanguageServerProtocol):
    """LanguageServerProtocol + acp/* params models + ``capabilities.experimental.acp``."""

    client_acp: dict[str, Any] = {}
    client_name: str | None = None  # initialize clientInfo.name, for messages that name it

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._after_response: dict[Any, list[Callable[[], None]]] = {}

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" not in data:
            return data  # a nested object (the hook sees each): 40,000 in a big answer
        if "method" not in data and "id" not in data:
            # pygls's object_hook sees every nested object: a payload that merely has a
            # "jsonrpc" key (say, in _meta) is data, not a message
            return data
        method = data.get("method")
        if (
            "jsonrpc" in data
            and "id" in data
            and isinstance(method, str)
            and method in p.EDITOR_REQUESTS  # names only: pydantic loads on first acp/*
        ):
            try:
                params = p.parse_params(method, data.get("params"))
            except p.ParamsError as exc:
                return InvalidRequest(id=data["id"], method=method, message=str(exc))
            return JsonRPCRequestMessage(
                id=data["id"], method=method, jsonrpc=data["jsonrpc"], params=params
            )
        raw = raw_response(self, data)
        return raw if raw is not None else super().structure_message(data)

    def handle_message(self, message: Any) -> None:
        if isinstance(message, InvalidRequest):
            log.info("invalid params for %s: %s", message.method, message.message)
            self._send_data(
                {
                    "jsonrpc": JsonRPCProtocol.VERSION,
                    "id": message.id,
                    "error": {"code": p.INVALID_PARAMS, "message": message.message},
                }
            )
            return
        super().handle_message(message)

    def _serialize_message(self, data: Any) -> Any:
        # Pydantic params models can appear in echoed structures; dump them by alias.
        dump = getattr(data, "model_dump", None)
        if dump is not None:
            return dump(by_alias=True, exclude_none=True)
        if type(data) is JsonRPCResponseMessage and type(data.result) is dict:
            # A plain JSON answer (every acp/* one): json.dumps writes it as it is, calling
            # back here only for what it cannot (attrs or pydantic values inside), which the
            # converter would have done too. The converter walked every value in Python: two
            # thirds of the time a 10,000-message acp/getSession took.
            return {"id": data.id, "jsonrpc": data.jsonrpc, "result": data.result}
        return super()._serialize_message(data)

    def after_response(self, fn: Callable[[], None]) -> bool:
        """Run ``fn`` right after the answer to the request being handled is written; False
        outside a request (the caller then picks its own moment)."""
        msg_id = self.msg_id
        if msg_id is None or msg_id not in self._request_futures:
            return False
        self._after_response.setdefault(msg_id, []).append(fn)
        return True

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        super()._send_response(msg_id, result, error)
        for fn in self._after_response.pop(msg_id, ()):
            fn()

    def send_notification_raw(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification whose params are plain JSON (the hot path: no converter)."""
        self._send_data({"jsonrpc": JsonRPCProtocol.VERSION, "method": method, "params": params})

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        experimental = params.capabilities.experimental
        acp = experimental.get("acp") if isinstance(experimental, dict) else None
        self.client_acp = dict(acp) if isinstance(acp, dict) else {}
        self.client_name = params.client_info.name if params.client_info else None
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        caps = result.capabilities
        existing = caps.experimental if isinstance(caps.experimental, dict) else {}
        caps.experimental = {**existing, "acp": p.server_capability()}
        return result


def structure_raw_acp(proto: JsonRPCProtocol, data: dict[str, Any]) -> Any:
    """acp/* messages and answers to custom requests as plain JSON, or None for the rest."""
    if "jsonrpc" in data and "method" not in data and "id" not in data:
        return data  # a nested payload with a "jsonrpc" key, not a message
    method = data.get("method")
    if isinstance(method, str) and method.startswith("acp/") and "jsonrpc" in data:
        if "id" in data:
            return JsonRPCRequestMessage(
                id=data["id"], method=method, jsonrpc=data["jsonrpc"], params=data.get("params")
            )
        return JsonRPCNotification(
            method=method, jsonrpc=data["jsonrpc"], params=data.get("params")
        )
    return raw_response(proto, data)


class AcpClientProtocol(LanguageServerProtocol):
    """The editor end (the demo's terminal editor): acp/* messages stay plain JSON."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        raw = structure_raw_acp(self, data)
        return raw if raw is not None else super().structure_message(data)


def raw_response(proto: JsonRPCProtocol, data: dict[str, Any]) -> Any:
    """Answers to untyped (custom) requests stay plain JSON instead of pygls namedtuples."""
    if (
        "jsonrpc" in data
        and "id" in data
        and "method" not in data
        and "error" not in data
        and data["id"] in proto._result_types
        and proto._result_types[data["id"]] is None
    ):
        del proto._result_types[data["id"]]
        return JsonRPCResponseMessage(
            id=data["id"], jsonrpc=data["jsonrpc"], result=data.get("result")
        )
    return None


async def stop_client(client: LanguageClient) -> None:
    """End a client-side session with a server the client started: shutdown and exit where
    the server still answers, then stop the process either way."""
    try:
        await asyncio.wait_for(client.shutdown_async(None), 10)
        client.exit(None)
    except Exception:
        pass  # the server is gone or hung: stop() ends it
    await client.stop()  # type: ignore[no-untyped-call]
