"""Command line: ``acp-lsp`` (LSP over stdio), ``acp-lsp --tcp HOST:PORT``, ``acp-lsp demo``."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from acp_lsp import __version__


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


def serve(args: argparse.Namespace) -> int:
    from acp_lsp.features.lifecycle import kill_children_now
    from acp_lsp.server import create_server

    server = create_server()
    try:
        if args.tcp:
            host, _, port = args.tcp.rpartition(":")
            server.start_tcp(host or "127.0.0.1", int(port))
        else:
            server.start_io()
    finally:
        # stdin closed or exit without shutdown: no agent or terminal outlives the server
        kill_children_now(server)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="acp-lsp", description="A language server that brings coding agents into editors."
    )
    parser.add_argument("--version", action="version", version=f"acp-lsp {__version__}")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="serve LSP over TCP (debugging)")
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
    args = parser.parse_args(argv)
    _setup_logging(args.log_file, args.verbose)
    if args.command == "demo":
        from acp_lsp.demo_cli import run_demo

        return run_demo(args)
    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
