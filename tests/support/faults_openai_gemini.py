"""Codex (codex-acp) and Gemini CLI set up for the model-fault tests, their retries bounded.

What each agent does on its own (read from their code and measured against the scripted
model server; the numbers are in docs/reliability.md):

- **Codex** retries a request on 5xx and transport errors (``request_max_retries``, default
  4, backoff from 200 ms), never on a 429; then a turn step that failed with a 5xx, a 401, a
  cut stream or an idle stream is tried again (``stream_max_retries``, default 5), each time
  with a "Reconnecting... n/m" line on its stderr only. ``stream_idle_timeout_ms`` (default
  300 s) ends a stalled stream. A broken SSE line is skipped. All three are keys of the
  provider in its config.toml, given here with ``-c``.
- **Gemini CLI** retries 429, 499 and 5xx (``general.maxAttempts`` in its settings, default
  10, capped at 10), from 5 s ±30 % doubling to 30 s; ``retry-after`` is not read. The
  setting is ignored for the default (auto) model: its last-resort flash model fixes 10
  attempts (about 3.5 minutes of backoff). A named model (``GEMINI_MODEL``) follows it. A
  stream that breaks after it started is not retried.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.model_server import ModelServer
from tests.support.lsp_editor import TestEditor
from tests.support.production import codex_config, open_session, start_agent

CODEX_RETRIES = {"request_max_retries": 2, "stream_max_retries": 2}
# a model whose policy leaves the number of attempts to general.maxAttempts
GEMINI_MODEL = "gemini-2.5-flash"
GEMINI_ATTEMPTS = 2


def codex_args(**provider: Any) -> list[str]:
    """``-c`` overrides of the scripted provider's keys in Codex's config.toml."""
    out: list[str] = []
    for key, value in {**CODEX_RETRIES, **provider}.items():
        out += ["-c", f"model_providers.scripted.{key}={value}"]
    return out


async def start(
    tmp_path: Path, model: ModelServer, agent: str, **provider: Any
) -> tuple[TestEditor, str]:
    """acp-lsp with ``agent`` ("codex" or "gemini") against ``model``, and a new session.
    ``provider``: more of Codex's provider keys (e.g. ``stream_idle_timeout_ms``)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    if agent == "codex":
        config = codex_config(model, tmp_path / "home")
        config["args"] = codex_args(**provider)
        options = {"agents": {"codex": config}}
        editor = await start_agent(tmp_path, ws, "codex", model, options=options)
        # full-access: Codex's sandbox cannot start on every machine, and no command runs here
        return editor, await open_session(editor, "full-access")
    # Gemini writes a report file per failed request to the temp dir: keep them in the test's
    reports = tmp_path / "tmp"
    reports.mkdir()
    editor = await start_agent(
        tmp_path,
        ws,
        "gemini",
        model,
        env={"GEMINI_MODEL": GEMINI_MODEL, "TMPDIR": str(reports)},
        settings={"general": {"maxAttempts": GEMINI_ATTEMPTS}},
    )
    return editor, await open_session(editor)


def agent_log(editor: TestEditor, words: str) -> list[str]:
    """The lines of the agent's stderr (``window/logMessage``) that hold ``words``."""
    return [m.message for m in editor.log_messages if words in m.message]
