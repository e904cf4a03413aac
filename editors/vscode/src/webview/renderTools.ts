// Rendering of tool calls (kind, status, locations, diffs, terminals, review) and of
// permission prompts. Pure: HTML strings out, every agent string escaped.

import type { PendingPermission } from "../model/messages";
import {
  diffItems,
  fileReview,
  isFinished,
  isOpenReview,
  reviewState,
  toolCallFiles,
  type DiffItem,
  type FileSighting,
} from "../model/queries";
import type { ContentBlock, JsonObject, PermissionOption, TerminalState, ToolCallState } from "../model/types";
import { attr, displayPath, icon, renderContentBlock, type RenderContext } from "./html";
import { diffStats, lineDiff, type DiffLine } from "./lineDiff";
import { escapeHtml } from "./markdown";

const KIND_ICONS: Record<string, string> = {
  read: "eye",
  edit: "edit",
  delete: "trash",
  move: "arrow-swap",
  search: "search",
  execute: "terminal",
  think: "lightbulb",
  fetch: "globe",
  switch_mode: "symbol-event",
  other: "tools",
};

const STATUS_ICONS: Record<string, string> = {
  pending: "circle-outline",
  in_progress: "loading codicon-modifier-spin",
  completed: "check",
  failed: "error",
  cancelled: "circle-slash",
};

const STATUS_LABELS: Record<string, string> = {
  pending: "Pending",
  in_progress: "Running",
  completed: "Done",
  failed: "Failed",
  cancelled: "Cancelled",
};

/** A kind's icon name; unknown (and `_vendor`) kinds get the generic one. */
export function kindIcon(kind: string): string {
  return KIND_ICONS[kind] ?? "tools";
}

export function statusLabel(status: string): string {
  return STATUS_LABELS[status] ?? status.replace(/^_/, "").replace(/_/g, " ");
}

// -- tool calls -------------------------------------------------------------------------------

export function renderDiffLines(lines: DiffLine[], limit = 400): string {
  const rows: string[] = [];
  for (const line of lines.slice(0, limit)) {
    if (line.op === "…") {
      rows.push(`<div class="dl skip">⋯ ${line.count} unchanged line${line.count === 1 ? "" : "s"}</div>`);
    } else {
      const cls = line.op === "+" ? "add" : line.op === "-" ? "del" : "ctx";
      rows.push(`<div class="dl ${cls}"><span class="op">${line.op}</span>${escapeHtml(line.text)}</div>`);
    }
  }
  if (lines.length > limit) {
    rows.push(`<div class="dl skip">⋯ ${lines.length - limit} more lines: open the diff</div>`);
  }
  return `<div class="diff-lines">${rows.join("")}</div>`;
}

const REVIEW_DONE: Record<string, [string, string]> = {
  accepted: ["check", "Kept"],
  rejected: ["discard", "Rejected"],
  mixed: ["check", "Partly kept"],
};

/** A decided review state, as shown. */
export function reviewDone(status: string): string {
  const [name, label] = REVIEW_DONE[status] ?? ["info", status];
  return `${icon(name)} ${escapeHtml(label)}`;
}

function renderDiff(call: ToolCallState, diff: DiffItem, index: number, cwd: string): string {
  const lines = lineDiff(diff.oldText, diff.newText);
  const { added, removed } = diffStats(lines);
  const tool = attr(call.toolCallId);
  const path = attr(diff.path);
  const review = fileReview(call, diff.path);
  const buttons = [
    `<button class="link" data-action="openDiff" data-tool="${tool}" data-index="${index}" title="Open in the diff editor">${icon("diff")} Diff</button>`,
  ];
  if (call.status === "completed" && isOpenReview(review.status)) {
    buttons.push(
      `<button class="link" data-action="review" data-review="accept" data-tool="${tool}" data-path="${path}" title="Keep this file's change">${icon("check")} Keep</button>`,
      `<button class="link" data-action="review" data-review="reject" data-tool="${tool}" data-path="${path}" title="Undo this file's change">${icon("discard")} Reject</button>`,
    );
  } else if (!isOpenReview(review.status)) {
    buttons.push(`<span class="review-state">${reviewDone(review.status)}</span>`);
  }
  const created = diff.oldText === null ? ` <span class="tag">new</span>` : "";
  const failure =
    review.status === "failed" ? `<div class="review-error">${icon("warning")} ${escapeHtml(review.message ?? "The undo failed.")}</div>` : "";
  return (
    `<div class="diff" data-path="${path}">` +
    `<div class="diff-head"><span class="path" data-action="openLocation" data-path="${path}">${escapeHtml(displayPath(diff.path, cwd))}</span>${created}` +
    ` <span class="stat add">+${added}</span> <span class="stat del">−${removed}</span>` +
    `<span class="spacer"></span>${buttons.join("")}</div>` +
    failure +
    renderDiffLines(lines) +
    `</div>`
  );
}

/** A file the bridge saw change on disk while the tool call ran, which the agent reported no
 * diff of (a shell command's change): its name, what happened to it, its review buttons. */
function renderDiskChange(call: ToolCallState, file: FileSighting, cwd: string): string {
  const path = attr(file.path);
  const tool = attr(call.toolCallId);
  const shown = escapeHtml(displayPath(file.path, cwd));
  const name = file.change === "deleted" ? `<span class="path gone">${shown}</span>` : `<span class="path" data-action="openLocation" data-path="${path}">${shown}</span>`;
  const state =
    call.status === "completed" && isOpenReview(file.status)
      ? `<button class="link" data-action="review" data-review="accept" data-tool="${tool}" data-path="${path}" title="Keep this file's change">${icon("check")} Keep</button>` +
        `<button class="link" data-action="review" data-review="reject" data-tool="${tool}" data-path="${path}" title="Undo this file's change">${icon("discard")} Reject</button>`
      : isOpenReview(file.status)
        ? ""
        : `<span class="review-state">${reviewDone(file.status)}</span>`;
  const failure =
    file.status === "failed" ? `<div class="review-error">${icon("warning")} ${escapeHtml(file.message ?? "The undo failed.")}</div>` : "";
  return (
    `<div class="diff disk-change" data-path="${path}"><div class="diff-head">${name} <span class="tag">${escapeHtml(file.change ?? "changed")}</span>` +
    `<span class="spacer"></span>${state}</div>${failure}</div>`
  );
}

function renderTerminal(terminalId: string, terminal: TerminalState | undefined): string {
  const output = terminal?.output ?? "";
  const exit = terminal?.exitStatus;
  let footer = "";
  if (exit) {
    const code = exit.exitCode;
    footer =
      exit.signal != null
        ? `<div class="term-exit failed">killed by ${escapeHtml(String(exit.signal))}</div>`
        : `<div class="term-exit ${code === 0 ? "ok" : "failed"}">exit code ${escapeHtml(String(code))}</div>`;
  }
  const truncated = terminal?.truncated ? `<div class="term-trunc">⋯ earlier output dropped</div>` : "";
  return (
    `<div class="terminal" data-terminal="${attr(terminalId)}">${truncated}` +
    `<pre class="term-output">${escapeHtml(output)}</pre>${footer}</div>`
  );
}

function commandOf(call: ToolCallState): string | null {
  const input = call.rawInput;
  if (input && typeof input === "object" && !Array.isArray(input)) {
    const raw = input as JsonObject;
    const command = raw.command ?? raw.cmd;
    if (typeof command === "string") {
      const args = Array.isArray(raw.args) ? ` ${raw.args.map(String).join(" ")}` : "";
      return command + args;
    }
    if (Array.isArray(command)) {
      return command.map(String).join(" ");
    }
  }
  return null;
}

function renderToolContent(call: ToolCallState, ctx: RenderContext): string {
  const parts: string[] = [];
  let diffIndex = 0;
  for (const item of call.content) {
    if (item.type === "diff") {
      const diff = diffItems({ ...call, content: [item] })[0];
      if (diff) {
        parts.push(renderDiff(call, diff, diffIndex, ctx.cwd));
      }
      diffIndex++;
    } else if (item.type === "terminal" && typeof item.terminalId === "string") {
      parts.push(renderTerminal(item.terminalId, ctx.terminals[item.terminalId]));
    } else if (item.type === "content" && item.content && typeof item.content === "object") {
      parts.push(`<div class="tool-text">${renderContentBlock(item.content as ContentBlock)}</div>`);
    } else {
      parts.push(`<div class="chip unknown">${icon("question")} ${escapeHtml(String(item.type ?? "content"))}</div>`);
    }
  }
  const reported = new Set(diffItems(call).map((d) => d.path));
  for (const file of toolCallFiles(call)) {
    if (!reported.has(file.path)) {
      parts.push(renderDiskChange(call, file, ctx.cwd));
    }
  }
  return parts.join("");
}

function renderLocations(call: ToolCallState, cwd: string): string {
  if (call.locations.length === 0) {
    return "";
  }
  const links = call.locations
    .filter((loc) => typeof loc.path === "string")
    .map((loc) => {
      const line = typeof loc.line === "number" ? loc.line : null;
      const label = displayPath(loc.path, cwd) + (line !== null ? `:${line}` : "");
      return `<span class="loc" data-action="openLocation" data-path="${attr(loc.path)}"${line !== null ? ` data-line="${line}"` : ""}>${escapeHtml(label)}</span>`;
    });
  return `<div class="locations">${links.join(" ")}</div>`;
}

/** A tool call's entry in parts, so the chat can patch only the parts that changed. */
export interface ToolCallParts {
  /** The entry's class attribute (its status shows there). */
  className: string;
  open: boolean;
  summary: string;
  body: string;
}

export function toolCallParts(call: ToolCallState, ctx: RenderContext): ToolCallParts {
  const permission = ctx.permissionFor(call.toolCallId);
  const status = permission ? "awaiting" : call.status;
  const statusIcon = permission ? "shield" : (STATUS_ICONS[call.status] ?? "circle-outline");
  const statusText = permission ? "Needs permission" : statusLabel(call.status);
  const review = reviewState(call);
  const files = toolCallFiles(call);
  let reviewBar = "";
  if (files.length > 0 && call.status === "completed") {
    if (isOpenReview(review)) {
      const tool = attr(call.toolCallId);
      reviewBar =
        `<div class="review-bar"><span>${files.length} file${files.length === 1 ? "" : "s"} changed</span><span class="spacer"></span>` +
        `<button data-action="review" data-review="accept" data-tool="${tool}">${icon("check")} Keep</button>` +
        `<button class="secondary" data-action="review" data-review="reject" data-tool="${tool}">${icon("discard")} Reject</button></div>`;
    } else {
      reviewBar = `<div class="review-bar done">${reviewDone(review)}</div>`;
    }
  }
  const command = commandOf(call);
  const title = call.title || (command ?? call.kind);
  return {
    className: `entry tool status-${attr(status)}`,
    open: !isFinished(call.status) || permission !== undefined || files.length > 0,
    summary:
      `${icon(kindIcon(call.kind), call.kind)}<span class="tool-title">${escapeHtml(title)}</span>` +
      `<span class="spacer"></span><span class="tool-status">${icon(statusIcon)} ${escapeHtml(statusText)}</span>`,
    body:
      (command && command !== title ? `<pre class="command">$ ${escapeHtml(command)}</pre>` : "") +
      renderLocations(call, ctx.cwd) +
      renderToolContent(call, ctx) +
      reviewBar,
  };
}

/** A tool call's entry from its parts. */
export function toolCallHtml(toolCallId: string, parts: ToolCallParts): string {
  return (
    `<details class="${parts.className}" data-key="t:${attr(toolCallId)}"${parts.open ? " open" : ""}>` +
    `<summary>${parts.summary}</summary><div class="tool-body">${parts.body}</div></details>`
  );
}

export function renderToolCall(call: ToolCallState, ctx: RenderContext): string {
  return toolCallHtml(call.toolCallId, toolCallParts(call, ctx));
}

// -- permission prompts -----------------------------------------------------------------------

function optionClass(option: PermissionOption): string {
  if (option.kind.startsWith("allow")) {
    return option.kind === "allow_once" ? "" : "secondary";
  }
  return "danger";
}

/** A permission prompt; one of a session other than `activeId` says which and offers to show it. */
export function renderPermission(permission: PendingPermission, cwd: string, activeId: string | null = null): string {
  const call = permission.toolCall;
  const command = commandOf(call);
  const diffs = diffItems(call);
  const target =
    diffs.length > 0
      ? diffs
          .map((d) => `<div class="perm-file">${escapeHtml(displayPath(d.path, cwd))}</div>${renderDiffLines(lineDiff(d.oldText, d.newText), 60)}`)
          .join("")
      : command
        ? `<pre class="command">$ ${escapeHtml(command)}</pre>`
        : call.locations.length > 0
          ? `<div class="perm-file">${call.locations.map((l) => escapeHtml(displayPath(l.path, cwd))).join(", ")}</div>`
          : "";
  const request = attr(permission.requestId);
  const buttons = permission.options
    .map(
      (option) =>
        `<button class="${optionClass(option)}" data-action="permission" data-request="${request}" data-option="${attr(option.optionId)}" data-kind="${attr(option.kind)}">${escapeHtml(option.name)}</button>`,
    )
    .join("");
  const hasReject = permission.options.some((o) => o.kind.startsWith("reject"));
  const reason = hasReject
    ? `<input class="reason" data-request="${request}" type="text" placeholder="Reason, if you reject (optional)">`
    : "";
  const background =
    activeId !== null && permission.sessionId !== activeId
      ? `<div class="perm-session">${icon("layers")} <span>From the background session <strong>${escapeHtml(permission.sessionLabel ?? permission.sessionId)}</strong></span>` +
        `<button class="link" data-action="switchSession" data-session="${attr(permission.sessionId)}">Show it</button></div>`
      : "";
  return (
    `<div class="permission" data-request="${request}">` +
    background +
    `<div class="perm-head">${icon("shield")} <span>Allow <strong>${escapeHtml(call.title || call.kind)}</strong>?</span>` +
    `<span class="spacer"></span>${icon(kindIcon(call.kind), call.kind)}</div>` +
    target +
    `<div class="perm-actions">${buttons}</div>${reason}</div>`
  );
}
