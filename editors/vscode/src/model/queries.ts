// Questions views ask of a session: pure functions over the reducer's state.

import type { ChatSession } from "./sessionModel";
import type { JsonObject, Message, TimelineEntry, ToolCallState } from "./types";

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The text of a message's text blocks, joined. */
export function messageText(message: Message): string {
  return message.content
    .map((block) => (block.type === "text" && typeof block.text === "string" ? block.text : ""))
    .join("");
}

export function isFinished(status: string): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** The tool call the agent is working on now: the latest one still pending or in progress. */
export function runningToolCall(session: ChatSession): ToolCallState | null {
  for (let i = session.timeline.length - 1; i >= 0; i--) {
    const entry = session.timeline[i] as TimelineEntry;
    if ("toolCall" in entry) {
      const call = session.toolCalls[entry.toolCall];
      if (call !== undefined && (call.status === "in_progress" || call.status === "pending")) {
        return call;
      }
    }
  }
  return null;
}

export interface DiffItem {
  path: string;
  oldText: string | null;
  newText: string;
}

export function diffItems(call: ToolCallState): DiffItem[] {
  const items: DiffItem[] = [];
  for (const item of call.content) {
    if (item.type === "diff" && typeof item.path === "string" && typeof item.newText === "string") {
      items.push({
        path: item.path,
        oldText: typeof item.oldText === "string" ? item.oldText : null,
        newText: item.newText,
      });
    }
  }
  return items;
}

/** The review state of a tool call's changes: "pending" until accepted or rejected. */
export function reviewState(call: ToolCallState): string {
  const review = call.review;
  if (typeof review === "string") {
    return review;
  }
  if (isObject(review)) {
    for (const key of ["status", "state", "action", "outcome"]) {
      const value = review[key];
      if (typeof value === "string") {
        return value;
      }
    }
  }
  return "pending";
}

/** Review states that still await a decision ("failed": a reject that may be retried). */
const OPEN_REVIEW_STATES = new Set(["pending", "failed", "unreviewed"]);

export function isOpenReview(state: string): boolean {
  return OPEN_REVIEW_STATES.has(state);
}

export function isReviewed(call: ToolCallState): boolean {
  return !isOpenReview(reviewState(call));
}

/** One file's review state and message (`review.files[]`), else the call's. */
export function fileReview(call: ToolCallState, path: string): { status: string; message?: string } {
  const review = call.review;
  if (isObject(review) && Array.isArray(review.files)) {
    for (const file of review.files) {
      if (isObject(file) && file.path === path && typeof file.status === "string") {
        return typeof file.message === "string" ? { status: file.status, message: file.message } : { status: file.status };
      }
    }
  }
  return { status: reviewState(call) };
}

/** One file the last turn changed, over all of the turn's tool calls (the "N files changed"
 * summary). */
export interface ChangedFile {
  path: string;
  /** "created", "modified" or "deleted": what the bridge saw on disk, else the reported diff's. */
  change: string;
  /** "pending", "accepted", "rejected", "failed" (an undo that may be retried), or "mixed"
   * (tool calls decided differently). */
  status: string;
  /** Why an undo failed. */
  message?: string;
  /** The agent's last reported diff of the file, when it reported one (to open it). */
  diff?: { toolCallId: string; index: number };
}

export interface FileSighting {
  path: string;
  status: string;
  change: string | null;
  message?: string;
}

/** What one tool call changed, file by file: its review's files, and reported diffs that the
 * review does not list (yet). */
export function toolCallFiles(call: ToolCallState): FileSighting[] {
  const out: FileSighting[] = [];
  const review = call.review;
  if (isObject(review) && Array.isArray(review.files)) {
    for (const file of review.files) {
      if (isObject(file) && typeof file.path === "string" && typeof file.status === "string") {
        out.push({
          path: file.path,
          status: file.status,
          change: typeof file.change === "string" ? file.change : null,
          ...(typeof file.message === "string" ? { message: file.message } : {}),
        });
      }
    }
  }
  for (const diff of diffItems(call)) {
    if (!out.some((f) => f.path === diff.path)) {
      out.push({ path: diff.path, status: reviewState(call), change: null });
    }
  }
  return out;
}

/** The net change of a file that several tool calls changed, oldest first. */
function netChange(changes: string[]): string {
  const first = changes[0] ?? "modified";
  const last = changes[changes.length - 1] ?? "modified";
  if (last === "deleted") {
    return "deleted";
  }
  return first === "created" ? "created" : last === "created" ? "created" : "modified";
}

/** The files the last turn changed, in the order they were first changed, each with its review
 * state over the whole turn. */
export function turnChanges(session: ChatSession): ChangedFile[] {
  if (session.lastTurnStart < 0) {
    return [];
  }
  const byPath = new Map<string, { changes: string[]; statuses: string[]; message?: string; diff?: ChangedFile["diff"] }>();
  for (const entry of session.timeline.slice(session.lastTurnStart)) {
    if (!("toolCall" in entry)) {
      continue;
    }
    const call = session.toolCalls[entry.toolCall];
    if (call === undefined) {
      continue;
    }
    const diffs = diffItems(call);
    for (const file of toolCallFiles(call)) {
      let item = byPath.get(file.path);
      if (item === undefined) {
        item = { changes: [], statuses: [] };
        byPath.set(file.path, item);
      }
      const index = diffs.map((d) => d.path).lastIndexOf(file.path);
      const reported = diffs[index];
      if (reported !== undefined) {
        item.diff = { toolCallId: call.toolCallId, index };
      }
      item.changes.push(file.change ?? (reported?.oldText === null ? "created" : "modified"));
      item.statuses.push(file.status);
      if (file.message !== undefined) {
        item.message = file.message;
      }
    }
  }
  return [...byPath.entries()].map(([path, item]) => {
    const open = item.statuses.filter(isOpenReview);
    const decided = new Set(item.statuses.filter((s) => !isOpenReview(s)));
    const status =
      open.length > 0 ? (open.includes("failed") ? "failed" : "pending") : decided.size === 1 ? [...decided][0] ?? "pending" : "mixed";
    const file: ChangedFile = { path, change: netChange(item.changes), status };
    if (status === "failed" && item.message !== undefined) {
      file.message = item.message;
    }
    if (item.diff !== undefined) {
      file.diff = item.diff;
    }
    return file;
  });
}

export function isBusy(status: string): boolean {
  return status === "running" || status === "awaiting_permission" || status === "cancelling";
}
