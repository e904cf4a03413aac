// The chat view's rendering logic: session state in, HTML strings out. Pure (no DOM), so it is
// unit-tested under Node. Every piece of agent text goes through escapeHtml or the Markdown
// renderer. Interactive elements carry `data-action` attributes; the webview's script
// delegates clicks on them to the extension host. Tool calls and permission prompts render
// in ./renderTools.

import type { ChatSession } from "../model/sessionModel";
import type { PromptContext } from "../model/messages";
import type {
  AgentSummary,
  AvailableCommand,
  ConfigOption,
  ConfigOptionValue,
  Message,
  ModesState,
  PlanEntry,
  SessionInfo,
  Usage,
} from "../model/types";
import { isBusy, isOpenReview, type ChangedFile } from "../model/queries";
import { attr, displayPath, icon, renderContentBlock, type RenderContext } from "./html";
import { escapeHtml, renderMarkdownBlocks } from "./markdown";
import { reviewDone, toolCallHtml, toolCallParts, type ToolCallParts } from "./renderTools";

export { attr, displayPath, icon, renderContentBlock, type RenderContext } from "./html";
export { kindIcon, renderDiffLines, renderPermission, renderToolCall, statusLabel, type ToolCallParts } from "./renderTools";

const SESSION_STATUS_LABELS: Record<string, string> = {
  idle: "Idle",
  running: "Working…",
  awaiting_permission: "Waiting for your permission",
  cancelling: "Cancelling…",
  failed: "Agent unavailable",
  closed: "Closed",
};

export function sessionStatusLabel(status: string): string {
  return SESSION_STATUS_LABELS[status] ?? status;
}

// -- messages ---------------------------------------------------------------------------------

/** A message's body as top-level elements: what the chat patches one by one as it streams. */
export function renderMessageBlocks(message: Message): string[] {
  return message.content.flatMap((block) =>
    block.type === "text" ? renderMarkdownBlocks(typeof block.text === "string" ? block.text : "") : [renderContentBlock(block)],
  );
}

export function renderMessage(message: Message, index: number, blocks = renderMessageBlocks(message)): string {
  const body = blocks.join("");
  const key = `m:${index}`;
  if (message.role === "thought") {
    // Collapsed by default: thoughts are there to look into, not to read along.
    return (
      `<details class="entry thought" data-key="${key}"><summary>${icon("lightbulb")} Thinking</summary>` +
      `<div class="thought-body">${body}</div></details>`
    );
  }
  const role = message.role === "user" ? "user" : message.role === "agent" ? "agent" : "other";
  const who = role === "user" ? "You" : role === "agent" ? "Agent" : escapeHtml(message.role);
  return (
    `<div class="entry message ${role}" data-key="${key}">` +
    `<div class="who">${who}${role === "user" ? userActions(index) : ""}</div><div class="body">${body}</div></div>`
  );
}

/** What the user can do with one of their messages: go back to the files as they were before
 * it, or rewind the conversation to it with its text back in the input. */
function userActions(index: number): string {
  return (
    `<span class="message-actions">` +
    `<button class="icon" data-action="restoreCheckpoint" data-index="${index}" aria-label="Restore checkpoint" title="Restore checkpoint: the files as they were before this message">${icon("discard")}</button>` +
    `<button class="icon" data-action="editResend" data-index="${index}" aria-label="Edit and resend" title="Edit and resend: a new session from before this message, its text in the input">${icon("edit")}</button>` +
    `</span>`
  );
}

// -- plan, usage, header ----------------------------------------------------------------------

const PLAN_ICONS: Record<string, string> = {
  pending: "circle-outline",
  in_progress: "arrow-circle-right",
  completed: "pass-filled",
};

export function renderPlan(entries: PlanEntry[] | null): string {
  if (!entries || entries.length === 0) {
    return "";
  }
  const done = entries.filter((e) => e.status === "completed").length;
  const items = entries
    .map((entry) => {
      const status = typeof entry.status === "string" ? entry.status : "pending";
      const priority = typeof entry.priority === "string" ? ` prio-${attr(entry.priority)}` : "";
      return `<li class="plan-${attr(status)}${priority}">${icon(PLAN_ICONS[status] ?? "circle-outline")} ${escapeHtml(String(entry.content ?? ""))}</li>`;
    })
    .join("");
  return `<details class="plan" open><summary>${icon("checklist")} Plan <span class="muted">${done}/${entries.length}</span></summary><ul>${items}</ul></details>`;
}

export function formatTokens(n: number): string {
  if (n >= 1_000_000) {
    return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`;
  }
  if (n >= 1000) {
    return `${(n / 1000).toFixed(1).replace(/\.0$/, "")}k`;
  }
  return String(n);
}

export function renderUsage(usage: Usage | null): string {
  if (!usage || typeof usage.used !== "number") {
    return "";
  }
  const parts = [`${formatTokens(usage.used)}`];
  let percent = "";
  if (typeof usage.size === "number" && usage.size > 0) {
    parts[0] += ` / ${formatTokens(usage.size)} tokens`;
    const pct = Math.min(100, Math.round((usage.used / usage.size) * 100));
    // A <progress> element: the webview's CSP allows no inline style attributes.
    percent = `<progress class="meter" max="100" value="${pct}"></progress> ${pct}%`;
  } else {
    parts[0] += " tokens";
  }
  if (usage.cost && typeof usage.cost.amount === "number") {
    parts.push(`${usage.cost.amount.toFixed(2)} ${escapeHtml(String(usage.cost.currency ?? ""))}`);
  }
  return `<div class="usage" title="Context window usage">${icon("dashboard")} ${parts.join(" · ")} ${percent}</div>`;
}

export function renderModeOptions(modes: ModesState | null): string {
  if (!modes || modes.availableModes.length === 0) {
    return "";
  }
  return modes.availableModes
    .map(
      (mode) =>
        `<option value="${attr(mode.id)}"${mode.id === modes.currentModeId ? " selected" : ""}${mode.description ? ` title="${attr(mode.description)}"` : ""}>${escapeHtml(mode.name)}</option>`,
    )
    .join("");
}

const CATEGORY_LABELS: Record<string, string> = {
  model: "Model",
  model_config: "Model settings",
  thought_level: "Thinking",
  mode: "Mode",
};
const CATEGORY_RANK: Record<string, number> = { model: 1, model_config: 2, thought_level: 3, mode: 4 };

/** A config option category as a short label (custom `_x` categories by name). */
export function categoryLabel(category: string | null | undefined): string | null {
  if (!category) {
    return null;
  }
  const label = CATEGORY_LABELS[category] ?? category.replace(/^_/, "").replace(/_/g, " ");
  return label.charAt(0).toUpperCase() + label.slice(1);
}

/** Every option, grouped by category (model first), in the agent's order within one. */
export function renderConfigOptions(options: ConfigOption[]): string {
  const rank = (o: ConfigOption): number => CATEGORY_RANK[o.category ?? ""] ?? 9;
  return options
    .map((o, i) => ({ o, i }))
    .sort((a, b) => rank(a.o) - rank(b.o) || a.i - b.i)
    .map(({ o }) => renderConfigOption(o))
    .join("");
}

function renderValue(v: ConfigOptionValue, current: string | boolean): string {
  return `<option value="${attr(v.value)}"${v.value === current ? " selected" : ""}>${escapeHtml(v.name)}</option>`;
}

export function renderConfigOption(option: ConfigOption): string {
  const id = attr(option.id);
  const group = categoryLabel(option.category);
  const title = attr([group, option.description ?? option.name].filter(Boolean).join(": "));
  const cat = option.category ? ` data-category="${attr(option.category)}"` : "";
  if (option.type === "boolean" || typeof option.currentValue === "boolean") {
    return `<label class="cfg"${cat} title="${title}"><input type="checkbox" data-config="${id}"${option.currentValue ? " checked" : ""}> ${escapeHtml(option.name)}</label>`;
  }
  const values = (option.options ?? [])
    .map((v) =>
      "group" in v && Array.isArray(v.options)
        ? `<optgroup label="${attr(v.name)}">${(v.options as ConfigOptionValue[]).map((x) => renderValue(x, option.currentValue)).join("")}</optgroup>`
        : renderValue(v as ConfigOptionValue, option.currentValue),
    )
    .join("");
  return `<label class="cfg"${cat} title="${title}">${escapeHtml(option.name)} <select data-config="${id}">${values}</select></label>`;
}

export function renderStatusLine(session: ChatSession | null): string {
  if (!session) {
    return `<span class="muted">No session</span>`;
  }
  const busy = isBusy(session.status);
  const spin = busy ? icon("loading codicon-modifier-spin") : session.status === "failed" ? icon("error") : icon("circle-filled");
  let detail = "";
  if (session.status === "idle" && session.stopReason && session.stopReason !== "end_turn") {
    detail = ` <span class="muted">(${escapeHtml(session.stopReason.replace(/_/g, " "))})</span>`;
  }
  if (session.error) {
    const message = typeof session.error.message === "string" ? session.error.message : "error";
    detail += ` <span class="error-text">${escapeHtml(message)}</span>`;
  }
  return `<span class="status status-${attr(session.status)}">${spin} ${escapeHtml(sessionStatusLabel(session.status))}</span>${detail}`;
}

export function renderCommandList(commands: AvailableCommand[], selected: number): string {
  return commands
    .map(
      (command, index) =>
        `<div class="completion${index === selected ? " selected" : ""}" data-action="complete" data-command="${attr(command.name)}"><span class="cmd">/${escapeHtml(command.name)}</span>` +
        (command.input?.hint ? ` <span class="hint">${escapeHtml(command.input.hint)}</span>` : "") +
        (command.description ? `<span class="desc">${escapeHtml(command.description)}</span>` : "") +
        `</div>`,
    )
    .join("");
}

const CHANGE_ICONS: Record<string, string> = { created: "diff-added", modified: "diff-modified", deleted: "diff-removed" };

/** The last turn's "N files changed" summary: each file with what happened to it and its review
 * state, Keep / Reject per file while it awaits a decision, Keep all / Reject all while any
 * does. A click on a file opens the agent's diff of it where it reported one, else the file. */
export function renderTurnReview(files: ChangedFile[], cwd: string): string {
  if (files.length === 0) {
    return "";
  }
  const open = files.filter((f) => isOpenReview(f.status));
  const rows = files.map((file) => {
    const path = attr(file.path);
    const shown = escapeHtml(displayPath(file.path, cwd));
    const link = file.diff
      ? `<span class="path" data-action="openDiff" data-tool="${attr(file.diff.toolCallId)}" data-index="${file.diff.index}" title="Open the agent's change in the diff editor">${shown}</span>`
      : file.change === "deleted"
        ? `<span class="path gone">${shown}</span>`
        : `<span class="path" data-action="openLocation" data-path="${path}" title="Open the file">${shown}</span>`;
    const change = `<span class="change change-${attr(file.change)}">${icon(CHANGE_ICONS[file.change] ?? "diff")} ${escapeHtml(file.change)}</span>`;
    const state = isOpenReview(file.status)
      ? `<button class="link" data-action="review" data-review="accept" data-path="${path}" title="Keep this file's change">${icon("check")} Keep</button>` +
        `<button class="link" data-action="review" data-review="reject" data-path="${path}" title="Undo this file's change">${icon("discard")} Reject</button>`
      : `<span class="review-state">${reviewDone(file.status)}</span>`;
    const failure =
      file.status === "failed" ? `<div class="review-error">${icon("warning")} ${escapeHtml(file.message ?? "The undo failed.")}</div>` : "";
    return `<li class="turn-file review-${attr(file.status)}" data-path="${path}"><div class="turn-file-row">${link}${change}<span class="spacer"></span>${state}</div>${failure}</li>`;
  });
  const buttons =
    open.length > 0
      ? `<button data-action="review" data-review="accept">${icon("check-all")} Keep all</button>` +
        `<button class="secondary" data-action="review" data-review="reject">${icon("discard")} Reject all</button>`
      : "";
  return (
    `<div class="turn-review"><div class="turn-review-head">${icon("git-compare")} <span class="turn-count">${files.length} file${files.length === 1 ? "" : "s"} changed</span>` +
    `<span class="spacer"></span>${buttons}</div><ul class="turn-files">${rows.join("")}</ul></div>`
  );
}

/** One timeline entry's HTML, or "" for an entry the session does not hold. */
export function renderEntry(session: ChatSession, key: string, ctx: RenderContext): string {
  return renderEntryView(session, key, ctx)?.html() ?? "";
}

/** A timeline entry as the chat shows it: its HTML, and the parts it patches one by one
 * (a message's body blocks, a tool call's parts). */
export type EntryRender =
  | { html(): string; blocks: string[]; parts?: undefined }
  | { html(): string; parts: ToolCallParts; blocks?: undefined };

/** One timeline entry for the chat's TimelineView, or null for one the session does not hold. */
export function renderEntryView(session: ChatSession, key: string, ctx: RenderContext): EntryRender | null {
  if (key.startsWith("m:")) {
    const index = Number(key.slice(2));
    const message = session.messages[index];
    if (!message) {
      return null;
    }
    const blocks = renderMessageBlocks(message);
    return { blocks, html: () => renderMessage(message, index, blocks) };
  }
  if (key.startsWith("t:")) {
    const call = session.toolCalls[key.slice(2)];
    if (!call) {
      return null;
    }
    const parts = toolCallParts(call, ctx);
    return { parts, html: () => toolCallHtml(call.toolCallId, parts) };
  }
  return null;
}

/** The key of the timeline's entry at `index`: `m:<index>` or `t:<toolCallId>`. */
export function timelineKey(session: ChatSession, index: number): string {
  const entry = session.timeline[index];
  return entry === undefined ? "" : "message" in entry ? `m:${entry.message}` : `t:${entry.toolCall}`;
}

/** Keys of the timeline, in order. */
export function timelineKeys(session: ChatSession): string[] {
  return session.timeline.map((_, index) => timelineKey(session, index));
}

/** Which tool calls show a terminal: for re-rendering them when its output grows. */
export function toolCallsShowingTerminal(session: ChatSession, terminalId: string): string[] {
  return Object.values(session.toolCalls)
    .filter((call) => call.content.some((item) => item.type === "terminal" && item.terminalId === terminalId))
    .map((call) => call.toolCallId);
}

// -- toolbar, context line, session list ------------------------------------------------------

export function renderAgentOptions(agents: AgentSummary[], selected: string): string {
  return agents
    .map(
      (a) =>
        `<option value="${attr(a.name)}"${a.name === selected ? " selected" : ""}${a.error ? ` title="${attr(a.error)}"` : ""}>${escapeHtml(a.title || a.name)}</option>`,
    )
    .join("");
}

/** The line under the input naming what the prompt will carry ("" when nothing). */
export function renderContextLine(context: PromptContext, include: boolean): string {
  const label = context.selection ?? context.file;
  if (!label) {
    return "";
  }
  return (
    `<label title="Attach to the prompt"><input type="checkbox" id="include-context"${include ? " checked" : ""}> ` +
    `${icon(context.selection ? "selection" : "file")} ${escapeHtml(label)}</label>`
  );
}

export function renderSessionRows(sessions: SessionInfo[]): string {
  if (sessions.length === 0) {
    return `<div class="muted">No sessions yet.</div>`;
  }
  return sessions
    .map((s) => {
      const when = s.updatedAt ? ` · ${escapeHtml(s.updatedAt.replace("T", " ").replace(/:\d\dZ?$/, ""))}` : "";
      return (
        `<div class="session-row" data-action="loadSession" data-agent="${attr(s.agent)}" data-session="${attr(s.sessionId)}" data-live="${s.live}">` +
        `${icon(s.live ? "comment-discussion" : "history")}<div class="session-text"><div class="session-title">${escapeHtml(s.title || s.sessionId)}</div>` +
        `<div class="muted">${escapeHtml(s.agent)}${s.live ? " · open" : ""}${when}</div></div></div>`
      );
    })
    .join("");
}

// -- queued prompts ---------------------------------------------------------------------------

/** The prompts waiting their turn, oldest first, each with Send now / Edit / Remove. */
export function renderQueue(items: { id: number; text: string }[]): string {
  return items
    .map(
      (item, n) =>
        `<div class="queued" data-id="${item.id}"><span class="muted">${n + 1}.</span> <span class="queued-text">${escapeHtml(item.text)}</span>` +
        `<span class="spacer"></span>` +
        `<button class="icon" data-action="queued" data-queued="sendNow" data-id="${item.id}" aria-label="Send now" title="Send now: stop the running turn and send this">${icon("run")}</button>` +
        `<button class="icon" data-action="queued" data-queued="edit" data-id="${item.id}" aria-label="Edit" title="Edit: back into the input">${icon("edit")}</button>` +
        `<button class="icon" data-action="queued" data-queued="remove" data-id="${item.id}" aria-label="Remove" title="Remove: it is never sent">${icon("close")}</button></div>`,
    )
    .join("");
}
