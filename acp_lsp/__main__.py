"""Command line: ``acp-lsp`` (LSP over stdio), ``acp-lsp --tcp HOST:PORT``, ``acp-lsp demo``,
``acp-lsp demo-agent`` (the built-in agent alone, speaking ACP on stdio)."""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from acp_lsp import __version__

if TYPE_CHECKING:
    from acp_lsp.features.lifecycle import Ending
    from acp_lsp.secret_store import SecretStore
    from acp_lsp.server import AcpLanguageServer


class RedactSecrets(logging.Filter):
    """Scrub secret values (expanded ``${env:…}``, API keys) from every log record: agents'
    stderr and exit reports reach the log from layers that know nothing of secrets."""

    def __init__(self, secrets: SecretStore) -> None:
        super().__init__()
        self._secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = self._secrets.redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._secrets.redact(record.exc_text)
        return True


def _setup_logging(log_file: str | None, verbose: int) -> None:
    level = logging.DEBUG if verbose > 1 else logging.INFO if verbose else logging.WARNING
    handler: logging.Handler = (
        logging.FileHandler(log_file, encoding="utf-8") if log_file else logging.StreamHandler()
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    # pygls logs every message body at INFO: keep it quiet unless asked twice.
    logging.getLogger("pygls").setLevel(logging.DEBUG if verbose > 1 else logging.WARNING)
    # an acp/* error answer (unknown session, bad params) is a response, not a server fault
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_drop_answered_errors)


def _drop_answered_errors(record: logging.LogRecord) -> bool:
    from pygls.exceptions import JsonRpcException

    exc = record.exc_info[1] if record.exc_info else None
    return not isinstance(exc, JsonRpcException)


def _start_io(server: AcpLanguageServer, end: Ending) -> None:
    """pygls's ``start_io``, except that when stdin closes the end runs at once, on the loop.
    ``asyncio.run`` would first cancel every task and wait for them all, and a task whose
    cleanup waits for an agent that ignores SIGTERM would wait forever: the SIGKILL comes
    from the end (seen in CI: the server outlived its editor)."""
    import asyncio
    import threading

    from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async

    stop = server._stop_event = threading.Event()
    reader = StdinAsyncReader(sys.stdin.buffer, server.thread_pool)
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))

    async def run() -> None:
        await run_async(
            stop_event=stop,
            reader=reader,
            protocol=server.protocol,
            logger=logging.getLogger("pygls.server"),
            error_handler=server.report_server_error,
        )
        end.exit_now()

    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt, SystemExit):
        asyncio.run(run())


def serve(args: argparse.Namespace) -> int:
    # Everything built on the way to ``initialize`` lives as long as the process (modules,
    # classes, lsprotocol's converter), yet its allocations set off a full cycle collection
    # (about 30 ms) before the answer: the collector waits, and lifecycle's ``initialize``
    # handler starts it again once the answer is written.
    gc.disable()
    from acp_lsp.app import create_server
    from acp_lsp.features.lifecycle import ending

    server = create_server()
    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactSecrets(server.secrets))
    end = ending(server)

    def on_signal(signum: int, _frame: object) -> None:
        # The editor killed us (a shutdown that took too long, a closed terminal) or Ctrl-C:
        # agents and terminals live in their own process groups, so take them along, and
        # write the history's last fraction of a second.
        end.signalled(signum)

    if sys.platform == "win32":  # no SIGHUP; SIGBREAK is the Ctrl-Break a parent may send
        ends = (signal.SIGTERM, signal.SIGBREAK, signal.SIGINT)
    else:
        ends = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
    for sig in ends:
        signal.signal(sig, on_signal)
    try:
        if args.tcp:
            host, _, port = args.tcp.rpartition(":")
            server.start_tcp(host or "127.0.0.1", int(port))
        else:
            _start_io(server, end)
    finally:
        # stdin closed, or exit (pygls swallows its code): no agent or terminal outlives the
        # server, and the history is complete
        end.finish()
    # os._exit, as for a signal: a thread may outlive the loop (a stdin read that never
    # returns, the editor tools endpoint's), and Python would wait for it at exit
    end.exit_now()
    return end.code


def main(argv: Sequence[str] | None = None) -> int:
    # pydantic otherwise scans every installed distribution for plugins at first use
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    parser = argparse.ArgumentParser(
        prog="acp-lsp", description="A language server that brings coding agents into editors."
    )
    parser.add_argument("--version", action="version", version=f"acp-lsp {__version__}")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="serve LSP over TCP (debugging)")
    # vscode-languageclient's stdio transport passes --stdio; stdio is the default anyway
    parser.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--log-file", help="write logs here instead of stderr")
    parser.add_argument("-v", "--verbose", action="count", default=0)
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="run a complete session on the built-in demo agent")
    demo.add_argument("--agent", default="demo", help="configured agent to use (default: demo)")
    demo.add_argument("--yes", action="store_true", help="answer permission prompts with allow")
    demo.add_argument("--prompt", default=None, help="the prompt to send")
    demo.add_argument("--editor", choices=["terminal", "nvim"], default="terminal")
    demo.add_argument("--config", default=None, help="acp-lsp.toml with agent settings")
    demo.add_argument("--workspace", default=None, help="use this folder (default: a temp copy)")
    sub.add_parser(
        "demo-agent",
        help="run the built-in offline demo agent itself on stdio (for any ACP client)",
    )
    doctor = sub.add_parser(
        "doctor", help="check the config files, the data dir and each agent; exit 1 on problems"
    )
    doctor.add_argument(
        "--agent", action="append", help="check only this agent (repeatable; default: all)"
    )
    doctor.add_argument("--timeout", type=float, default=60.0, help="seconds per agent start")
    doctor.add_argument("--workspace", default=None, help="the project folder (default: cwd)")
    doctor.add_argument("--no-agents", action="store_true", help="do not start any agent")
    doctor.add_argument(
        "--editor-settings",
        default=None,
        metavar="FILE",
        help="a JSON object of the settings an editor sends as initializationOptions "
        "(agents defined there are checked too); - reads stdin",
    )
    args = parser.parse_args(argv)
    _setup_logging(args.log_file, args.verbose)
    if args.command == "demo":
        from acp_lsp.demo.cli import run_demo

        return run_demo(args)
    if args.command == "doctor":
        from acp_lsp.doctor import run_doctor

        return run_doctor(args)
    if args.command == "demo-agent":
        from acp_lsp.demo.agent.__main__ import main as run_agent

        run_agent()
        return 0
    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
