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

/** Tool calls of the last turn with changes still awaiting review. */
export function unreviewedChanges(session: ChatSession): ToolCallState[] {
  const calls: ToolCallState[] = [];
  for (const entry of session.timeline.slice(Math.max(session.lastTurnStart, 0))) {
    if ("toolCall" in entry) {
      const call = session.toolCalls[entry.toolCall];
      if (call !== undefined && diffItems(call).length > 0 && !isReviewed(call)) {
        calls.push(call);
      }
    }
  }
  return calls;
}

export function isBusy(status: string): boolean {
  return status === "running" || status === "awaiting_permission" || status === "cancelling";
}
