// The hunks of agent changes still under review, by file (review.files[].hunks): what the
// editor shows in place (../hunkLens.ts). A file shows the hunks of the latest tool call that
// changed it: their line numbers are those of the text that call left.

import type { ChatSession } from "./sessionModel";

export interface ReviewHunk {
  index: number;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  status: string;
  oldText?: string;
}

export interface FileHunks {
  sessionId: string;
  toolCallId: string;
  /** As the agent reported it (what acp/reviewEdit names). */
  path: string;
  hunks: ReviewHunk[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function absolute(path: string, cwd: string): string {
  return path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path) ? path : `${cwd.replace(/\/+$/, "")}/${path}`;
}

/** Absolute path -> the pending hunks shown for it. */
export function pendingHunks(sessions: ChatSession[]): Map<string, FileHunks> {
  const out = new Map<string, FileHunks>();
  for (const session of sessions) {
    for (const call of Object.values(session.toolCalls)) {
      const review = call.review;
      if (!isObject(review) || !Array.isArray(review.files)) {
        continue;
      }
      for (const file of review.files) {
        if (!isObject(file) || typeof file.path !== "string" || !Array.isArray(file.hunks)) {
          continue;
        }
        const hunks = (file.hunks as ReviewHunk[]).filter((h) => isObject(h) && h.status === "pending");
        const key = absolute(file.path, session.cwd);
        if (hunks.length > 0) {
          out.set(key, { sessionId: session.sessionId, toolCallId: call.toolCallId, path: file.path, hunks });
        } else {
          out.delete(key); // a later call's decided change: the earlier hunks' lines moved
        }
      }
    }
  }
  return out;
}

/** The 0-based lines a hunk's new text occupies ([first, last]; a deletion: the line after
 * the gap, or the last line). */
export function hunkLines(hunk: ReviewHunk, lineCount: number): [number, number] {
  const last = Math.max(0, lineCount - 1);
  if (hunk.newLines > 0) {
    const first = Math.min(hunk.newStart - 1, last);
    return [first, Math.min(first + hunk.newLines - 1, last)];
  }
  const at = Math.min(hunk.newStart, last); // newStart names the line before the gap
  return [at, at];
}
