// Shapes of the acp/* extension (DESIGN §2), shared by the extension host and the webview.
// Pure types: nothing here may import `vscode` or the language client.
// Agent payloads (updates, tool calls, content blocks) stay loosely typed: unknown kinds,
// statuses and fields are kept and shown generically, never dropped.

export type Json = unknown;
export type JsonObject = Record<string, unknown>;

// -- shapes --------------------------------------------------------------------------------

export type SessionStatus =
  | "idle"
  | "running"
  | "awaiting_permission"
  | "cancelling"
  | "failed"
  | "closed"
  | "stored";

export interface ContentBlock extends JsonObject {
  type: string;
  text?: string;
}

export interface ToolCallLocation extends JsonObject {
  path: string;
  line?: number | null;
}

export interface ToolCallState extends JsonObject {
  toolCallId: string;
  title: string;
  kind: string;
  status: string;
  content: JsonObject[];
  locations: ToolCallLocation[];
  rawInput?: Json;
  rawOutput?: Json;
  review?: Json;
  _meta?: JsonObject | null;
}

export interface Message {
  messageId?: string | null;
  role: "user" | "agent" | "thought" | string;
  content: ContentBlock[];
  /** A user message whose checkpoint acp/restoreCheckpoint can go back to. */
  checkpoint?: true;
}

export type TimelineEntry = { message: number } | { toolCall: string };

export interface PlanEntry extends JsonObject {
  content: string;
  priority?: string;
  status?: string;
}

export interface AvailableCommand extends JsonObject {
  name: string;
  description?: string;
  input?: { hint?: string } | null;
}

export interface SessionMode extends JsonObject {
  id: string;
  name: string;
  description?: string | null;
}

export interface ModesState extends JsonObject {
  currentModeId: string;
  availableModes: SessionMode[];
}

export interface ConfigOptionValue extends JsonObject {
  value: string;
  name: string;
  description?: string | null;
}

export interface ConfigOptionGroup extends JsonObject {
  group: string;
  name: string;
  options: ConfigOptionValue[];
}

export interface ConfigOption extends JsonObject {
  id: string;
  name: string;
  type: string;
  currentValue: string | boolean;
  description?: string | null;
  /** ACP's category: "model", "thought_level", "mode", … (custom ones start with "_"). */
  category?: string | null;
  options?: (ConfigOptionValue | ConfigOptionGroup)[];
}

export interface Usage extends JsonObject {
  used?: number;
  size?: number;
  cost?: { amount: number; currency: string } | null;
}

export interface TerminalState {
  output: string;
  truncated: boolean;
  exitStatus?: { exitCode?: number | null; signal?: string | null } | null;
}

export interface SessionSnapshot {
  sessionId: string;
  agent: string;
  cwd: string;
  status: SessionStatus;
  seq: number;
  messages: Message[];
  toolCalls: ToolCallState[];
  timeline: TimelineEntry[];
  plan?: { entries: PlanEntry[] } | null;
  commands?: AvailableCommand[] | null;
  modes?: ModesState | null;
  configOptions?: ConfigOption[] | null;
  usage?: Usage | null;
  terminals?: Record<string, TerminalState> | null;
  title?: string | null;
  updatedAt?: string | null;
  additionalDirectories?: string[] | null;
  /** How a stored session came back: the agent's own load/resume, or a primed new session. */
  resumedFrom?: "agent" | "transcript";
  createdAt?: string | null;
  /** The session this one was forked from (acp/forkSession). */
  forkedFrom?: string;
  /** What the agent accepts in prompts: gate image / audio / embedded context on it. */
  promptCapabilities?: PromptCapabilities;
  /** Queued prompts waiting their turn (acp/prompt {queue: true}). */
  queued?: number;
  /** The session and user message this one was rewound from (acp/rewindSession). */
  rewoundFrom?: { sessionId: string; messageIndex: number };
}

/** ACP promptCapabilities: content types an agent accepts besides text and resource links. */
export interface PromptCapabilities {
  image?: boolean;
  audio?: boolean;
  embeddedContext?: boolean;
}

/** One entry of `acp/sessionUpdate.updates`: ACP's shape, tool calls as merged state. */
export interface SessionUpdate extends JsonObject {
  sessionUpdate: string;
}

export interface AgentSummary {
  name: string;
  title: string;
  protocol: "acp" | "aap" | string;
  default: boolean;
  running: boolean;
  authMethods?: AuthMethod[];
  /** Why the agent cannot be used (a bad setting), when that is known. */
  error?: string | null;
  /** The agent's own version (ACP agentInfo), once it ran. */
  version?: string;
  promptCapabilities?: PromptCapabilities;
  /** The agent's ACP agentCapabilities, raw. */
  agentCapabilities?: JsonObject;
  /** The agent process is starting (a first npx run may download it). */
  starting?: boolean;
  /** preset / config (settings) / registry (an ACP Registry agent not configured yet). */
  source?: "preset" | "config" | "registry";
  description?: string;
  icon?: string;
  /** Registry agents: installed in the data dir already. */
  installed?: boolean;
  registryId?: string;
}

export interface InstallAgentResult {
  agent: string;
  version: string;
  installed: boolean;
}
export interface UpdateAgentResult {
  agent: string;
  previousVersion?: string | null;
  version: string;
  updated: boolean;
}

/** ACP AuthMethod: `agent` (acp/authenticate), `terminal` (a login command), `env_var`. */
export interface AuthMethod extends JsonObject {
  id: string;
  name: string;
  description?: string | null;
  type?: "agent" | "terminal" | "env_var" | string;
  vars?: { name: string; label?: string | null; optional?: boolean; secret?: boolean }[];
}

export interface SessionInfo {
  sessionId: string;
  agent: string;
  cwd?: string | null;
  title?: string | null;
  updatedAt?: string | null;
  live: boolean;
  /** In the history store (sessions of earlier runs are `live: false, stored: true`). */
  stored?: boolean;
  createdAt?: string | null;
  messageCount?: number;
  status?: string;
}

export interface PermissionOption extends JsonObject {
  optionId: string;
  name: string;
  kind: "allow_once" | "allow_always" | "reject_once" | "reject_always" | string;
}

export type PermissionOutcome = { outcome: "selected"; optionId: string } | { outcome: "cancelled" };

// -- params and results --------------------------------------------------------------------

export interface ListAgentsParams {
  /** Also list ACP Registry agents (as `registry:<id>` where not configured). */
  includeRegistry?: boolean;
}
export interface ListAgentsResult {
  agents: AgentSummary[];
}
export interface NewSessionParams {
  agent?: string;
  cwd?: string;
  additionalDirectories?: string[];
}
export interface ListSessionsParams {
  agent?: string;
  cwd?: string;
  /** Case-insensitive search over titles and message text. */
  query?: string;
  cursor?: string;
  limit?: number;
}
export interface ListSessionsResult {
  sessions: SessionInfo[];
  nextCursor?: string;
}
export interface RestoreCheckpointParams {
  sessionId: string;
  /** The index in `messages` of a user message with `checkpoint: true`. */
  messageIndex: number;
  /** Only say what a restore would do (the files' statuses), changing nothing. */
  dryRun?: boolean;
}
export interface RewindSessionParams {
  sessionId: string;
  messageIndex: number;
  restoreFiles?: boolean;
}
export interface RestoredFile {
  path: string;
  status: "restored" | "unchanged" | "failed";
  change?: "created" | "modified" | "deleted";
  message?: string;
}
export interface RestoreCheckpointResult {
  files: RestoredFile[];
}
export interface RewindSessionResult extends SessionSnapshot {
  restoredFiles?: RestoredFile[];
}
export interface RenameSessionParams {
  sessionId: string;
  title: string;
}
export interface ExportSessionParams {
  sessionId: string;
  format: "markdown";
}
export interface ExportSessionResult {
  text: string;
}
export interface LoadSessionParams {
  agent?: string;
  sessionId: string;
  cwd?: string;
}
export interface SessionIdParams {
  sessionId: string;
}
export interface PromptParams {
  sessionId: string;
  prompt: string | ContentBlock[];
  workDoneToken?: string | number;
  /** Wait for the running turn instead of failing (the server's queue). */
  queue?: boolean;
}
export interface PromptResult {
  stopReason: string;
}
export interface SetModeParams {
  sessionId: string;
  modeId: string;
}
export interface SetConfigOptionParams {
  sessionId: string;
  configId: string;
  value: string | boolean;
}
export interface SetConfigOptionResult {
  configOptions: ConfigOption[];
}
export interface DeleteSessionParams {
  sessionId: string;
  agent?: string;
}
export interface SetFollowParams {
  sessionId: string;
  enabled: boolean;
}
export interface SetFollowResult {
  enabled: boolean;
}
export interface ReviewEditParams {
  sessionId: string;
  action: "accept" | "reject";
  toolCallId?: string;
  path?: string;
  /** One hunk of that file (index in review.files[].hunks). */
  hunk?: number;
}
export interface ReviewEditResult {
  applied: boolean;
  files: string[];
}
export interface AuthenticateParams {
  agent: string;
  methodId: string;
}
export interface AuthenticateResult {
  terminal?: { command: string; args?: string[]; env?: Record<string, string> };
  /** env_var methods: the variables the user sets in the agent's `env` setting. */
  envVars?: { name: string; label?: string | null; optional?: boolean; secret?: boolean }[];
  message?: string;
}

/** acp/elicitation: an agent's structured question (ACP elicitation/create params). */
export interface ElicitationParams {
  sessionId?: string;
  agent: string;
  toolCallId?: string;
  request: ElicitationRequest;
}
export interface ElicitationRequest extends JsonObject {
  mode: "form" | "url" | string;
  message: string;
  requestedSchema?: {
    properties?: Record<string, ElicitationField>;
    required?: string[] | null;
    title?: string | null;
  };
  elicitationId?: string;
  url?: string;
}
export interface ElicitationField extends JsonObject {
  type: "string" | "number" | "integer" | "boolean" | "array" | string;
  title?: string | null;
  description?: string | null;
  enum?: string[];
  oneOf?: { const: string; title?: string }[];
  default?: unknown;
}
export interface ElicitationResult {
  action: "accept" | "decline" | "cancel";
  content?: JsonObject | null;
}
export interface ElicitationCompleteParams {
  agent: string;
  elicitationId: string;
  sessionId?: string;
}
export interface AgentParams {
  agent: string;
}
export type Empty = Record<string, never>;

export interface SessionUpdateParams {
  sessionId: string;
  seq: number;
  updates: SessionUpdate[];
}
export interface SessionStatusParams {
  sessionId: string;
  status: SessionStatus;
  stopReason?: string;
  error?: JsonObject;
  /** Prompts waiting their turn, once any was queued. */
  queued?: number;
}
export interface TerminalOutputParams {
  sessionId: string;
  terminalId: string;
  data: string;
  truncated?: boolean;
  reset?: boolean;
  exitStatus?: TerminalState["exitStatus"];
}
export interface RequestPermissionParams {
  sessionId: string;
  toolCall: ToolCallState;
  options: PermissionOption[];
}
export interface RequestPermissionResult {
  outcome: PermissionOutcome;
  reason?: string;
}
/** acp/documentsSynced: open documents the server brought to a file's new disk text. */
export interface DocumentsSyncedParams {
  sessionId: string;
  documents: SyncedDocument[];
}
export interface SyncedDocument {
  uri: string;
  /** The document's version once the server's edit (if any) landed. */
  version: number;
  /** true: the document holds exactly the disk's text; false: plus the user's unsaved edits. */
  matchesDisk?: boolean;
  /** The user's unsaved edits conflict with the change: the document was left as it was. */
  conflict?: boolean;
}
export interface SaveDocumentParams {
  uris: string[];
}
export interface SaveDocumentResult {
  saved: string[];
}
/** acp/editorTool: an agent's editor tool call, in LSP terms (docs/protocol.md). */
export interface EditorToolParams {
  sessionId: string;
  tool: string;
  arguments: Record<string, unknown>;
}
/** The one key that answers the tool. */
export interface EditorToolResult {
  diagnostics?: unknown[];
  /** diagnostics: how many there were before the cut to the bridge's limit */
  total?: number;
  locations?: unknown[];
  contents?: string;
  symbols?: unknown[];
  editors?: unknown[];
  selection?: unknown;
  answer?: "accept" | "reject";
  text?: string;
}
