"""``python -m tests.model_server --port N --script NAME [--root DIR]``."""

from __future__ import annotations

import argparse
import os
import sys

import uvicorn

from tests.model_server.app import create_app
from tests.model_server.script import SCRIPTS, ServerState


def main() -> None:
    parser = argparse.ArgumentParser(
        description="scripted model server (Anthropic, OpenAI, Gemini)"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--script", choices=sorted(SCRIPTS), default="answer")
    parser.add_argument("--root", default=os.getcwd(), help="workspace the script's paths are in")
    args = parser.parse_args()
    state = ServerState(script=SCRIPTS[args.script](os.path.abspath(args.root)))
    sys.stderr.write(f"scripted model server: http://{args.host}:{args.port} ({args.script})\n")
    uvicorn.run(create_app(state), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
