"""The agent sandbox (agent setting ``sandbox = "workspace"``): the agent's process runs under
bubblewrap (``bwrap``) on Linux, a Seatbelt profile (``sandbox-exec``) on macOS, and may write
only its workspace roots, its own data directories and a private temp directory. Everything
else is read-only; the network stays (the model API is needed). Windows has no such sandbox:
there the setting is refused at start, never silently ignored.

Not to be confused with :mod:`acp_lsp.sandbox`, which judges the paths an agent names in
``fs/*`` requests (what acp-lsp does for the agent); this one confines what the agent process
does itself (its own Read/Write/Bash on disk).

The process is shared by sessions and started on first use, so its writable roots are fixed
then: the workspace folders plus every session cwd and additional directory asked for so far.
A later session outside them restarts an idle agent with the wider set; a busy one refuses it
(:meth:`AgentSandbox.admit`).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from acp_lsp import protocol as p
from acp_lsp.backends.base import BackendError
from acp_lsp.config import AgentConfig
from acp_lsp.history.paths import data_dir
from acp_lsp.platform import seatbelt
from acp_lsp.platform.paths import within
from acp_lsp.presets import PRODUCTION_AGENTS

# What each known agent keeps under its HOME (created when missing, so a first run can write).
# Not Claude's ~/.claude.json: it is replaced by a rename in HOME, which a bind mount of the
# file cannot take, so it stays read-only (Claude runs without saving it).
AGENT_DATA: dict[str, tuple[str, ...]] = {
    "claude": (".claude",),
    "codex": (".codex",),
    "gemini": (".gemini",),
    "qwen": (".qwen",),
}
# Environment variables that move an agent's data directory elsewhere.
DATA_ENV = ("CLAUDE_CONFIG_DIR", "CODEX_HOME")
# What a package runner writes (its download cache).
RUNNER_DATA: dict[str, tuple[str, ...]] = {
    "npx": (".npm",),
    "pnpx": (".npm", ".cache/pnpm", ".local/share/pnpm"),
    "bunx": (".bun",),
    "uvx": (".cache/uv", ".local/share/uv"),
    "uv": (".cache/uv", ".local/share/uv"),
    "pipx": (".local/pipx", ".cache/pipx"),
}
_PROBE_TIMEOUT = 10.0


class SandboxUnavailable(Exception):
    """The sandbox cannot run here; the message says why."""


WINDOWS = (
    "not available on Windows (acp-lsp confines agents with bubblewrap on Linux and Seatbelt on "
    'macOS; Windows has neither): set sandbox = "none" to run this agent unconfined'
)


def find_bwrap(program: str, path: str | None) -> str:
    found = shutil.which(program, path=path)
    if found is None:
        where = "" if "/" in program else " on PATH"
        raise SandboxUnavailable(
            f"bubblewrap ({program!r}) not found{where}: install the 'bubblewrap' package, "
            'or set sandbox = "none"'
        )
    return found


def probe(program: str, path: str | None = None) -> str:
    """``bubblewrap X.Y.Z`` when ``program`` can build a sandbox here, else SandboxUnavailable
    naming the reason (not found, no user namespaces, ...)."""
    bwrap = find_bwrap(program, path)
    try:
        version = subprocess.run(
            [bwrap, "--version"], capture_output=True, text=True, timeout=_PROBE_TIMEOUT
        ).stdout.strip()
        # the mounts every sandbox makes: a non-root user needs a user namespace for them
        run = subprocess.run(
            [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "true"],
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"bubblewrap ({bwrap}) cannot run: {exc}") from None
    if run.returncode != 0:
        detail = run.stderr.strip() or f"exit code {run.returncode}"
        raise SandboxUnavailable(
            f"bubblewrap ({bwrap}) cannot build a sandbox: {detail}{_userns_hint()}"
        )
    return version or "bubblewrap"


def _userns_hint() -> str:
    """The kernel setting that forbids user namespaces, when one does."""
    for setting, bad in (
        ("kernel/apparmor_restrict_unprivileged_userns", "1"),
        ("kernel/unprivileged_userns_clone", "0"),
        ("user/max_user_namespaces", "0"),
    ):
        try:
            value = Path("/proc/sys", setting).read_text().strip()
        except OSError:
            continue
        if value == bad:
            return f" (user namespaces are disabled: {setting.replace('/', '.')} = {value})"
    return ""


def describe(program: str = "bwrap", path: str | None = None, system: str = sys.platform) -> str:
    """One line for ``acp-lsp doctor``; SandboxUnavailable when it cannot run."""
    if system == "win32":
        raise SandboxUnavailable(WINDOWS)
    if system == "darwin":
        found = seatbelt.find_sandbox_exec(path)
        if found is None:
            raise SandboxUnavailable("sandbox-exec (Seatbelt) not found")
        return f"Seatbelt ({found})"
    version = probe(program, path)
    if sys.platform != "win32" and os.geteuid() == 0:
        return f"{version}, running as root (no user namespace needed)"
    return f"{version}, user namespaces ok"


def known_agent(name: str, config: AgentConfig) -> str | None:
    """Which production agent ``config`` runs (by its name, binary or npm package), if any."""
    words = [name, os.path.basename(config.command or ""), *config.args, config.registry or ""]
    for agent in PRODUCTION_AGENTS:
        for word in words:
            if word == agent.name or os.path.basename(word) == agent.bin:
                return agent.name
            if word.startswith(agent.package):
                return agent.name
    return None


def data_paths(
    name: str, config: AgentConfig, env: Mapping[str, str], server_home: str
) -> tuple[list[str], list[str]]:
    """The agent's own paths it may write: (directories to create when missing, paths used
    only when present). An agent given a HOME of its own (not the server's) may write all of
    it; else only the known data directories under it."""
    home = env.get("HOME") or os.path.expanduser("~")
    own_home = os.path.realpath(home) != os.path.realpath(server_home)
    dirs: list[str] = [home] if own_home else []
    present: list[str] = []
    agent = known_agent(name, config)
    dirs += [os.path.join(home, rel) for rel in AGENT_DATA.get(agent or "", ())]
    for rel in RUNNER_DATA.get(os.path.basename(config.command or ""), ()):
        dirs.append(os.path.join(home, rel))
    dirs += [env[key] for key in DATA_ENV if os.path.isabs(env.get(key, ""))]
    for extra in config.sandbox_writable:
        present.append(os.path.join(home, extra[2:]) if extra.startswith("~/") else extra)
    return dirs, present


def bwrap_argv(bwrap: str, writable: Sequence[str], tmp: str, command: Sequence[str]) -> list[str]:
    """The bubblewrap command line: the whole tree read-only, ``writable`` (existing, absolute,
    symlink-free paths) bound read-write over it, a private tmpfs at ``tmp``."""
    argv = [bwrap, "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev"]
    # parents before children: a later bind shadows what an earlier one put there
    for path in sorted(set(writable), key=lambda s: (s.count("/"), s)):
        argv += ["--bind", path, path]
    argv += ["--tmpfs", tmp, "--"]
    return argv + list(command)


class AgentSandbox:
    """The sandbox of one agent: the roots its process may write and how to start it."""

    def __init__(
        self,
        name: str,
        config: AgentConfig,
        workspace: Callable[[], Sequence[str]],
        environ: Mapping[str, str],
        system: str = sys.platform,
    ) -> None:
        self.name = name
        self.system = system
        self.config = config
        self._workspace = workspace
        self._environ = environ
        self._asked: list[str] = []  # every session root asked for, in order
        self.started: list[str] | None = None  # the roots of the running process
        self._prefix: list[str] = []  # its bubblewrap command line, up to the command

    def roots(self) -> list[str]:
        """The writable roots a start gets: never ``/`` (a workspace folder ``/`` is left out,
        a session there refused)."""
        out: list[str] = []
        for root in [*self._workspace(), *self._asked]:
            real = os.path.realpath(root)
            if os.path.isabs(root) and os.path.isdir(real) and real != "/" and real not in out:
                out.append(real)
        return out

    def admit(self, paths: Sequence[str], running: bool, busy: bool) -> bool:
        """Note a session's roots. True when the running process lacks some and must be
        restarted first; a busy process (open sessions) refuses them instead."""
        if any(os.path.realpath(r) == "/" for r in paths if r):
            raise BackendError(
                p.INVALID_PARAMS,
                f"agent {self.name!r} runs sandboxed: '/' cannot be its writable root",
            )
        outside = [r for r in paths if r and not self._covered(r)]
        for root in outside:
            if root not in self._asked:
                self._asked.append(root)
        if not outside or not running or self.started is None:
            return False
        if busy:
            raise BackendError(
                p.AGENT_UNAVAILABLE,
                f'agent {self.name!r} runs sandboxed (sandbox = "workspace") and may write '
                f"only in {', '.join(self.started)}; {', '.join(outside)} is outside. Close its "
                "sessions, or restart it (acp/restartAgent: its open sessions fail), to start "
                "it with this folder writable too",
                {"agent": self.name, "outside": outside, "writable": self.started},
            )
        return True

    def _covered(self, path: str) -> bool:
        if self.started is None:
            return False
        real = os.path.realpath(path)
        return any(within(real, root) for root in self.started)

    async def wrap(self, command: str, args: Sequence[str], env: dict[str, str]) -> list[str]:
        """The command line that runs the agent sandboxed (``env`` gets its TMPDIR);
        SandboxUnavailable when the sandbox cannot run."""
        if self.system == "win32":
            raise SandboxUnavailable(WINDOWS)
        if self.system == "darwin":
            tool = seatbelt.find_sandbox_exec(env.get("PATH"))
            if tool is None:
                raise SandboxUnavailable("sandbox-exec (Seatbelt) not found")
        else:
            tool = find_bwrap(self.config.bwrap, env.get("PATH"))
            await asyncio.to_thread(probe, tool)  # each start: a clear reason, not a dead agent
        try:
            writable, tmp = await asyncio.to_thread(self._prepare, env)
        except OSError as exc:
            raise SandboxUnavailable(f"cannot make its private temp directory: {exc}") from None
        env["TMPDIR"] = tmp
        self.started = self.roots()
        if self.system == "darwin":  # no tmpfs: the temp directory itself is writable
            self._prefix = seatbelt.argv(tool, [*self.started, *writable, tmp], [])
        else:
            self._prefix = bwrap_argv(tool, [*self.started, *writable], tmp, [])
        return [*self._prefix, command, *args]

    def confine(self, command: str, args: Sequence[str]) -> tuple[str, list[str]]:
        """A command the agent has acp-lsp run (``terminal/create``), under the same
        sandbox as the agent (with bubblewrap, a tmpfs of its own)."""
        if not self._prefix:  # no process started yet: nothing asks for a terminal then
            raise BackendError(p.AGENT_UNAVAILABLE, f"agent {self.name!r} is not running")
        return self._prefix[0], [*self._prefix[1:], command, *args]

    def _prepare(self, env: Mapping[str, str]) -> tuple[list[str], str]:
        server_home = self._environ.get("HOME") or os.path.expanduser("~")
        dirs, present = data_paths(self.name, self.config, env, server_home)
        out: list[str] = []
        for path in dirs:
            try:
                os.makedirs(path, exist_ok=True)
            except OSError:
                continue  # not ours to create: it stays read-only
        for path in [*dirs, *present]:
            real = os.path.realpath(path)
            if os.path.exists(real) and real != "/":  # a HOME of "/" must not open all
                out.append(real)
        tmp = data_dir(self._environ) / "agent-tmp"
        if self.system == "darwin":  # not hidden under a tmpfs: one folder per agent
            tmp = tmp / self.name
        tmp.mkdir(parents=True, exist_ok=True)
        return out, os.path.realpath(tmp)
