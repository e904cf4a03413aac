"""Starts the scripted ACP agent for reliability tests, recording its pid.

    python launcher.py PIDS_FILE [--ignore-term] [--print-env NAME] -- SCRIPT_JSON [...]

The n-th start of the agent (counted by the lines in PIDS_FILE) runs the n-th script, the
last one for every start after that; so an agent can crash on its first run and behave after
a restart. It appends its pid to PIDS_FILE and then execs the scripted agent (same pid), so
tests can check by pid that no agent outlives the server. ``--ignore-term``: the agent
ignores SIGTERM (an ignored signal stays ignored across exec), to prove SIGKILL follows.
``--print-env NAME``: write ``NAME=<value>`` to stderr first (an agent that leaks a secret it
was given into its stderr, which the bridge must redact).
"""

from __future__ import annotations

import fcntl
import os
import signal
import sys
from pathlib import Path

SCRIPTED_ACP = Path(__file__).resolve().parents[1] / "agents" / "scripted_acp.py"


def main() -> None:
    args = sys.argv[1:]
    sep = args.index("--")
    options, scripts = args[:sep], args[sep + 1 :]
    pids_file = Path(options[0])
    with open(pids_file, "a+", encoding="ascii") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        starts = len([line for line in fh.read().splitlines() if line.strip()])
        fh.write(f"{os.getpid()}\n")
    if "--print-env" in options:
        name = options[options.index("--print-env") + 1]
        sys.stderr.write(f"{name}={os.environ.get(name, '')}\n")
        sys.stderr.flush()
    if "--ignore-term" in options:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    chosen = scripts[min(starts, len(scripts) - 1)]
    argv = [sys.executable, str(SCRIPTED_ACP)]
    argv += [chosen] if not chosen.lstrip().startswith("{") else ["-c", chosen]
    os.execv(sys.executable, argv)


if __name__ == "__main__":
    main()
