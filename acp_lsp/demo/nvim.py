"""``acp-lsp demo --editor nvim``: real Neovim with the plugin of this checkout and the demo."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

LAUNCHER = Path(__file__).resolve().parents[2] / "scripts" / "nvim-demo.sh"


def run_nvim_demo(args: argparse.Namespace) -> int:
    if not LAUNCHER.exists():
        sys.stderr.write(
            "acp-lsp demo --editor nvim needs a checkout of acp-lsp (the Neovim plugin and "
            f"{LAUNCHER.name} are not part of the installed package)\n"
        )
        return 2
    argv = ["bash", str(LAUNCHER)]
    if args.workspace:
        argv += ["--workspace", args.workspace]
    if args.agent != "demo":
        argv += ["--agent", args.agent]
    if args.config:
        argv += ["--config", args.config]
    return subprocess.call(argv, env={**os.environ, "ACP_LSP_PYTHON": sys.executable})
