// Entry point: wires the server lifecycle, sessions, permissions, the chat view, the status
// bar and the commands together. No logic of its own.

import * as vscode from "vscode";
import { MessageType, type ShowMessageParams } from "vscode-languageclient/node";
import { registerAttachCommands } from "./chat/attachCommands";
import { ChatController } from "./chat/controller";
import { currentChat } from "./chat/current";
import { EditorContextTracker } from "./chat/editorContext";
import { LastUsed } from "./chat/lastUsed";
import { ChatPanels } from "./chat/panel";
import { CHAT_VIEW_ID, ChatViewProvider } from "./chat/view";
import { registerCommands } from "./commands";
import { DiffDocuments } from "./diffs";
import { DocumentSync } from "./diskSync";
import { saveDocuments } from "./documents";
import { askElicitation } from "./elicitation";
import { EditorDiffs } from "./editorDiff";
import { EditorTools } from "./editorTools";
import { PermissionBroker } from "./permissions";
import { vscodePrompts, type Prompts } from "./prompts";
import { AcpServer } from "./server";
import { trackSessionContext } from "./sessionCommands";
import { SessionStore } from "./sessions";
import { StatusBar } from "./statusBar";
import { watchAttention } from "./attention";
import { HunkLens, type HunkTarget } from "./hunkLens";
import { readSettings } from "./vscodeSettings";

/** What `activate` returns: the parts, for the end-to-end tests and other extensions. */
export interface AcpLspApi {
  server: AcpServer;
  store: SessionStore;
  permissions: PermissionBroker;
  chat: ChatController;
  view: ChatViewProvider;
  /** The chats in editor tabs, each pinned to one session. */
  panels: ChatPanels;
  /** The chat (side bar's or a tab's) the user last focused: the palette's commands act on it. */
  lastUsed: LastUsed<ChatController>;
  statusBar: StatusBar;
  /** What the commands ask the user; the end-to-end suite answers through it. */
  prompts: Prompts;
  /** Open documents taking the disk's new state after an agent changed their files. */
  documents: DocumentSync;
  /** Pending hunks of agent changes shown in the editor, with Keep / Reject lenses. */
  hunks: HunkLens;
}

let server: AcpServer | undefined;

/** window/showMessage as vscode-languageclient shows it. */
function showServerMessage(params: ShowMessageParams): void {
  switch (params.type) {
    case MessageType.Error:
      void vscode.window.showErrorMessage(params.message);
      break;
    case MessageType.Warning:
      void vscode.window.showWarningMessage(params.message);
      break;
    default:
      void vscode.window.showInformationMessage(params.message);
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<AcpLspApi> {
  const output = vscode.window.createOutputChannel("ACP Agents", { log: true });
  // The server's handlers, the store and the view refer to each other: the closures below
  // run only after all of them exist.
  const permissions: PermissionBroker = new PermissionBroker(
    (sessionId): boolean => view.visible || panels.showsSession(sessionId),
  );
  const documents = new DocumentSync(
    output,
    (sessionId) => store.get(sessionId)?.agent,
    (tab, column) => panels.reveal(tab, column),
  );
  const editorDiffs = new EditorDiffs();
  const editorTools = new EditorTools(editorDiffs, (): vscode.TextEditor | undefined => editors.visibleEditor());
  server = new AcpServer(output, {
    sessionUpdate: (p) => store.handleUpdate(p),
    sessionStatus: (p) => store.handleStatus(p),
    terminalOutput: (p) => store.handleTerminal(p),
    requestPermission: (p, token) => permissions.request(p, token),
    saveDocument: (p) => saveDocuments(p, output),
    elicitation: (p) => askElicitation(p),
    editorTool: (p, token) => editorTools.handle(p, token),
    elicitationComplete: (p) => output.info(`${p.agent}: elicitation ${p.elicitationId} completed`),
    documentsSynced: (p) => void documents.handle(p),
    showMessage: (p) => {
      if (p.type === MessageType.Warning && documents.takeServerWarning(p.message, (m) => void vscode.window.showWarningMessage(m))) {
        return;
      }
      showServerMessage(p);
    },
  }, context);
  const store: SessionStore = new SessionStore(server, () => readSettings().followAlong);
  const diffs = new DiffDocuments();
  const editors = new EditorContextTracker();
  const chat: ChatController = new ChatController(store, permissions, diffs, output, editors);
  const view: ChatViewProvider = new ChatViewProvider(context.extensionUri, chat);
  const lastUsed = new LastUsed(chat);
  const panels: ChatPanels = new ChatPanels({ extensionUri: context.extensionUri, store, permissions, diffs, output, editors, lastUsed });
  const current = currentChat(lastUsed, view, panels);
  const statusBar = new StatusBar();
  const hunks = new HunkLens(store);
  const decideHunk = (action: "accept" | "reject", target: HunkTarget): Promise<void> =>
    hunks.decide(action, target).catch((error: unknown) => {
      void vscode.window.showErrorMessage(`ACP: ${error instanceof Error ? error.message : String(error)}`);
    });
  const prompts = vscodePrompts();
  /** The status bar shows the session of the chat last used (a tab's, or the active one). */
  const showStatus = (): void => {
    const session = current().controller.session();
    statusBar.update(session, store.others(session?.sessionId ?? null));
  };

  context.subscriptions.push(
    output,
    editorDiffs,
    documents,
    server,
    store,
    permissions,
    diffs,
    editors,
    chat,
    view,
    panels,
    statusBar,
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, view, { webviewOptions: { retainContextWhenHidden: true } }),
    panels.registerSerializer(),
    store.onDidChange(() => {
      showStatus();
      view.describe(store.activeSession);
    }),
    lastUsed.onDidChange(showStatus),
    panels.onDidRepin(showStatus),
    trackSessionContext(store),
    store.onDidProgress((report) => statusBar.onProgress(report)),
    server.onDidStop(() => store.forgetAll()),
    server.onDidStart(() => void chat.refreshAgents().catch(() => undefined)),
    chat.onDidFocus(() => lastUsed.use(chat)),
    hunks,
    vscode.languages.registerCodeLensProvider({ scheme: "file" }, hunks),
    vscode.commands.registerCommand("acpLsp.keepHunk", (target: HunkTarget) => decideHunk("accept", target)),
    vscode.commands.registerCommand("acpLsp.rejectHunk", (target: HunkTarget) => decideHunk("reject", target)),
    vscode.commands.registerCommand("acpLsp.nextChange", () => hunks.jump(1)),
    vscode.commands.registerCommand("acpLsp.previousChange", () => hunks.jump(-1)),
    watchAttention(store, async (sessionId) => {
      await view.reveal();
      await chat.handle({ type: "switchSession", sessionId });
    }),
    ...registerCommands({ server, store: store, current, view, panels, prompts }),
    ...registerAttachCommands(current, output),
  );

  // Start in the background: activation must not wait for the server.
  void server.start().catch(() => undefined);
  return { server, store: store, permissions, chat, view, panels, lastUsed, statusBar, prompts, documents, hunks };
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
