"""Disk and buffers never diverge (DESIGN §3): what agents change on disk reaches the editor.

Claude Code and Codex edit files and run commands themselves, on disk; any agent may change
files from a shell command or a terminal. The bridge does not see those writes, so it looks:
a shadow snapshot of the session's folder (``acp_lsp.disk.shadow``) is taken before a turn's
prompt goes to the agent, and again when a tool call that may change files ends and when the
turn ends. The files that differ between two snapshots are the changes of that tool call. For each:

- every open buffer of the file is brought to the new disk text with the user's unsaved edits
  merged on top (``disk_buffers``); ``acp/documentsSynced`` then tells front ends the buffer
  matches the new disk, so saving raises no "changed on disk" question;
- the change joins the tool call's review (``ReviewManager.record_disk_change``) with the
  exact texts, so ``acp/reviewEdit reject`` restores the file byte for byte.

The turn's answer (``acp/prompt``) waits for the last scan: when the editor hears the turn
ended, the buffers show what is on disk. The snapshots before and after a turn are its
checkpoint (``Session.checkpoints``; ``checkpoint_restore`` goes back to one).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from acp_lsp import protocol as p
from acp_lsp.disk.shadow import FileDelta, ShadowError, ShadowRepo, shadow_dir
from acp_lsp.disk.trees import Changes
from acp_lsp.editor.disk_buffers import DiskBuffers
from acp_lsp.editor.files import DocumentFiles
from acp_lsp.editor.review import ReviewManager
from acp_lsp.editor.review_sources import diff_items, location_paths, raw_input_paths
from acp_lsp.history.paths import data_dir
from acp_lsp.sandbox import Sandbox, SandboxError
from acp_lsp.session import Session
from acp_lsp.session.checkpoints import user_ordinal
from acp_lsp.tasks import TaskOwner

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]

READ_ONLY_KINDS = frozenset({"read", "search", "think", "fetch"})
"""Tool calls of these kinds change no file: their end needs no scan (the turn's end scans)."""
MAX_TEXT_BYTES = 4 * 1024 * 1024
"""Larger changed files are not merged into buffers or kept for review (they are logged)."""
BASELINE_WAIT_S = 2.0
LARGE_FOLDERS = 2_000
"""A prompt waits at most ``BASELINE_WAIT_S`` for a snapshot of a folder with more subfolders
watched (a huge checkout's first): its agent needs a model round trip before changing a file."""
WATCH_WAIT_S = 30.0
"""How long a prompt waits for its folder's watcher to start (a walk of its folders), or for
the snapshot of a smaller folder or of one no watcher covers."""
BLOBS_AT_ONCE = 100
"""Changed files whose texts one git process reads (a branch switch changes thousands)."""
DISK_TOOL_CALL = "acp-lsp-disk-"
"""Id prefix of the tool call the bridge adds for changes made outside any tool call."""


@dataclass
class _Tracker:
    """One session's view of its folder: the last snapshot and the scans under way."""

    repo: ShadowRepo
    session: Session
    tree: str | None = None
    chain: asyncio.Future[None] | None = None
    ended: set[str] = field(default_factory=set)
    """Tool calls whose end was already scanned (their later updates need none)."""
    ordinal: int | None = None
    """The user message of the running turn, among the session's user messages."""
    waiting: list[str] | None = None
    """Tool calls that ended while a scan for an earlier one ran: one more scan covers them
    all (a burst of quick commands costs one scan per scan time, not one per call)."""


class DiskSync:
    def __init__(
        self,
        *,
        files: DocumentFiles,
        review: ReviewManager,
        publish: Callable[[Session, list[JsonObject]], None],
        notify: Callable[[str, JsonObject], None],
        warn: Callable[[str], None],
        sandbox: Callable[[Session], Sandbox],
        enabled: Callable[[], bool],
        watch: Callable[[], bool] = lambda: True,
        plain: Callable[[], bool],
        tasks: TaskOwner,
    ) -> None:
        self._files = files
        self._review = review
        review.undo.disk_written = self.disk_written  # a reject's rewrite reaches buffers
        self._publish = publish
        self._notify = notify
        self._warn = warn
        self._sandbox = sandbox
        self._enabled = enabled
        self._watch = watch
        self._buffers = DiskBuffers(files, warn, plain)
        self._tasks = tasks
        self._repos: dict[str, ShadowRepo] = {}
        self._trackers: dict[str, _Tracker] = {}
        self._failed: set[str] = set()  # roots whose snapshots failed (reported once)
        self._scanned: set[str] = set()  # roots no watcher covers (reported once)
        self.checkpointed: Callable[[Session], None] = lambda session: None
        """Told when a turn's checkpoint is complete (the history stores it)."""

    # -- when to look ------------------------------------------------------------------------
    def session_started(self, session: Session) -> None:
        """A new or loaded session: its folder's first snapshot starts now, so the first
        turn's (which waits for it) is quick."""
        if self._enabled():
            tracker = self._tracker(session)
            self._chain(session, tracker, self._baseline(session, tracker))

    async def turn_started(self, session: Session) -> None:
        """Snapshot the folder before the agent gets the prompt. Where a watcher runs, the
        files changed since the last snapshot are read now and stored after the prompt went
        out: nothing on the prompt's path waits for git. Otherwise a folder whose snapshot
        takes longer than ``BASELINE_WAIT_S`` (a huge one, the first time) is not waited for:
        the agent needs a model round trip before it changes anything."""
        if not self._enabled():
            return
        tracker = self._tracker(session)
        tracker.ended.clear()
        tracker.ordinal = user_ordinal(session, session.message_count() - 1)
        changes = tracker.repo.capture()
        step = self._baseline(session, tracker, tracker.ordinal, changes)
        done = self._chain(session, tracker, step)
        if changes is not None:
            return
        if not tracker.repo.watch_started.is_set():
            # until the watcher runs, an agent's change could pass for the folder's "before"
            started = self._tasks.spawn(tracker.repo.watch_started.wait(), name="watch started")
            await asyncio.wait([done, started], timeout=WATCH_WAIT_S, return_when="FIRST_COMPLETED")
            started.cancel()
        # only a finished scan tells the folder's "before" from the turn's changes (a scripted
        # or quick agent may write at once): wait for it unless the folder is huge
        large = tracker.repo.watching >= LARGE_FOLDERS
        await asyncio.wait([done], timeout=BASELINE_WAIT_S if large else WATCH_WAIT_S)

    def tool_call(self, session: Session, state: JsonObject) -> None:
        """Every tool-call state published: a call that may change files and just ended is
        followed by a scan."""
        tracker = self._trackers.get(session.session_id)
        tool_call_id = state.get("toolCallId")
        if tracker is None or not isinstance(tool_call_id, str):
            return
        if state.get("status") not in ("completed", "failed") or tool_call_id in tracker.ended:
            return
        if state.get("kind") in READ_ONLY_KINDS or tool_call_id.startswith(DISK_TOOL_CALL):
            return
        tracker.ended.add(tool_call_id)
        if tracker.waiting is not None:
            tracker.waiting.append(tool_call_id)
            return
        tracker.waiting = [tool_call_id]
        self._chain(session, tracker, self._scan(session, tracker, tool_call_id))

    async def turn_ended(self, session: Session) -> None:
        """The last scan of the turn; returns once every buffer shows it."""
        tracker = self._trackers.get(session.session_id)
        if tracker is None:
            return
        done = self._chain(session, tracker, self._scan(session, tracker, None))
        ordinal, tracker.ordinal = tracker.ordinal, None
        await asyncio.shield(done)
        checkpoint = session.checkpoints.get(ordinal) if ordinal is not None else None
        if checkpoint is not None and ordinal is not None and tracker.tree is not None:
            # closed before the turn's answer: the editor can offer it at once
            session.checkpoints.end(ordinal, tracker.tree)
            refs = {"before": checkpoint.before, "after": tracker.tree}
            self._chain(session, tracker, self._keep_checkpoint(session, tracker, ordinal, refs))

    def forget(self, session_id: str) -> None:
        tracker = self._trackers.pop(session_id, None)
        if tracker is not None and all(t.repo is not tracker.repo for t in self._trackers.values()):
            tracker.repo.close()  # no session left in the folder: its watcher goes

    async def drop_checkpoints(self, session_id: str, roots: set[str]) -> None:
        """A deleted session's checkpoints: their refs go, so pruning frees their trees."""
        for root in roots:
            try:
                await self.repo(root).drop(f"refs/checkpoints/{session_id}")
            except ShadowError as exc:
                log.info("checkpoints of %s in %s kept: %s", session_id, root, exc)

    def repo(self, root: str) -> ShadowRepo:
        """The shadow repository of folder ``root`` (a real path)."""
        repo = self._repos.get(root)
        if repo is None:
            git_dir = shadow_dir(data_dir(os.environ), root)
            repo = self._repos[root] = ShadowRepo(root, git_dir, watch=self._watch())
        return repo

    async def disk_written(
        self, session: Session, path: str, before: str | None, after: str
    ) -> None:
        """The bridge itself rewrote ``path`` on disk (a review undo): buffers follow."""
        entry = await self._buffers.sync(session, path, before, after)
        if entry is not None:
            self._notify(
                p.ACP_DOCUMENTS_SYNCED, {"sessionId": session.session_id, "documents": [entry]}
            )

    # -- scans -------------------------------------------------------------------------------
    def _tracker(self, session: Session) -> _Tracker:
        tracker = self._trackers.get(session.session_id)
        if tracker is None:
            repo = self.repo(os.path.realpath(session.cwd))
            tracker = self._trackers[session.session_id] = _Tracker(repo, session)
        return tracker

    def _chain(
        self, session: Session, tracker: _Tracker, step: Coroutine[Any, Any, None]
    ) -> asyncio.Future[None]:
        """Run ``step`` after the session's earlier scans (each diffs against the last)."""
        previous = tracker.chain

        async def run() -> None:
            if previous is not None:
                await asyncio.wait([previous])
            try:
                await step
            except ShadowError as exc:
                root = tracker.repo.root
                if root not in self._failed:
                    self._failed.add(root)
                    self._warn(f"acp-lsp: changes made on disk in {root} are not tracked: {exc}")
            except Exception:
                log.exception("disk scan of session %s failed", session.session_id)

        task = self._tasks.spawn(run(), name=f"disk scan {session.session_id}")
        tracker.chain = task
        return task

    async def _baseline(
        self,
        session: Session,
        tracker: _Tracker,
        ordinal: int | None = None,
        changes: Changes | None = None,
    ) -> None:
        tree = await tracker.repo.snapshot(changes)
        note = tracker.repo.watch_note
        said = tracker.repo.root in self._scanned or not self._watch()  # off: the user knows
        if note is not None and not said and sys.platform == "linux":
            self._scanned.add(tracker.repo.root)  # said once: every snapshot scans this folder
            self._warn(f"acp-lsp: {note}; changes on disk are found by scanning it instead")
        if tracker.tree is not None and tracker.tree != tree:
            # changed between turns (the user, another program): not this turn's to review
            log.info("session %s: folder changed between turns", session.session_id)
        tracker.tree = tree
        if ordinal is not None:
            session.checkpoints.begin(ordinal, tracker.repo.root, tree)

    async def _keep_checkpoint(
        self, session: Session, tracker: _Tracker, ordinal: int, trees: dict[str, str]
    ) -> None:
        """Refs keep a checkpoint's trees from being pruned; the history stores it."""
        ref = f"refs/checkpoints/{session.session_id}/{ordinal}"
        await tracker.repo.keep({f"{ref}/{side}": tree for side, tree in trees.items()})
        self.checkpointed(session)

    async def _scan(self, session: Session, tracker: _Tracker, tool_call_id: str | None) -> None:
        if tool_call_id is not None and tracker.waiting:
            tool_call_id = tracker.waiting[-1]  # the latest of the calls this scan covers
        if tool_call_id is not None:
            tracker.waiting = None
        old = tracker.tree
        new = await tracker.repo.snapshot()
        tracker.tree = new
        if old is None:
            return
        deltas = await tracker.repo.deltas(old, new)
        if not deltas:
            return
        sandbox = self._sandbox(session)
        named = self._named_paths(session, sandbox)
        others: set[str] | None = None
        synced: list[JsonObject] = []
        blobs: dict[str, bytes] = {}
        for at, delta in enumerate(deltas):
            if at % BLOBS_AT_ONCE == 0:  # both texts of many files from one git process
                ids = {b for d in deltas[at : at + BLOBS_AT_ONCE] for b in (d.before, d.after)}
                blobs = await tracker.repo.blobs({b for b in ids if b is not None})
            if not (sandbox.allow_outside or sandbox.contains(delta.path)):
                continue
            if self._files.is_own(delta.path, delta.after):
                continue  # the bridge's own write (an fs write, a review undo): reviewed there
            texts = self._texts(blobs, delta)
            if texts is None:
                continue
            before, after = texts
            if delta.path not in named:
                if others is None:
                    others = self._named_by_others(session, tracker, sandbox)
                if delta.path in others:
                    owner = None  # another session's running turn names it: its to review
                else:
                    owner = tool_call_id = tool_call_id or self._turn_owner(session)
            else:
                # a change goes to the latest tool call naming its file (one response may run
                # several edits before the first one's scan), else to the call that just ended
                owner = named[delta.path]
            if owner is not None:
                self._review.record_disk_change(session, owner, delta.path, before, after)
            entry = await self._buffers.sync(session, delta.path, before, after)
            if entry is not None:
                synced.append(entry)
        if synced:
            self._notify(
                p.ACP_DOCUMENTS_SYNCED, {"sessionId": session.session_id, "documents": synced}
            )

    @staticmethod
    def _named_paths(session: Session, sandbox: Sandbox) -> dict[str, str]:
        """Real path -> the latest tool call of the turn that names it and may change it (a
        read of the file before a `sed -i` on it does not own the change)."""
        named: dict[str, str] = {}
        for tool_call_id in session.turn_tool_call_ids():
            state = session.tool_call(tool_call_id) or {}
            if state.get("kind") in READ_ONLY_KINDS:
                continue
            paths = [
                *location_paths(state.get("locations")),
                *raw_input_paths(state.get("rawInput")),
                *(path for path, _ in diff_items(state.get("content"))),
            ]
            for path in paths:
                if os.path.isabs(path):
                    try:
                        named[sandbox.resolve(path)] = tool_call_id
                    except SandboxError:
                        continue
        return named

    def _named_by_others(self, session: Session, tracker: _Tracker, sandbox: Sandbox) -> set[str]:
        """Paths named by the running turns of other sessions in the same folder."""
        out: set[str] = set()
        for other in self._trackers.values():
            if (
                other.session is not session
                and other.repo is tracker.repo
                and other.session.status in ("running", "awaiting_permission", "cancelling")
            ):
                out.update(self._named_paths(other.session, sandbox))
        return out

    def _turn_owner(self, session: Session) -> str:
        """Changes found at the turn's end go to its last tool call that may change files, else
        to a tool call the bridge adds ("Files changed on disk")."""
        for tool_call_id in reversed(session.turn_tool_call_ids()):
            state = session.tool_call(tool_call_id) or {}
            if state.get("kind") not in READ_ONLY_KINDS:
                return tool_call_id
        tool_call_id = f"{DISK_TOOL_CALL}{session.session_id}-{session.tool_call_count()}"
        self._publish(
            session,
            session.upsert_tool_call(
                {
                    "toolCallId": tool_call_id,
                    "title": "Files changed on disk",
                    "kind": "edit",
                    "status": "completed",
                }
            ),
        )
        return tool_call_id

    @staticmethod
    def _texts(blobs: dict[str, bytes], delta: FileDelta) -> tuple[str | None, str | None] | None:
        """Both sides as text; None for a binary or huge file (not merged, not reviewable)."""
        out: list[str | None] = []
        for blob in (delta.before, delta.after):
            if blob is None:
                out.append(None)
                continue
            data = blobs.get(blob)
            if data is None:
                log.info("%s changed on disk but its text is gone from the store", delta.path)
                return None
            if len(data) > MAX_TEXT_BYTES:
                log.info("%s changed on disk but is too large to track", delta.path)
                return None
            try:
                out.append(data.decode("utf-8"))
            except UnicodeDecodeError:
                log.info("%s changed on disk but is not UTF-8 text", delta.path)
                return None
        return out[0], out[1]
