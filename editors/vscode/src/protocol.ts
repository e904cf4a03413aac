// The acp/* LSP extension (DESIGN §2), mirrored from `acp_lsp/protocol.py`.
// A test (tests/vscode/test_protocol_mirror.py) fails when the method lists drift apart.

import { NotificationType, RequestType } from "vscode-languageclient/node";
import type {
  SessionSnapshot,
  ListAgentsParams,
  ListAgentsResult,
  NewSessionParams,
  ListSessionsParams,
  ListSessionsResult,
  LoadSessionParams,
  SessionIdParams,
  PromptParams,
  PromptResult,
  SetModeParams,
  SetConfigOptionParams,
  SetConfigOptionResult,
  DeleteSessionParams,
  SetFollowParams,
  SetFollowResult,
  ReviewEditParams,
  ReviewEditResult,
  AuthenticateParams,
  AuthenticateResult,
  AgentParams,
  Empty,
  SessionUpdateParams,
  SessionStatusParams,
  TerminalOutputParams,
  RequestPermissionParams,
  RequestPermissionResult,
  SaveDocumentParams,
  SaveDocumentResult,
  ElicitationParams,
  ElicitationResult,
  EditorToolParams,
  EditorToolResult,
  ElicitationCompleteParams,
  DocumentsSyncedParams,
  RenameSessionParams,
  ExportSessionParams,
  ExportSessionResult,
  InstallAgentResult,
  UpdateAgentResult,
  RestoreCheckpointParams,
  RestoreCheckpointResult,
  RewindSessionParams,
  RewindSessionResult,
} from "./model/types";

export type * from "./model/types";


// -- methods: editor -> server requests ------------------------------------------------------

export const listAgents = new RequestType<ListAgentsParams, ListAgentsResult, void>("acp/listAgents");
export const newSession = new RequestType<NewSessionParams, SessionSnapshot, void>("acp/newSession");
export const listSessions = new RequestType<ListSessionsParams, ListSessionsResult, void>(
  "acp/listSessions",
);
export const loadSession = new RequestType<LoadSessionParams, SessionSnapshot, void>("acp/loadSession");
export const getSession = new RequestType<SessionIdParams, SessionSnapshot, void>("acp/getSession");
export const prompt = new RequestType<PromptParams, PromptResult, void>("acp/prompt");
export const cancel = new RequestType<SessionIdParams, Empty, void>("acp/cancel");
export const setMode = new RequestType<SetModeParams, Empty, void>("acp/setMode");
export const setConfigOption = new RequestType<SetConfigOptionParams, SetConfigOptionResult, void>(
  "acp/setConfigOption",
);
export const closeSession = new RequestType<SessionIdParams, Empty, void>("acp/closeSession");
export const deleteSession = new RequestType<DeleteSessionParams, Empty, void>(
  "acp/deleteSession",
);
export const setFollow = new RequestType<SetFollowParams, SetFollowResult, void>("acp/setFollow");
export const reviewEdit = new RequestType<ReviewEditParams, ReviewEditResult, void>("acp/reviewEdit");
export const authenticate = new RequestType<AuthenticateParams, AuthenticateResult, void>(
  "acp/authenticate",
);
export const restartAgent = new RequestType<AgentParams, Empty, void>("acp/restartAgent");
export const logout = new RequestType<AgentParams, Empty, void>("acp/logout");
export const forkSession = new RequestType<SessionIdParams, SessionSnapshot, void>("acp/forkSession");
export const renameSession = new RequestType<RenameSessionParams, Empty, void>("acp/renameSession");
export const exportSession = new RequestType<ExportSessionParams, ExportSessionResult, void>(
  "acp/exportSession",
);
export const installAgent = new RequestType<AgentParams, InstallAgentResult, void>("acp/installAgent");
export const updateAgent = new RequestType<AgentParams, UpdateAgentResult, void>("acp/updateAgent");
export const restoreCheckpoint = new RequestType<RestoreCheckpointParams, RestoreCheckpointResult, void>(
  "acp/restoreCheckpoint",
);
export const rewindSession = new RequestType<RewindSessionParams, RewindSessionResult, void>(
  "acp/rewindSession",
);

// -- methods: server -> editor notifications -------------------------------------------------

export const sessionUpdate = new NotificationType<SessionUpdateParams>("acp/sessionUpdate");
export const sessionStatus = new NotificationType<SessionStatusParams>("acp/sessionStatus");
export const terminalOutput = new NotificationType<TerminalOutputParams>("acp/terminalOutput");
export const elicitationComplete = new NotificationType<ElicitationCompleteParams>(
  "acp/elicitationComplete",
);
export const documentsSynced = new NotificationType<DocumentsSyncedParams>("acp/documentsSynced");

// -- methods: server -> editor requests ------------------------------------------------------

export const requestPermission = new RequestType<RequestPermissionParams, RequestPermissionResult, void>(
  "acp/requestPermission",
);
export const saveDocument = new RequestType<SaveDocumentParams, SaveDocumentResult, void>(
  "acp/saveDocument",
);
export const elicitation = new RequestType<ElicitationParams, ElicitationResult, void>(
  "acp/elicitation",
);
// Answered by editorTools.ts for the tools in EDITOR_TOOLS.
export const editorTool = new RequestType<EditorToolParams, EditorToolResult, void>(
  "acp/editorTool",
);

/** The method lists, in the same grouping as `acp_lsp/protocol.py`. */
export const EDITOR_REQUESTS = [
  listAgents,
  newSession,
  listSessions,
  loadSession,
  getSession,
  prompt,
  cancel,
  setMode,
  setConfigOption,
  closeSession,
  deleteSession,
  setFollow,
  reviewEdit,
  authenticate,
  restartAgent,
  logout,
  forkSession,
  renameSession,
  exportSession,
  installAgent,
  updateAgent,
  restoreCheckpoint,
  rewindSession,
].map((t) => t.method);
export const SERVER_NOTIFICATIONS = [
  sessionUpdate,
  sessionStatus,
  terminalOutput,
  elicitationComplete,
  documentsSynced,
].map((t) => t.method);
export const SERVER_REQUESTS = [requestPermission, saveDocument, elicitation, editorTool].map(
  (t) => t.method,
);

// -- error codes -----------------------------------------------------------------------------

export const ErrorCodes = {
  invalidParams: -32602,
  authRequired: -32000,
  unknownSession: -32001,
  unknownAgent: -32003,
  turnRunning: -32004,
  agentUnavailable: -32005,
  notSupported: -32006,
  agentError: -32007,
  requestCancelled: -32800,
} as const;

/** The editor tools this front end answers (all of acp_lsp/editor_tools/tools.py but openFile,
 * which the bridge always answers itself). */
export const EDITOR_TOOLS = [
  "diagnostics",
  "definition",
  "references",
  "hover",
  "documentSymbols",
  "workspaceSymbols",
  "openEditors",
  "selection",
  "openDiff",
];

/** What this front end declares in `capabilities.experimental.acp` of `initialize`. */
export const CLIENT_CAPABILITIES = {
  requestPermission: true,
  saveDocument: true,
  elicitation: true,
  editorTools: EDITOR_TOOLS,
} as const;
