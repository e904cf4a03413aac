"""``python -m tests.aap_server --port N [--scenario NAME] [--api-key KEY]``."""

from __future__ import annotations

import argparse

import uvicorn

from tests.aap_server.app import BASE_PATH, create_app
from tests.aap_server.model import SCENARIOS
from tests.aap_server.state import ServerState


def main() -> None:
    parser = argparse.ArgumentParser(description="AAP v3 test server with a scripted model")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument(
        "--scenario",
        choices=sorted(SCENARIOS),
        help="use this scenario for every turn (default: picked from the user's text)",
    )
    parser.add_argument("--api-key", help="require this bearer key (GET /meta stays public)")
    args = parser.parse_args()
    state = ServerState()
    state.scenario = args.scenario
    state.api_key = args.api_key
    print(f"AAP test server: http://{args.host}:{args.port}{BASE_PATH}", flush=True)
    uvicorn.run(create_app(state), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
