"""The sandbox, through the real server: what an agent may read, write and run, and what it
may learn about the editor's environment and the user's secrets.

fs reads and writes are confined to the session cwd, the workspace folders and the session's
additional directories; ``..``, symlinks out of the tree, absolute paths elsewhere, ``~`` and
NUL bytes are refused with a clear error and nothing outside is touched. Terminals run in the
session cwd. The agent's environment holds only the base variables and what its config passes.
Secrets never appear in what the editor is sent, nor in the server's log.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from acp_lsp import protocol as p
from acp_lsp.config import BASE_ENV_KEYS
from tests.reliability.conftest import Bridge, error_of, read_pids, responses, scripted

pytestmark = pytest.mark.timeout(60)


def fs_request(method: str, rid: str, path: str, **extra: Any) -> dict[str, Any]:
    return {
        "request": method,
        "id": rid,
        "params": {"sessionId": "{sessionId}", "path": path, **extra},
    }


@pytest.fixture
def tree(tmp_path: Path, workspace: Path) -> dict[str, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("private\n", encoding="utf-8")
    (workspace / "escape").symlink_to(outside, target_is_directory=True)
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "notes.txt").write_text("extra notes\n", encoding="utf-8")
    second = tmp_path / "second"
    second.mkdir()
    (second / "readme.txt").write_text("second folder\n", encoding="utf-8")
    return {"outside": outside, "extra": extra, "second": second}


REFUSED_READS = {
    "dotdot": "{cwd}/../outside/secret.txt",
    "symlinked-dir": "{cwd}/escape/secret.txt",
    "symlinked-file": "{cwd}/link.txt",
    "absolute-elsewhere": "/etc/hostname",
    "tilde": "~/.bashrc",
    "nul-byte": "{cwd}/src/app.py\u0000.txt",
    "relative": "src/app.py",
}
REFUSED_WRITES = {
    "dotdot": "{cwd}/../outside/new.txt",
    "symlinked-dir": "{cwd}/escape/new.txt",
    "symlinked-file": "{cwd}/link.txt",
    "absolute-elsewhere": "{outside}/abs.txt",
    "tilde": "~/acp-lsp-reliability.txt",
    "nul-byte": "{cwd}/new\u0000.txt",
    "relative": "new.txt",
}


async def test_fs_confined_to_cwd_folders_and_additional_dirs(
    bridge: Bridge, tmp_path: Path, workspace: Path, tree: dict[str, Path]
) -> None:
    log = tmp_path / "agent.log"
    steps: list[dict[str, Any]] = [{"set": {"outside": str(tree["outside"])}}]
    steps += [fs_request("fs/read_text_file", f"read:{k}", v) for k, v in REFUSED_READS.items()]
    steps += [
        fs_request("fs/write_text_file", f"write:{k}", v, content="pwned\n")
        for k, v in REFUSED_WRITES.items()
    ]
    steps += [
        fs_request("fs/read_text_file", "ok:cwd", "{cwd}/src/app.py", line=1, limit=1),
        fs_request("fs/read_text_file", "ok:extra", str(tree["extra"] / "notes.txt")),
        fs_request("fs/read_text_file", "ok:second-folder", str(tree["second"] / "readme.txt")),
        fs_request("fs/read_text_file", "ok:dotdot-back-inside", "{cwd}/src/../src/util.py"),
        fs_request("fs/write_text_file", "ok:write", "{cwd}/made/new.txt", content="made\n"),
    ]
    agent = scripted({"on": {"session/prompt": steps}}, pids=tmp_path / "p", log=log)
    editor = await bridge.start({"agent": agent}, folders=[workspace, tree["second"]], rich=False)
    before = sorted(os.listdir(tree["outside"]))
    snap = await editor.new_session(additionalDirectories=[str(tree["extra"])])
    assert (await editor.prompt(snap["sessionId"], "probe"))["stopReason"] == "end_turn"

    answers = responses(log)
    for kind in ("read", "write"):
        for name in REFUSED_READS if kind == "read" else REFUSED_WRITES:
            answer = answers[f"{kind}:{name}"]
            assert "error" in answer, f"{kind} {name} was allowed: {answer}"
            assert answer["error"]["code"] == p.INVALID_PARAMS, (kind, name, answer)
            message = answer["error"]["message"]
            assert any(
                why in message
                for why in ("outside the workspace", "NUL byte", "starts with '~'", "is relative")
            ), (kind, name, message)
    assert (
        answers["ok:cwd"]["result"]["content"]
        == (workspace / "src/app.py").read_text(encoding="utf-8").splitlines(keepends=True)[0]
    )
    assert answers["ok:extra"]["result"]["content"] == "extra notes\n"
    assert answers["ok:second-folder"]["result"]["content"] == "second folder\n"
    assert "result" in answers["ok:dotdot-back-inside"]
    assert answers["ok:write"]["result"] == {}
    assert (workspace / "made" / "new.txt").read_text(encoding="utf-8") == "made\n"
    # nothing outside was touched, and no refused write ever reached the editor
    assert sorted(os.listdir(tree["outside"])) == before
    assert (tree["outside"] / "secret.txt").read_text(encoding="utf-8") == "private\n"
    assert not (Path.home() / "acp-lsp-reliability.txt").exists()
    touched = {uri for edit in editor.applied_edits for uri in (edit.edit.changes or {})} | {
        getattr(getattr(c, "text_document", None), "uri", None) or getattr(c, "uri", "")
        for edit in editor.applied_edits
        for c in edit.edit.document_changes or []
    }
    assert touched <= {(workspace / "made" / "new.txt").as_uri()}, touched


def terminal_steps(
    rid: str, cwd: str | None, command: str, args: list[str]
) -> list[dict[str, Any]]:
    params: dict[str, Any] = {"sessionId": "{sessionId}", "command": command, "args": args}
    if cwd is not None:
        params["cwd"] = cwd
    name = rid.replace(":", "")  # a template name: letters only
    return [{"request": "terminal/create", "id": rid, "params": params, "save_as": name}]


async def test_terminals_run_in_the_session_cwd_and_nowhere_else(
    bridge: Bridge, tmp_path: Path, workspace: Path, tree: dict[str, Path]
) -> None:
    log = tmp_path / "agent.log"
    steps: list[dict[str, Any]] = []
    steps += terminal_steps("t:outside", str(tree["outside"]), "/bin/pwd", [])
    steps += terminal_steps("t:dotdot", "{cwd}/..", "/bin/pwd", [])
    steps += terminal_steps("t:symlink", "{cwd}/escape", "/bin/pwd", [])
    steps += terminal_steps("t:default", None, "/bin/pwd", [])
    steps += [
        {
            "request": "terminal/wait_for_exit",
            "params": {"sessionId": "{sessionId}", "terminalId": "{tdefault.terminalId}"},
        },
        {
            "request": "terminal/output",
            "id": "out:default",
            "params": {"sessionId": "{sessionId}", "terminalId": "{tdefault.terminalId}"},
        },
    ]
    agent = scripted({"on": {"session/prompt": steps}}, pids=tmp_path / "p", log=log)
    editor = await bridge.start({"agent": agent})
    sid = (await editor.new_session())["sessionId"]
    assert (await editor.prompt(sid, "run"))["stopReason"] == "end_turn"
    answers = responses(log)
    for name in ("t:outside", "t:dotdot", "t:symlink"):
        assert answers[name]["error"]["code"] == p.INVALID_PARAMS, answers[name]
        assert "outside the workspace" in answers[name]["error"]["message"]
    output = answers["out:default"]["result"]["output"]
    assert output.strip() == os.path.realpath(workspace)


SECRET = "tok-7f3a9c1e5b2d"
AAP_SECRET = "aap-91c0ffee77"
LITERAL_KEY = "literal-key-5e1d0a"
EDITOR_ONLY = "editor-only-42c8d1"


async def test_agent_env_is_explicit_and_secrets_never_leak(bridge: Bridge, tmp_path: Path) -> None:
    pids = tmp_path / "leaky.pids"
    crash = {"on": {"session/prompt": [{"stderr": "fatal: auth failed\n"}, {"exit": 2}]}}
    leaky = scripted(
        crash,
        pids=pids,
        print_env="API_TOKEN",
        env={"API_TOKEN": "${env:RELIABILITY_TOKEN}", "PLAIN": "visible"},
    )
    agents = {
        "leaky": leaky,
        "remote": {"url": "http://127.0.0.1:9", "apiKey": "${env:RELIABILITY_AAP_KEY}"},
        "literal": {"url": "http://127.0.0.1:9", "apiKey": LITERAL_KEY},
    }
    env = {
        "RELIABILITY_TOKEN": SECRET,
        "RELIABILITY_AAP_KEY": AAP_SECRET,
        "EDITOR_SECRET": EDITOR_ONLY,
    }
    editor = await bridge.start(agents, env=env)
    seen: list[Any] = []
    seen.append(await editor.acp("acp/listAgents"))
    snap = await editor.new_session(agent="leaky")
    seen.append(snap)

    # the agent runs with the base variables plus exactly what its config passes
    environ = Path(f"/proc/{read_pids(pids)[0]}/environ").read_bytes().split(b"\0")
    agent_env = dict(item.decode().split("=", 1) for item in environ if item)
    assert agent_env["API_TOKEN"] == SECRET and agent_env["PLAIN"] == "visible"
    assert set(agent_env) <= {*BASE_ENV_KEYS, "API_TOKEN", "PLAIN"}, sorted(agent_env)
    assert EDITOR_ONLY not in json.dumps(agent_env)

    error = await error_of(editor.prompt(snap["sessionId"], "go"))
    seen.append(error)
    assert error["code"] == p.AGENT_UNAVAILABLE
    assert "API_TOKEN=***" in error["data"]["stderr"]  # the tail is kept, the secret is not
    for agent in ("remote", "literal"):
        seen.append(await error_of(editor.new_session(agent=agent)))
    seen.append(await editor.acp("acp/getSession", {"sessionId": snap["sessionId"]}))
    seen.append(await editor.acp("acp/listAgents"))
    seen.append(editor.notifications)
    seen.append([m.message for m in editor.log_messages])
    seen.append([m.message for m in editor.messages])
    sent = json.dumps(seen, default=str)
    await editor.shutdown_session()
    server_log = bridge.server_log()
    for secret in (SECRET, AAP_SECRET, LITERAL_KEY):
        assert secret not in sent, f"{secret} reached the editor"
        assert secret not in server_log, f"{secret} is in the server log"
