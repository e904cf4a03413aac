"""What a plain LSP editor does with acp-lsp: run its commands, read its code actions."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from lsprotocol import types

from tests.support.lsp_editor import JsonObject, TestEditor


async def command(editor: TestEditor, name: str, *args: Any) -> Any:
    return await editor.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=list(args))
    )


async def code_actions(editor: TestEditor, params: types.CodeActionParams) -> list[JsonObject]:
    """textDocument/codeAction as JSON: the client-side converter reads `CodeAction | Command`
    items as Command, so the test looks at the wire shape itself (as eglot does)."""
    msg_id = str(uuid.uuid4())
    future = editor.protocol.send_request(types.TEXT_DOCUMENT_CODE_ACTION, params, msg_id=msg_id)
    editor.protocol._result_types[msg_id] = None
    result = await asyncio.wrap_future(future) if not asyncio.isfuture(future) else await future
    return list(result or [])
