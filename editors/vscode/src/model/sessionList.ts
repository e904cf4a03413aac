// The open sessions as the session switcher and the status bar name them: a label, a state,
// and what runs in the background. Pure, so it is unit-tested.

import { type ChatSession } from "./sessionModel";
import { isBusy, runningToolCall } from "./queries";

const STATES: Record<string, string> = {
  idle: "idle",
  running: "running",
  awaiting_permission: "awaiting permission",
  cancelling: "cancelling",
  failed: "agent unavailable",
  closed: "closed",
  stored: "stored",
};

/** The session's title, or the end of its id while the agent has not named it (ids often
 * share a prefix, e.g. `demo-`). */
export function sessionLabel(session: ChatSession): string {
  return session.title?.trim() || `Session …${session.sessionId.slice(-6)}`;
}

/** A chat tab's title: its session's name, and that it is closed once it is. */
export function chatTabTitle(session: ChatSession | null, open: boolean): string {
  if (!session) {
    return "ACP Chat";
  }
  return open ? sessionLabel(session) : `${sessionLabel(session)} (closed)`;
}

export function stateLabel(status: string): string {
  return STATES[status] ?? status;
}

/** Sessions this editor still talks to (closed ones and read-only stored ones are not). */
export function isOpen(session: Pick<ChatSession, "status">): boolean {
  return session.status !== "closed" && session.status !== "stored";
}

/** Open sessions other than the active one that are working or waiting for the user. */
export function backgroundSessions(sessions: ChatSession[], activeId: string | null): ChatSession[] {
  return sessions.filter((s) => s.sessionId !== activeId && isOpen(s) && isBusy(s.status));
}

/** "2 more running", "2 more running, 1 needs permission", or "" when nothing runs. */
export function backgroundText(background: ChatSession[]): string {
  if (background.length === 0) {
    return "";
  }
  const waiting = background.filter((s) => s.status === "awaiting_permission").length;
  return `${background.length} more running${waiting > 0 ? `, ${waiting} ${waiting === 1 ? "needs" : "need"} permission` : ""}`;
}

/** One line of the status bar's tooltip per background session. */
export function backgroundLines(background: ChatSession[]): string[] {
  return background.map((s) => {
    const call = runningToolCall(s);
    return `• ${sessionLabel(s)} (${s.agent}): ${stateLabel(s.status)}${call?.title ? ` · ${call.title}` : ""}`;
  });
}

export interface SessionPickEntry {
  sessionId: string;
  label: string;
  description: string;
  detail?: string;
}

/** The switcher's items: the open sessions, most recently used first (the active one leads). */
export function switchEntries(sessions: ChatSession[], activeId: string | null): SessionPickEntry[] {
  const open = sessions.filter(isOpen);
  const ordered = [
    ...open.filter((s) => s.sessionId === activeId),
    ...open.filter((s) => s.sessionId !== activeId),
  ];
  return ordered.map((s) => {
    const call = isBusy(s.status) ? runningToolCall(s) : null;
    const entry: SessionPickEntry = {
      sessionId: s.sessionId,
      label: sessionLabel(s),
      description: [s.agent, stateLabel(s.status), s.sessionId === activeId ? "active" : ""].filter(Boolean).join(" · "),
    };
    if (call?.title) {
      entry.detail = call.title;
    }
    return entry;
  });
}
