// What asks for a user's attention (DESIGN §2; issue "Attention" and "Notices"): pure rules,
// shown by ../attention.ts.

import type { SessionStatusParams } from "../protocol";

const BUSY = new Set(["running", "awaiting_permission", "cancelling"]);

/** What a status change tells a user who is not looking, or null when it tells nothing: a
 * permission question now waiting, a turn that ended or failed (not one the user cancelled). */
export function statusAttention(label: string, before: string | undefined, params: SessionStatusParams): string | null {
  if (params.status === "awaiting_permission") {
    return before === "awaiting_permission" ? null : `${label} waits for your answer to a permission question.`;
  }
  if (before === undefined || !BUSY.has(before) || (params.status !== "idle" && params.status !== "failed")) {
    return null;
  }
  if (params.error) {
    return `${label}: the turn failed: ${params.error.message}`;
  }
  if (params.status === "failed") {
    return `${label}: the agent stopped.`;
  }
  return params.stopReason === "cancelled" ? null : `${label}: the turn ended.`;
}

export interface Notice {
  severity: "info" | "warning" | "error";
  text: string;
}

/** An ACP session notice (`{sessionUpdate: "notice", severity, title, description?}`) as one
 * line, or null for any other update. */
export function noticeOf(update: Record<string, unknown>): Notice | null {
  if (update.sessionUpdate !== "notice" || typeof update.title !== "string") {
    return null;
  }
  const severity = update.severity === "warning" || update.severity === "error" ? update.severity : "info";
  const description = typeof update.description === "string" && update.description ? ` — ${update.description}` : "";
  return { severity, text: `${update.title}${description}` };
}
