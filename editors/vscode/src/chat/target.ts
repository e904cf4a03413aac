// Which session a chat shows: the side bar's chat shows the store's active session and follows
// it; a chat in an editor tab is pinned to its own session, whatever becomes active.

import { isOpen } from "../model/sessionList";
import type { ChatSession } from "../model/sessionModel";
import type { SessionStore } from "../sessions";

export interface ChatTarget {
  /** True for a chat pinned to one session: it ignores the active session and shows only its
   * own session's permission prompts. */
  readonly pinned: boolean;
  /** The id of the session shown, or null. */
  readonly sessionId: string | null;
  /** The session shown (a pinned chat keeps showing its session, closed, once it is gone). */
  session(): ChatSession | null;
  /** Show this session from now on (a new one, one picked in the chat's history). */
  show(sessionId: string): void;
}

/** The side bar's chat: whatever session is active. */
export function activeSessionTarget(store: SessionStore): ChatTarget {
  return {
    pinned: false,
    get sessionId() {
      return store.activeId;
    },
    session: () => store.activeSession,
    show: (sessionId) => {
      if (store.activeId !== sessionId) {
        store.setActive(sessionId);
      }
    },
  };
}

/** A chat pinned to one session (an editor tab). */
export class PinnedSession implements ChatTarget {
  readonly pinned = true;
  private last: ChatSession | null;

  constructor(
    private readonly store: SessionStore,
    private id: string,
    /** Called after the chat is pinned to another session. */
    private readonly onDidShow: (sessionId: string) => void = () => undefined,
  ) {
    this.last = store.get(id) ?? null;
  }

  get sessionId(): string {
    return this.id;
  }

  session(): ChatSession | null {
    const live = this.store.get(this.id);
    if (live) {
      this.last = live;
      return live;
    }
    // Closed or deleted: the store forgot it; the chat keeps its transcript, marked closed.
    // A stored one (a tab restored after the server restarted) stays stored: it can resume.
    if (!this.last || this.last.status === "stored") {
      return this.last;
    }
    return { ...this.last, status: "closed" };
  }

  /** Show this copy of the session until the store has it (a stored one: read-only). */
  remember(session: ChatSession): void {
    this.last = session;
  }

  /** Whether its session is still open here. */
  get open(): boolean {
    const live = this.store.get(this.id);
    return live !== undefined && isOpen(live);
  }

  show(sessionId: string): void {
    if (sessionId === this.id) {
      return;
    }
    this.id = sessionId;
    this.last = this.store.get(sessionId) ?? null;
    this.onDidShow(sessionId);
  }
}
