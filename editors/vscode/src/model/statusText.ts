// The status bar's text for a session: its state, the tool call it is running, the turn's
// `$/progress` message, and the sessions running in the background. Pure, so it is unit-tested.

import { type ChatSession } from "./sessionModel";
import { isBusy, runningToolCall } from "./queries";
import { backgroundLines, backgroundSessions, backgroundText, sessionLabel } from "./sessionList";

const ICONS: Record<string, string> = {
  idle: "$(comment-discussion)",
  running: "$(loading~spin)",
  awaiting_permission: "$(shield)",
  cancelling: "$(loading~spin)",
  failed: "$(error)",
  closed: "$(circle-slash)",
};

const LABELS: Record<string, string> = {
  idle: "idle",
  running: "working",
  awaiting_permission: "needs permission",
  cancelling: "cancelling",
  failed: "agent unavailable",
  closed: "closed",
};

/** The status bar's text and tooltip for the active session; `others` are the other open
 * sessions: with any, the active one is named by its title, and the busy ones are counted. */
export function statusText(
  session: ChatSession | null,
  progress: string | undefined,
  others: ChatSession[] = [],
): { text: string; tooltip: string } {
  const { text, tooltip } = activeText(session, progress, others.length > 0);
  const background = backgroundSessions(others, null);
  if (background.length === 0) {
    return { text, tooltip };
  }
  const waiting = background.some((s) => s.status === "awaiting_permission");
  return {
    text: `${text} · ${waiting ? "$(shield) " : ""}${backgroundText(background)}`,
    tooltip: [tooltip, "", "In the background:", ...backgroundLines(background), "", "Click to switch session."].join("\n"),
  };
}

function activeText(
  session: ChatSession | null,
  progress: string | undefined,
  named: boolean,
): { text: string; tooltip: string } {
  if (!session) {
    return { text: "$(comment-discussion) ACP", tooltip: "ACP Agents: no session. Click to open the chat." };
  }
  const icon = ICONS[session.status] ?? "$(question)";
  const label = LABELS[session.status] ?? session.status;
  let detail = "";
  if (isBusy(session.status)) {
    const call = runningToolCall(session);
    detail = progress || call?.title || "";
  }
  const who = named ? `${truncate(sessionLabel(session), 24)} (${session.agent})` : session.agent;
  const text = `${icon} ${who}: ${label}${detail ? ` · ${truncate(detail, 40)}` : ""}`;
  const tooltip = [
    `ACP session ${sessionLabel(session)}`,
    `Agent: ${session.agent}`,
    `Status: ${label}${session.stopReason ? ` (last stop: ${session.stopReason})` : ""}`,
    detail ? `Now: ${detail}` : "",
  ]
    .filter(Boolean)
    .join("\n");
  return { text, tooltip };
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
