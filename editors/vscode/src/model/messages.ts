// Messages between the extension host and the chat webview. Pure types, shared by both sides.

import type { AttachmentChip } from "./attachments";
import type { MentionItem } from "./mentions";
import type { ChatSession } from "./sessionModel";
import type {
  AgentSummary,
  PermissionOption,
  SessionInfo,
  SessionStatusParams,
  SessionUpdateParams,
  TerminalOutputParams,
  ToolCallState,
} from "./types";

/** A permission prompt waiting for the user (one per acp/requestPermission). */
export interface PendingPermission {
  requestId: string;
  sessionId: string;
  /** The session's name, for a prompt shown while another session is in the chat. */
  sessionLabel?: string;
  toolCall: ToolCallState;
  options: PermissionOption[];
}

/** What the prompt will carry besides the typed text (shown under the input). */
export interface PromptContext {
  /** Workspace-relative (or absolute) path of the active editor's file. */
  file?: string;
  /** `path:start-end` of a non-empty selection. */
  selection?: string;
}

/** What a chat tab keeps across a window reload (the webview's state): its session. */
export interface ChatTabState {
  sessionId: string;
  /** The tab's title, for a session the server no longer knows. */
  title: string;
}

export type HostToWebview =
  | {
      type: "init";
      agents: AgentSummary[];
      defaultAgent: string | null;
      session: ChatSession | null;
      sessions: SessionInfo[];
      permissions: PendingPermission[];
      context: PromptContext;
      includeContext: boolean;
      follow: boolean;
    }
  | { type: "session"; session: ChatSession | null; follow: boolean }
  | { type: "update"; params: SessionUpdateParams }
  | { type: "status"; params: SessionStatusParams }
  | { type: "terminal"; params: TerminalOutputParams }
  | { type: "agents"; agents: AgentSummary[]; defaultAgent: string | null }
  | { type: "sessions"; sessions: SessionInfo[] }
  | { type: "permission"; permission: PendingPermission }
  | { type: "permissionDone"; requestId: string }
  | { type: "context"; context: PromptContext }
  | { type: "follow"; enabled: boolean }
  | { type: "error"; message: string }
  | { type: "focusInput"; text?: string }
  /** The prompts of the chat's session waiting their turn (acp/prompt {queue: true}). */
  | { type: "queue"; items: { id: number; text: string }[] }
  | { type: "attachments"; items: AttachmentChip[] }
  | { type: "mentions"; query: string; items: MentionItem[] }
  /** Keep this across a window reload (a chat tab's session, read back when it is restored). */
  | { type: "persist"; state: ChatTabState }
  /** Several messages sent together (chat/batchedPost.ts), handled in order. */
  | { type: "batch"; messages: HostToWebview[] };

export type WebviewToHost =
  | { type: "ready" }
  | { type: "prompt"; text: string; includeContext: boolean }
  | { type: "cancel" }
  | { type: "newSession"; agent?: string }
  | { type: "listSessions" }
  | { type: "loadSession"; agent: string; sessionId: string; live: boolean }
  | { type: "switchSession"; sessionId: string }
  | { type: "setMode"; modeId: string }
  | { type: "setConfigOption"; configId: string; value: string | boolean }
  | { type: "setFollow"; enabled: boolean }
  | { type: "permission"; requestId: string; optionId: string | null; reason?: string }
  | { type: "review"; action: "accept" | "reject"; toolCallId?: string; path?: string }
  | { type: "openDiff"; toolCallId: string; index: number }
  | { type: "openLocation"; path: string; line?: number | null }
  | { type: "selectAgent"; agent: string }
  | { type: "includeContext"; enabled: boolean }
  /** The user focused or clicked into this chat (the palette's commands act on it). */
  | { type: "focused" }
  /** A user message's "Restore checkpoint" / "Edit and resend" (by its index in `messages`). */
  | { type: "restoreCheckpoint"; messageIndex: number }
  | { type: "editResend"; messageIndex: number }
  /** One of the prompts waiting their turn: back into the input, withdrawn, or sent now. */
  | { type: "queued"; action: "edit" | "remove" | "sendNow"; id: number }
  | AttachmentMessage;

/** The webview's requests about attachments (handled by chat/attachments.ts). */
export type AttachmentMessage =
  | { type: "mentionQuery"; query: string }
  | { type: "attach"; item: MentionItem }
  | { type: "attachMenu" }
  | { type: "pasteImage"; name: string; mimeType: string; data: string }
  | { type: "removeAttachment"; id: string };
