// Prompts typed while a turn runs (acp/prompt {queue: true}): they wait on the server, in
// order, and run when the turns before them end. The chat lists the ones still waiting above
// its input; each can be edited (taken back into the input), removed ($/cancelRequest
// withdraws it: it never reaches the agent) or sent now (the running turn is cancelled, which
// withdraws every queued prompt on the server: the others are queued again behind it).

import * as vscode from "vscode";
import { isBusy } from "../model/queries";
import type * as protocol from "../protocol";
import type { SessionStore } from "../sessions";

export interface QueuedPrompt {
  id: number;
  sessionId: string;
  text: string;
  blocks: protocol.ContentBlock[];
}

interface Entry extends QueuedPrompt {
  cancel: vscode.CancellationTokenSource;
  started: boolean;
}

export type SendQueued = (
  sessionId: string,
  blocks: protocol.ContentBlock[],
  token: vscode.CancellationToken,
) => Promise<protocol.PromptResult>;

export class PromptQueue implements vscode.Disposable {
  private entries: Entry[] = [];
  private next = 0;
  private readonly statuses = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when the prompts waiting change (added, started, withdrawn). */
  readonly onDidChange = this.changed.event;

  constructor(private readonly send: SendQueued) {}

  /** Queue a prompt; resolves with its turn's result (`cancelled` when it was withdrawn). */
  add(sessionId: string, text: string, blocks: protocol.ContentBlock[]): Promise<protocol.PromptResult> {
    const entry: Entry = { id: ++this.next, sessionId, text, blocks, cancel: new vscode.CancellationTokenSource(), started: false };
    this.entries.push(entry);
    this.changed.fire();
    return this.send(sessionId, blocks, entry.cancel.token).finally(() => this.drop(entry));
  }

  /** The prompts of a session still waiting, oldest first. */
  waiting(sessionId: string): QueuedPrompt[] {
    return this.entries
      .filter((e) => e.sessionId === sessionId && !e.started)
      .map(({ id, text, blocks }) => ({ id, sessionId, text, blocks }));
  }

  /** A session's status changed: a turn that starts while prompts wait is the oldest one's
   * (the server starts the first of its line when a turn ends; a prompt sent directly never
   * starts while one waits: send now queues the others only once its turn runs). */
  onStatus(sessionId: string, status: string): void {
    const before = this.statuses.get(sessionId);
    this.statuses.set(sessionId, status);
    if (status !== "running" || (before !== undefined && isBusy(before))) {
      return;
    }
    const oldest = this.entries.find((e) => e.sessionId === sessionId && !e.started);
    if (oldest) {
      oldest.started = true;
      this.changed.fire();
    }
  }

  /** Withdraw one waiting prompt; it, or undefined when it already started or is gone. */
  remove(id: number): QueuedPrompt | undefined {
    const entry = this.entries.find((e) => e.id === id && !e.started);
    if (!entry) {
      return undefined;
    }
    entry.cancel.cancel();
    this.drop(entry);
    return entry;
  }

  /** Withdraw every waiting prompt of a session (send now cancels the turn, which does that on
   * the server too); them, oldest first. */
  takeAll(sessionId: string): QueuedPrompt[] {
    const taken = this.waiting(sessionId);
    for (const prompt of taken) {
      this.remove(prompt.id);
    }
    return taken;
  }

  private drop(entry: Entry): void {
    const index = this.entries.indexOf(entry);
    if (index >= 0) {
      this.entries.splice(index, 1);
      entry.cancel.dispose();
      this.changed.fire();
    }
  }

  dispose(): void {
    for (const entry of this.entries) {
      entry.cancel.cancel();
    }
    this.entries = [];
    this.changed.dispose();
  }
}

/** Resolves once the session is no longer busy (or is gone). */
export function untilIdle(store: SessionStore, sessionId: string): Promise<void> {
  return untilStatus(store, sessionId, (status) => !isBusy(status));
}

/** Resolves once the session's status passes `wanted` (or the session is gone). */
export function untilStatus(store: SessionStore, sessionId: string, wanted: (status: string) => boolean): Promise<void> {
  return new Promise((resolve) => {
    const done = (): boolean => {
      const session = store.get(sessionId);
      return !session || wanted(session.status);
    };
    if (done()) {
      resolve();
      return;
    }
    const listener = store.onDidChange(() => {
      if (done()) {
        listener.dispose();
        resolve();
      }
    });
  });
}
