"""A tiny run of each benchmark (``bench/run.py --quick --only NAME``), so the suite can't rot.

Nothing here is timed: each run must finish, write its tables, and show that what the
clients received is whole and in order. The figures themselves are for ``./run bench``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "run.py"
# The bridge's RSS and CPU time come from /proc (bench/clients/common.py), and the runner's
# helpers ask os.sysconf at import, which Windows lacks.
reads_proc = pytest.mark.skipif(
    sys.platform != "linux", reason="measures the bridge through /proc (bench/clients/common.py)"
)
no_sysconf = pytest.mark.skipif(
    sys.platform == "win32", reason="bench/clients/common.py calls os.sysconf (POSIX) at import"
)
TS_SDK = ROOT / ".cache" / "peers" / "ts-sdk" / "node_modules" / "@agentclientprotocol" / "sdk"


def run_quick(name: str, out: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(RUN), "--quick", "--only", name, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    markdown = (out / "latest.md").read_text()
    assert "## Goals" in markdown
    data: dict[str, Any] = json.loads((out / "latest.json").read_text())
    assert list(data["benchmarks"]) == [name]
    section: dict[str, Any] = data["benchmarks"][name]
    assert section["rows"], f"{name}: no table rows"
    assert f"## {section['title']}" in markdown
    return section


def no_errors(section: dict[str, Any], allowed: tuple[str, ...] = ()) -> None:
    errors = [n for n in section["notes"] if "exit " in n or "timed out" in n or "error" in n]
    assert [e for e in errors if not any(a in e for a in allowed)] == []


@pytest.mark.timeout(300)
@reads_proc
def test_streaming_every_client_gets_every_byte_in_order(tmp_path: Path) -> None:
    section = run_quick("streaming", tmp_path)
    data = section["data"]
    assert data["intact_a"] and data["intact_b"] and data["intact_c"]
    if TS_SDK.joinpath("dist", "acp.js").exists():
        assert data["intact_b'"]
        no_errors(section)
    else:
        no_errors(section, allowed=("TypeScript SDK missing",))
    assert {g["goal"] for g in section["goals"]} >= {"streaming (c)/(a)", "streaming (c)/(b)"}


@pytest.mark.timeout(300)
@reads_proc
def test_latency_stamps_arrive_in_order(tmp_path: Path) -> None:
    section = run_quick("latency", tmp_path)
    no_errors(section)
    assert all(run["in_order"] for runs in section["data"]["runs"].values() for run in runs)
    p99 = {k: v for k, v in section["data"].items() if k.startswith("added_p99_ms@")}
    assert p99 and all(v == v for v in p99.values()), p99  # a figure at every pace, not NaN


@pytest.mark.timeout(300)
@reads_proc
def test_flood_reaches_the_editor_whole_and_batched(tmp_path: Path) -> None:
    section = run_quick("flood", tmp_path)
    no_errors(section)
    assert section["data"]["intact"]
    run = section["data"]["runs"]["False"][0]
    assert run["notifications"] < run["chars"] // 40  # fewer messages than chunks


@pytest.mark.timeout(300)
@reads_proc
def test_tool_heavy_turn_editor_copy_matches_the_snapshot(tmp_path: Path) -> None:
    section = run_quick("tools", tmp_path)
    no_errors(section)
    (run,) = [v for k, v in section["data"].items() if k != "limit"]
    assert run["tool_merge_ok"] and run["terminal_copy_ok"]
    assert run["tool_content_sent"] >= run["tool_content_kept"] > 0


@pytest.mark.timeout(300)
@no_sysconf
def test_edits_benchmark_runs(tmp_path: Path) -> None:
    section = run_quick("edits", tmp_path)
    assert all(case["edits"] >= 1 for case in section["data"]["cases"])


@pytest.mark.timeout(300)
@reads_proc
def test_startup_measures_both_servers_and_the_demo_session(tmp_path: Path) -> None:
    section = run_quick("startup", tmp_path)
    no_errors(section)
    assert section["data"]["acp_ms"] > 0 and section["data"]["bare_ms"] > 0
    assert section["data"]["new_session_ms"] > 0


@pytest.mark.timeout(300)
@reads_proc
def test_memory_holds_every_session(tmp_path: Path) -> None:
    section = run_quick("memory", tmp_path)
    no_errors(section)
    for key, runs in section["data"].items():
        run = runs["False"]
        assert run["sessions"] == int(key)
        assert run["items"] > 0 and run["rss_mb"] > 0


@pytest.mark.timeout(300)
@no_sysconf
def test_checkpoints_restore_every_changed_file(tmp_path: Path) -> None:
    # the bench asserts each round's 100 files are back byte for byte
    data = run_quick("checkpoints", tmp_path)["data"]
    assert data["changed"] == 100 and data["rounds"] == 2
    assert data["restore_big_ms"] > 0 and data["floor_ms"] > 0


@pytest.mark.timeout(300)
@no_sysconf
def test_hunks_reach_the_buffer(tmp_path: Path) -> None:
    # the bench waits for the editor's document to read each undone text
    data = run_quick("hunks", tmp_path)["data"]
    assert data["rounds"] == 2 and data["hunk_ms"] > 0 and data["whole_ms"] > 0
