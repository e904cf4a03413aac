// The editor's copy of one session, and the reducer that keeps it in step with the server.
// Pure and deterministic: the extension host and the webview run the same code on the same
// messages, so both hold the same state. Every apply returns the keys of what changed, so a
// view re-renders only those parts.

import type {
  AvailableCommand,
  ConfigOption,
  ContentBlock,
  JsonObject,
  Message,
  ModesState,
  PlanEntry,
  SessionSnapshot,
  SessionStatus,
  SessionStatusParams,
  SessionUpdate,
  SessionUpdateParams,
  TerminalOutputParams,
  TerminalState,
  TimelineEntry,
  ToolCallState,
  Usage,
} from "./types";

/** Retained terminal output per terminal (the server caps it too; this bounds a long session). */
export const TERMINAL_CHAR_LIMIT = 256 * 1024;

export interface ChatSession {
  sessionId: string;
  agent: string;
  cwd: string;
  status: SessionStatus | string;
  seq: number;
  messages: Message[];
  toolCalls: Record<string, ToolCallState>;
  timeline: TimelineEntry[];
  plan: PlanEntry[] | null;
  commands: AvailableCommand[];
  modes: ModesState | null;
  configOptions: ConfigOption[];
  usage: Usage | null;
  terminals: Record<string, TerminalState>;
  title: string | null;
  stopReason: string | null;
  error: JsonObject | null;
  /** Index into `timeline` of the last user message: where the last turn began. */
  lastTurnStart: number;
  /** `${role}\u0000${messageId}` -> index into `messages`. */
  messageIndex: Record<string, number>;
  /** How a stored session came back (acp/loadSession): shown so the user knows. */
  resumedFrom?: "agent" | "transcript";
  /** What the agent accepts in prompts (images, audio, embedded resources). */
  promptCapabilities?: { image?: boolean; audio?: boolean; embeddedContext?: boolean };
}

/** What an apply changed: `m:<index>`, `t:<toolCallId>`, `term:<id>`, or a section name. */
export type ChangeKey = string;

const CHUNK_ROLES: Record<string, string> = {
  user_message_chunk: "user",
  agent_message_chunk: "agent",
  agent_thought_chunk: "thought",
};
const MESSAGE_ROLES: Record<string, string> = {
  user_message: "user",
  agent_message: "agent",
  agent_thought: "thought",
};

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function messageKey(role: string, messageId: string): string {
  return `${role}\u0000${messageId}`;
}

function planEntries(plan: unknown): PlanEntry[] | null {
  if (Array.isArray(plan)) {
    return plan as PlanEntry[];
  }
  if (isObject(plan) && Array.isArray(plan.entries)) {
    return plan.entries as PlanEntry[];
  }
  return null;
}

export function emptySession(sessionId: string, agent = "", cwd = ""): ChatSession {
  return {
    sessionId,
    agent,
    cwd,
    status: "idle",
    seq: 0,
    messages: [],
    toolCalls: {},
    timeline: [],
    plan: null,
    commands: [],
    modes: null,
    configOptions: [],
    usage: null,
    terminals: {},
    title: null,
    stopReason: null,
    error: null,
    lastTurnStart: -1,
    messageIndex: {},
  };
}

export function fromSnapshot(snapshot: SessionSnapshot): ChatSession {
  const session = emptySession(snapshot.sessionId, snapshot.agent, snapshot.cwd);
  session.status = snapshot.status;
  session.seq = snapshot.seq;
  session.messages = (snapshot.messages ?? []).map((m) => ({ ...m, content: [...(m.content ?? [])] }));
  session.messages.forEach((m, index) => {
    if (typeof m.messageId === "string") {
      session.messageIndex[messageKey(m.role, m.messageId)] = index;
    }
  });
  for (const call of snapshot.toolCalls ?? []) {
    session.toolCalls[call.toolCallId] = normaliseToolCall(call);
  }
  session.timeline = [...(snapshot.timeline ?? [])];
  session.timeline.forEach((entry, index) => {
    if ("message" in entry && session.messages[entry.message]?.role === "user") {
      session.lastTurnStart = index;
    }
  });
  session.plan = planEntries(snapshot.plan);
  session.commands = snapshot.commands ?? [];
  session.modes = snapshot.modes ?? null;
  session.configOptions = snapshot.configOptions ?? [];
  session.usage = snapshot.usage ?? null;
  session.terminals = { ...(snapshot.terminals ?? {}) };
  session.title = snapshot.title ?? null;
  session.resumedFrom = snapshot.resumedFrom;
  session.promptCapabilities = snapshot.promptCapabilities;
  return session;
}

function normaliseToolCall(call: ToolCallState): ToolCallState {
  return {
    ...call,
    title: typeof call.title === "string" ? call.title : "",
    kind: call.kind ?? "other",
    status: call.status ?? "pending",
    content: Array.isArray(call.content) ? [...call.content] : [],
    locations: Array.isArray(call.locations) ? call.locations : [],
  };
}

/**
 * Apply one `acp/sessionUpdate`. Returns null when the notification is not newer than what
 * the session already holds (a snapshot fetched later includes it), else the changed keys.
 */
export function applySessionUpdate(
  session: ChatSession,
  params: SessionUpdateParams,
): Set<ChangeKey> | null {
  if (params.seq <= session.seq) {
    return null;
  }
  session.seq = params.seq;
  const changed = new Set<ChangeKey>();
  for (const update of params.updates ?? []) {
    applyOne(session, update, changed);
  }
  return changed;
}

function applyOne(session: ChatSession, update: SessionUpdate, changed: Set<ChangeKey>): void {
  const kind = update.sessionUpdate;
  if (kind in CHUNK_ROLES) {
    applyChunk(session, CHUNK_ROLES[kind] as string, update, changed);
  } else if (kind in MESSAGE_ROLES) {
    applyWholeMessage(session, MESSAGE_ROLES[kind] as string, update, changed);
  } else if (kind === "tool_call" || kind === "tool_call_update") {
    applyToolCall(session, update, changed);
  } else if (kind === "plan") {
    session.plan = planEntries(update.entries) ?? [];
    changed.add("plan");
  } else if (kind === "available_commands_update") {
    session.commands = Array.isArray(update.availableCommands)
      ? (update.availableCommands as AvailableCommand[])
      : [];
    changed.add("commands");
  } else if (kind === "current_mode_update") {
    const modeId = update.currentModeId ?? update.modeId;
    if (typeof modeId === "string") {
      session.modes = { currentModeId: modeId, availableModes: session.modes?.availableModes ?? [] };
      changed.add("modes");
    }
  } else if (kind === "config_option_update") {
    if (Array.isArray(update.configOptions)) {
      session.configOptions = update.configOptions as ConfigOption[];
      changed.add("config");
    }
  } else if (kind === "session_info_update") {
    if ("title" in update) {
      session.title = typeof update.title === "string" ? update.title : null;
      changed.add("title");
    }
  } else if (kind === "usage_update") {
    const { sessionUpdate: _kind, ...usage } = update;
    session.usage = usage as Usage;
    changed.add("usage");
  }
  // Anything else is an agent's own variant: kept by the server, nothing to show here.
}

function newMessage(session: ChatSession, role: string, messageId: string | null): number {
  const index = session.messages.length;
  session.messages.push({ role, messageId, content: [] });
  if (messageId !== null) {
    session.messageIndex[messageKey(role, messageId)] = index;
  }
  session.timeline.push({ message: index });
  if (role === "user") {
    session.lastTurnStart = session.timeline.length - 1;
  }
  return index;
}

function lastEntryMessage(session: ChatSession): number | null {
  const last = session.timeline[session.timeline.length - 1];
  return last !== undefined && "message" in last ? last.message : null;
}

function applyChunk(
  session: ChatSession,
  role: string,
  update: SessionUpdate,
  changed: Set<ChangeKey>,
): void {
  const block = update.content;
  if (!isObject(block)) {
    return;
  }
  const messageId = typeof update.messageId === "string" ? update.messageId : null;
  let index: number | undefined;
  if (messageId !== null) {
    index = session.messageIndex[messageKey(role, messageId)];
  } else {
    const last = lastEntryMessage(session);
    if (last !== null && session.messages[last]?.role === role) {
      index = last;
    }
  }
  if (index === undefined) {
    index = newMessage(session, role, messageId);
    changed.add("timeline");
  }
  appendBlock(session.messages[index] as Message, block as ContentBlock);
  changed.add(`m:${index}`);
}

/** Append a content block, joining plain text onto a trailing plain text block. */
export function appendBlock(message: Message, block: ContentBlock): void {
  const last = message.content[message.content.length - 1];
  if (
    last !== undefined &&
    last.type === "text" &&
    block.type === "text" &&
    typeof last.text === "string" &&
    typeof block.text === "string" &&
    Object.keys(last).length === 2 &&
    Object.keys(block).length === 2
  ) {
    message.content[message.content.length - 1] = { type: "text", text: last.text + block.text };
    return;
  }
  message.content.push(block);
}

function applyWholeMessage(
  session: ChatSession,
  role: string,
  update: SessionUpdate,
  changed: Set<ChangeKey>,
): void {
  if (typeof update.messageId !== "string") {
    return;
  }
  let index = session.messageIndex[messageKey(role, update.messageId)];
  if (index === undefined) {
    index = newMessage(session, role, update.messageId);
    changed.add("timeline");
  }
  if (Array.isArray(update.content)) {
    (session.messages[index] as Message).content = [...(update.content as ContentBlock[])];
  } else if (update.content === null) {
    (session.messages[index] as Message).content = [];
  }
  changed.add(`m:${index}`);
}

function applyToolCall(session: ChatSession, update: SessionUpdate, changed: Set<ChangeKey>): void {
  // The server sends merged state; a raw ACP update (fields at the top level) is merged too.
  const state = isObject(update.toolCall) ? update.toolCall : update;
  const id = state.toolCallId;
  if (typeof id !== "string") {
    return;
  }
  const previous = session.toolCalls[id];
  const { sessionUpdate: _kind, ...fields } = state as JsonObject;
  const merged = { ...(update.toolCall === undefined ? previous : {}), ...fields } as ToolCallState;
  let content: JsonObject[];
  if (Array.isArray(update.contentAppend)) {
    content = [...(previous?.content ?? []), ...(update.contentAppend as JsonObject[])];
  } else if (Array.isArray(fields.content)) {
    content = fields.content as JsonObject[];
  } else {
    content = previous?.content ?? [];
  }
  merged.content = content;
  session.toolCalls[id] = normaliseToolCall(merged);
  if (previous === undefined) {
    session.timeline.push({ toolCall: id });
    changed.add("timeline");
  }
  changed.add(`t:${id}`);
}

export function applyStatus(session: ChatSession, params: SessionStatusParams): Set<ChangeKey> {
  session.status = params.status;
  if (params.status === "running") {
    session.stopReason = null;
    session.error = null;
  }
  if (params.stopReason !== undefined) {
    session.stopReason = params.stopReason;
  }
  if (params.error !== undefined) {
    session.error = params.error;
  }
  return new Set(["status"]);
}

export function applyTerminalOutput(
  session: ChatSession,
  params: TerminalOutputParams,
): Set<ChangeKey> {
  const previous = session.terminals[params.terminalId];
  let output = params.reset || previous === undefined ? params.data : previous.output + params.data;
  let truncated = Boolean(params.truncated) || (!params.reset && Boolean(previous?.truncated));
  if (output.length > TERMINAL_CHAR_LIMIT) {
    output = output.slice(output.length - TERMINAL_CHAR_LIMIT);
    truncated = true;
  }
  const terminal: TerminalState = { output, truncated };
  const exitStatus = params.exitStatus ?? previous?.exitStatus;
  if (exitStatus !== undefined && exitStatus !== null) {
    terminal.exitStatus = exitStatus;
  }
  session.terminals[params.terminalId] = terminal;
  return new Set([`term:${params.terminalId}`]);
}
