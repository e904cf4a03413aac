// The chat view's script (runs in the webview, a browser context). It keeps its own copy of
// the session through the same reducer as the extension host, renders with ./render and
// patches only the entries that changed, when ./redraw says.

import type { HostToWebview, PendingPermission, PromptContext, WebviewToHost } from "../model/messages";
import { applySessionUpdate, applyStatus, applyTerminalOutput, type ChatSession } from "../model/sessionModel";
import { isBusy, turnChanges } from "../model/queries";
import type { AgentSummary, SessionInfo } from "../model/types";
import { onChatClick } from "./actions";
import { AttachmentsView } from "./attachmentsView";
import { CommandCompletion } from "./composerCompletion";
import {
  renderAgentOptions,
  renderConfigOptions,
  renderContextLine,
  renderEntryView,
  renderModeOptions,
  renderPermission,
  renderPlan,
  renderQueue,
  renderSessionRows,
  renderStatusLine,
  renderTurnReview,
  renderUsage,
  timelineKey,
  toolCallsShowingTerminal,
  type RenderContext,
} from "./render";
import { Redraw } from "./redraw";
import { ScrollFollow } from "./scrollFollow";
import { TimelineView } from "./timelineView";

interface VsCodeApi {
  postMessage(message: WebviewToHost): void;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();

function $(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) {
    throw new Error(`missing #${id}`);
  }
  return el;
}

const ui = {
  agent: $("agent") as HTMLSelectElement,
  mode: $("mode") as HTMLSelectElement,
  config: $("config"),
  follow: $("follow") as HTMLButtonElement,
  title: $("title"),
  sessions: $("sessions"),
  plan: $("plan"),
  timeline: $("timeline"),
  empty: $("empty"),
  turnReview: $("turn-review"),
  permissions: $("permissions"),
  statusline: $("statusline"),
  queue: $("queue"),
  usage: $("usage"),
  completions: $("completions"),
  context: $("context"),
  input: $("input") as HTMLTextAreaElement,
  send: $("send") as HTMLButtonElement,
  cancel: $("cancel") as HTMLButtonElement,
  error: $("error"),
};

let session: ChatSession | null = null;
let agents: AgentSummary[] = [];
let defaultAgent: string | null = null;
let sessionList: SessionInfo[] = [];
let context: PromptContext = {};
let includeContext = true;
let follow = true;
const permissions = new Map<string, PendingPermission>();

const renderCtx: RenderContext = {
  get cwd() {
    return session?.cwd ?? "";
  },
  get terminals() {
    return session?.terminals ?? {};
  },
  permissionFor(toolCallId: string) {
    for (const permission of permissions.values()) {
      if (permission.toolCall.toolCallId === toolCallId && permission.sessionId === session?.sessionId) {
        return permission;
      }
    }
    return undefined;
  },
};

const timeline = new TimelineView(ui.timeline, {
  count: () => session?.timeline.length ?? 0,
  key: (index) => (session ? timelineKey(session, index) : ""),
  render: (key) => (session ? renderEntryView(session, key, renderCtx) : null),
});
const completion = new CommandCompletion(ui.input, ui.completions, () => session?.commands ?? []);
const attachments = new AttachmentsView(ui.input, $("mentions"), $("attachments"), $("attach"), (m) => vscode.postMessage(m));

// -- rendering ----------------------------------------------------------------------------------

const redraw = new Redraw(draw, () => session !== null && isBusy(session.status));
const invalidate = (keys: Iterable<string>): void => redraw.invalidate(keys);
const scroll = new ScrollFollow();

function draw(keys: Set<string>): void {
  const stick = scroll.following;
  const entries = [...keys].filter((k) => k.startsWith("m:") || k.startsWith("t:"));
  if (keys.has("all")) {
    timeline.rebuild();
    for (const section of ["status", "plan", "modes", "config", "usage", "title", "permissions", "context", "follow", "agents"]) {
      keys.add(section);
    }
  } else if (entries.length > 0 || keys.has("timeline")) {
    timeline.update(entries, stick);
  }
  if (keys.has("status") || keys.has("permissions")) {
    renderStatus();
  }
  if (keys.has("plan")) {
    ui.plan.innerHTML = renderPlan(session?.plan ?? null);
  }
  if (keys.has("usage")) {
    ui.usage.innerHTML = renderUsage(session?.usage ?? null);
  }
  if (keys.has("modes")) {
    ui.mode.innerHTML = renderModeOptions(session?.modes ?? null);
    ui.mode.hidden = ui.mode.options.length === 0;
  }
  if (keys.has("config")) {
    ui.config.innerHTML = renderConfigOptions(session?.configOptions ?? []);
  }
  if (keys.has("title")) {
    ui.title.textContent = session ? (session.title ?? "") : "";
    ui.title.title = ui.title.textContent;
    ui.title.hidden = !session?.title;
  }
  if (keys.has("permissions")) {
    ui.permissions.innerHTML = [...permissions.values()]
      .map((p) => renderPermission(p, session?.cwd ?? "", session?.sessionId ?? null))
      .join("");
  }
  if (keys.has("context")) {
    renderContext();
  }
  if (keys.has("follow")) {
    ui.follow.setAttribute("aria-pressed", String(follow));
    ui.follow.classList.toggle("on", follow);
  }
  if (keys.has("agents")) {
    renderAgents();
  }
  // The turn's review and tool counts go over the whole turn: not while it streams.
  const busy = session !== null && isBusy(session.status);
  if (keys.has("status") || keys.has("all") || (!busy && entries.some((k) => k.startsWith("t:")))) {
    ui.turnReview.innerHTML = session && !busy ? renderTurnReview(turnChanges(session), session.cwd) : "";
    describeTimeline();
  }
  ui.empty.hidden = session !== null && session.timeline.length > 0;
  if (stick) {
    window.scrollTo(0, document.body.scrollHeight);
  }
}


/** What the model holds, on #timeline (its DOM shows only the end of a long one). */
function describeTimeline(): void {
  const calls = session ? Object.values(session.toolCalls) : [];
  ui.timeline.dataset.entries = String(session?.timeline.length ?? 0);
  ui.timeline.dataset.tools = String(calls.length);
  ui.timeline.dataset.toolsCompleted = String(calls.filter((c) => c.status === "completed").length);
}

function renderStatus(): void {
  ui.statusline.innerHTML = renderStatusLine(session);
  const busy = session !== null && isBusy(session.status);
  ui.cancel.hidden = !busy;
  // while a turn runs, a prompt waits its turn (acp/prompt {queue: true})
  ui.send.textContent = busy ? "Queue" : "Send";
  ui.send.title = busy ? "Queue: sent when the agent is done (Enter)" : "Send (Enter)";
  ui.error.hidden = true;
}

function renderAgents(): void {
  ui.agent.innerHTML = renderAgentOptions(agents, ui.agent.value || session?.agent || defaultAgent || "");
}

function renderContext(): void {
  ui.context.innerHTML = renderContextLine(context, includeContext);
  ui.context.hidden = ui.context.innerHTML === "";
}

function renderSessionList(): void {
  ui.sessions.innerHTML = renderSessionRows(sessionList);
}

// -- actions ----------------------------------------------------------------------------------

function post(message: WebviewToHost): void {
  vscode.postMessage(message);
}

function sendPrompt(): void {
  const text = ui.input.value.trim();
  if (text === "") {
    return;
  }
  post({ type: "prompt", text, includeContext });
  ui.input.value = "";
  completion.update();
}

ui.input.addEventListener("keydown", (event) => {
  if (completion.onKey(event) || attachments.onKey(event)) {
    return;
  }
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    sendPrompt();
  } else if (event.key === "Escape" && session !== null && isBusy(session.status)) {
    post({ type: "cancel" });
  }
});

ui.send.addEventListener("click", sendPrompt);
ui.cancel.addEventListener("click", () => post({ type: "cancel" }));
$("new").addEventListener("click", () => post({ type: "newSession", agent: ui.agent.value || undefined }));
$("history").addEventListener("click", () => {
  ui.sessions.hidden = !ui.sessions.hidden;
  if (!ui.sessions.hidden) {
    ui.sessions.innerHTML = `<div class="muted">Loading…</div>`;
    post({ type: "listSessions" });
  }
});
ui.follow.addEventListener("click", () => post({ type: "setFollow", enabled: !follow }));
ui.agent.addEventListener("change", () => post({ type: "selectAgent", agent: ui.agent.value }));
ui.mode.addEventListener("change", () => post({ type: "setMode", modeId: ui.mode.value }));
ui.config.addEventListener("change", (event) => {
  const target = event.target as HTMLInputElement | HTMLSelectElement;
  const configId = target.dataset.config;
  if (configId) {
    const value = target instanceof HTMLInputElement && target.type === "checkbox" ? target.checked : target.value;
    post({ type: "setConfigOption", configId, value });
  }
});
ui.context.addEventListener("change", (event) => {
  const target = event.target as HTMLInputElement;
  if (target.id === "include-context") {
    includeContext = target.checked;
    post({ type: "includeContext", enabled: includeContext });
  }
});

document.addEventListener("click", (event) =>
  onChatClick(event, {
    post,
    permissions: ui.permissions,
    sessions: ui.sessions,
    complete: (command) => completion.complete(command),
  }),
);
// The palette's commands act on the chat the user last used: tell the host when it is this one.
window.addEventListener("focus", () => post({ type: "focused" }));
document.addEventListener("pointerdown", () => post({ type: "focused" }), { capture: true });

// -- messages from the host -----------------------------------------------------------------

function setSession(next: ChatSession | null): void {
  session = next;
  scroll.following = true;
  timeline.reset();
  completion.update();
  invalidate(["all"]);
}

window.addEventListener("message", (event: MessageEvent<HostToWebview>) => receive(event.data));

function receive(message: HostToWebview): void {
  switch (message.type) {
    case "batch":
      for (const one of message.messages) {
        receive(one);
      }
      break;
    case "init":
      agents = message.agents;
      defaultAgent = message.defaultAgent;
      sessionList = message.sessions;
      context = message.context;
      includeContext = message.includeContext;
      follow = message.follow;
      permissions.clear();
      for (const p of message.permissions) {
        permissions.set(p.requestId, p);
      }
      setSession(message.session);
      break;
    case "session":
      follow = message.follow;
      setSession(message.session);
      break;
    case "update":
      if (session && session.sessionId === message.params.sessionId) {
        const changed = applySessionUpdate(session, message.params);
        if (changed) {
          if (changed.has("commands")) {
            completion.update();
          }
          invalidate(changed);
        }
      }
      break;
    case "status":
      if (session && session.sessionId === message.params.sessionId) {
        invalidate(applyStatus(session, message.params));
      }
      break;
    case "terminal":
      if (session && session.sessionId === message.params.sessionId) {
        applyTerminalOutput(session, message.params);
        invalidate(toolCallsShowingTerminal(session, message.params.terminalId).map((id) => `t:${id}`));
      }
      break;
    case "agents":
      agents = message.agents;
      defaultAgent = message.defaultAgent;
      invalidate(["agents"]);
      break;
    case "sessions":
      sessionList = message.sessions;
      renderSessionList();
      break;
    case "permission":
      permissions.set(message.permission.requestId, message.permission);
      invalidate(["permissions", `t:${message.permission.toolCall.toolCallId}`]);
      break;
    case "permissionDone": {
      const done = permissions.get(message.requestId);
      permissions.delete(message.requestId);
      invalidate(done ? ["permissions", `t:${done.toolCall.toolCallId}`] : ["permissions"]);
      break;
    }
    case "context":
      context = message.context;
      invalidate(["context"]);
      break;
    case "follow":
      follow = message.enabled;
      invalidate(["follow"]);
      break;
    case "error":
      ui.error.hidden = false;
      ui.error.textContent = message.message;
      break;
    case "attachments":
      attachments.showChips(message.items);
      break;
    case "mentions":
      attachments.showMentions(message.query, message.items);
      break;
    case "persist":
      vscode.setState(message.state);
      break;
    case "queue":
      ui.queue.innerHTML = renderQueue(message.items);
      ui.queue.hidden = message.items.length === 0;
      break;
    case "focusInput":
      if (message.text !== undefined) {
        ui.input.value = message.text;
        completion.update();
      }
      ui.input.focus();
      break;
  }
}

post({ type: "ready" });
