// The status bar's text for a session: its state, the tool call it is running and the
// turn's `$/progress` message. Pure, so it is unit-tested.

import { type ChatSession } from "./sessionModel";
import { isBusy, runningToolCall } from "./queries";

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

/** The status bar's text and tooltip for a session (pure, unit-tested). */
export function statusText(
  session: ChatSession | null,
  progress: string | undefined,
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
  const text = `${icon} ${session.agent}: ${label}${detail ? ` · ${truncate(detail, 40)}` : ""}`;
  const tooltip = [
    `ACP session ${session.title ?? session.sessionId}`,
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
