"""The bridge's per-chunk hot path in one process: CPU time per streamed chunk, no I/O.

    python bench/hot_path.py [--chunks N] [--repeats R] [--profile] [--against DIR]
                             [--history] [--flush-every N]

Frames of the flood agent go through the real objects the server uses — the wire's line
handler, the ACP backend, the session, the editor side and the update batcher — into a
writer that only counts bytes. It isolates what the bridge itself costs per chunk from the
pipes and the other processes (bench/run.py measures those end to end). ``--profile``
prints cProfile's top functions instead.

``--against DIR`` loads a second copy of the package from DIR/acp_lsp (say, the last
commit's: ``git archive HEAD acp_lsp | tar -x -C DIR``) and alternates the two repeat by
repeat in this one process, so a busy machine slows both alike: an A/B of a change.

``--history`` also records the session in a session history (a SQLite file in a temporary
directory, as the server does by default) and flushes it every ``--flush-every`` chunks
(the server flushes every 0.25 s: ~57,000 chunks of a flood), so observing, collecting and
the store's write (in its own thread; CPU time counts every thread) are part of the figure;
the same tree is then also measured with the history off ("no history"). A tree without a
history (``--against`` the tree before it) is measured without.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH / "agents"))

from flood_agent import chunk_frames  # noqa: E402


class CountingWriter:
    def __init__(self) -> None:
        self.bytes = 0

    def write(self, data: bytes) -> None:
        self.bytes += len(data)

    def close(self) -> None:
        pass


class Harness:
    """One copy of the package, wired as the server wires it, fed frames by 64 KiB reads."""

    def __init__(self, root: Path, history: bool = False) -> None:
        for name in [m for m in sys.modules if m == "acp_lsp" or m.startswith("acp_lsp.")]:
            del sys.modules[name]
        sys.path.insert(0, str(root))
        try:
            from acp_lsp.backends.acp import AcpBackend
            from acp_lsp.backends.wire import AgentProcess, LineBuffer
            from acp_lsp.config import AgentConfig

            try:
                from acp_lsp.app import create_server
            except ImportError:  # an older tree (--against): the factory lived in server.py
                from acp_lsp.server import create_server  # type: ignore[attr-defined,no-redef]

            self.server = create_server()  # lazy imports inside resolve now, to this copy
            backend = self.server.make_backend("flood", AgentConfig(command=sys.executable))
        finally:
            sys.path.remove(str(root))
        assert isinstance(backend, AcpBackend)
        self.writer = CountingWriter()
        self.server.protocol.set_writer(self.writer)
        self.session = backend._adopt("bench-1", os.getcwd(), [])
        self.server.hub.sessions[self.session.session_id] = self.session
        self.server.editor.batcher._queues[self.session.session_id].held = False
        self.wire = AgentProcess.__new__(AgentProcess)  # only the line handler is used
        self.wire.name = "flood"
        self.wire._on_notification = backend._on_notification
        self.line_buffer = LineBuffer
        self.recorder: Any = None
        if history and hasattr(self.server, "history"):
            self.data_dir = tempfile.TemporaryDirectory(prefix="hot-path-history-")
            path = str(Path(self.data_dir.name) / "history.sqlite3")  # one file per copy
            self.server.settings.history.path = path
            self.recorder = self.server.history().recorder
            self.recorder._spawn = lambda coro, name: coro.close()  # flushed by feed() only
            self.recorder.track(self.session, None, "acp")

    async def feed(self, data: bytes, flush_every: int) -> float:
        block = 1 << 16
        lines = self.line_buffer()
        handle = self.wire._handle_line
        recorder = self.recorder
        unflushed = 0
        t0 = time.process_time()
        for start in range(0, len(data), block):
            for line in lines.feed(data[start : start + block]):
                handle(line)
                unflushed += 1
            await asyncio.sleep(0)
            if recorder is not None and unflushed >= flush_every:
                unflushed = 0
                await recorder.flush()
        self.server.editor.batcher.flush_all()
        if recorder is not None:
            await recorder.flush()
        return time.process_time() - t0

    async def close(self) -> None:
        if self.recorder is not None:
            await self.recorder.close()
            self.data_dir.cleanup()


async def run(
    chunks: int,
    repeats: int,
    profile: bool,
    against: Path | None,
    history: bool = False,
    flush_every: int = 20_000,
) -> dict[str, Any]:
    harnesses = {"this tree": Harness(BENCH.parent, history)}
    if history:  # what the history costs: the same tree with it off
        harnesses["no history"] = Harness(BENCH.parent)
    if against is not None:
        harnesses["against"] = Harness(against, history)
    data = chunk_frames("bench-1", 0, chunks, 40)
    times: dict[str, list[float]] = {name: [] for name in harnesses}
    profiler = cProfile.Profile() if profile else None
    for _ in range(repeats):
        for name, harness in harnesses.items():
            if profiler:
                profiler.enable()
            times[name].append(await harness.feed(data, flush_every))
            if profiler:
                profiler.disable()
    for harness in harnesses.values():
        await harness.close()
    if profiler:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    return {
        name: {
            "us_per_chunk": statistics.median(ts) / chunks * 1e6,
            "us_per_chunk_min": min(ts) / chunks * 1e6,
            "bytes_out": harnesses[name].writer.bytes // repeats,
        }
        for name, ts in times.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--against", type=Path, help="a directory holding another acp_lsp/")
    parser.add_argument("--history", action="store_true", help="record into a session history")
    parser.add_argument("--flush-every", type=int, default=20_000, help="chunks per flush")
    args = parser.parse_args()
    results = asyncio.run(
        run(
            args.chunks,
            args.repeats,
            args.profile,
            args.against,
            args.history,
            args.flush_every,
        )
    )
    for name, r in results.items():
        print(
            f"{name:10s} {r['us_per_chunk']:.2f} µs CPU per chunk (median of {args.repeats}; "
            f"best {r['us_per_chunk_min']:.2f}), {r['bytes_out']:,} bytes out"
        )


if __name__ == "__main__":
    main()
