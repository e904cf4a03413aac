"""A peer that ignores SIGTERM and never reads stdin: only SIGKILL stops it."""

import signal
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
sys.stdout.write('{"jsonrpc":"2.0","method":"ready","params":{}}\n')
sys.stdout.flush()
time.sleep(100)
