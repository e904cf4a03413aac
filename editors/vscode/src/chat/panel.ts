// Chats in editor tabs (ACP: Open Chat in Editor): each tab is the chat webview pinned to one
// session, with its own ChatController, so several sessions can be seen side by side. The tab's
// title is its session's name; opening a session that already has a tab reveals that tab. A tab
// keeps its session in the webview's state, so it comes back after a window reload.

import * as vscode from "vscode";
import type { DiffDocuments } from "../diffs";
import type { ChatTabState, HostToWebview, WebviewToHost } from "../model/messages";
import { chatTabTitle, isOpen, sessionLabel } from "../model/sessionList";
import { emptySession, type ChatSession } from "../model/sessionModel";
import type { PermissionBroker } from "../permissions";
import type { SessionStore } from "../sessions";
import { batchedPost } from "./batchedPost";
import { ChatController } from "./controller";
import type { EditorContextTracker } from "./editorContext";
import type { LastUsed } from "./lastUsed";
import { PinnedSession } from "./target";
import { ChatViewProvider } from "./view";

export const CHAT_PANEL_TYPE = "acpLsp.chatPanel";

/** What a restored tab says when its session no longer runs (shown in its status line). */
export const STORED_NOTE = "Not running since the window was reloaded: this is its stored transcript. Send a prompt to resume it.";
export const GONE_NOTE = "This session is gone (not running, not in the history): start a new one with +.";

function isChatTabState(state: unknown): state is ChatTabState {
  const s = state as Partial<ChatTabState> | undefined;
  return typeof s?.sessionId === "string" && typeof s.title === "string";
}

export interface ChatPanelDeps {
  extensionUri: vscode.Uri;
  store: SessionStore;
  permissions: PermissionBroker;
  diffs: DiffDocuments;
  output: vscode.LogOutputChannel;
  editors: EditorContextTracker;
  /** The chat the palette's commands act on: a tab is it once focused, until it closes. */
  lastUsed: LastUsed<ChatController>;
}

export class ChatPanel implements vscode.Disposable {
  readonly controller: ChatController;
  readonly target: PinnedSession;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly disposeEmitter = new vscode.EventEmitter<void>();
  readonly onDidDispose = this.disposeEmitter.event;
  private readonly repinEmitter = new vscode.EventEmitter<void>();
  /** Fires when the tab shows another session (a new one, one picked in its history). */
  readonly onDidRepin = this.repinEmitter.event;
  private readonly batched = batchedPost((message) => void this.panel.webview.postMessage(message));
  /** The state last given to the webview to keep. */
  private persisted: ChatTabState | undefined;

  constructor(
    readonly panel: vscode.WebviewPanel,
    sessionId: string,
    deps: ChatPanelDeps,
  ) {
    const { store } = deps;
    this.target = new PinnedSession(store, sessionId, () => {
      this.retitle();
      this.repinEmitter.fire();
    });
    this.controller = new ChatController(store, deps.permissions, deps.diffs, deps.output, deps.editors, this.target);
    const dist = vscode.Uri.joinPath(deps.extensionUri, "dist");
    panel.iconPath = vscode.Uri.joinPath(deps.extensionUri, "media", "agent.svg");
    panel.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    panel.webview.html = ChatViewProvider.html(panel.webview, dist);
    this.disposables.push(
      this.controller,
      panel.webview.onDidReceiveMessage((message: WebviewToHost) => {
        void this.controller.handle(message);
        if (message.type === "ready") {
          this.persisted = undefined; // a (re)loaded webview: give it its state again
          this.retitle();
        }
      }),
      this.controller.onDidFocus(() => deps.lastUsed.use(this.controller)),
      { dispose: () => deps.lastUsed.forget(this.controller) },
      store.onDidChange((event) => {
        if (event.sessionId === this.target.sessionId) {
          this.retitle();
        }
      }),
      panel.onDidDispose(() => this.dispose()),
      this.repinEmitter,
    );
    this.controller.attach((message) => this.post(message));
    this.retitle();
  }

  get sessionId(): string {
    return this.target.sessionId;
  }

  /** Send a message to the tab's webview (batched, as the side bar's). */
  post(message: HostToWebview): void {
    this.batched(message);
  }

  /** Back after a window reload: the session if the server has it running, else its stored
   * transcript (read-only until a prompt resumes it), else a closed placeholder saying so. */
  async reopen(state: ChatTabState, store: SessionStore, output: vscode.LogOutputChannel): Promise<void> {
    // A prompt typed before the session is back waits for it (not a new session).
    await this.controller.pending.settleFirst(this.readBack(state, store, output));
    this.controller.sendSession();
    this.retitle();
  }

  private async readBack(state: ChatTabState, store: SessionStore, output: vscode.LogOutputChannel): Promise<void> {
    let shown: ChatSession | undefined;
    try {
      const session = await store.reopen(state.sessionId);
      shown = isOpen(session) ? undefined : { ...session, error: { message: STORED_NOTE } };
    } catch (error) {
      output.warn(`chat tab restored without its session ${state.sessionId}: ${String(error)}`);
      shown = { ...emptySession(state.sessionId), status: "closed", title: state.title, error: { message: GONE_NOTE } };
    }
    // Unless the user started another session in the tab meanwhile.
    if (shown && this.target.sessionId === state.sessionId) {
      this.target.remember(shown);
    }
  }

  private retitle(): void {
    const session = this.target.session();
    if (!session) {
      return; // a restored tab before its session is back: it keeps the title it had
    }
    const title = chatTabTitle(session, this.target.open);
    if (this.panel.title !== title) {
      this.panel.title = title;
    }
    // The webview keeps the tab's session, for the tab's restore after a window reload.
    const label = sessionLabel(session);
    if (this.persisted?.sessionId !== session.sessionId || this.persisted.title !== label) {
      this.persisted = { sessionId: session.sessionId, title: label };
      this.post({ type: "persist", state: this.persisted });
    }
  }

  dispose(): void {
    const disposables = this.disposables.splice(0);
    if (disposables.length === 0) {
      return; // already disposed
    }
    this.controller.attach(undefined);
    for (const d of disposables) {
      d.dispose();
    }
    this.panel.dispose();
    this.disposeEmitter.fire();
    this.disposeEmitter.dispose();
  }
}

/** The open chat tabs. */
export class ChatPanels implements vscode.Disposable {
  private readonly panels = new Set<ChatPanel>();
  private readonly repinEmitter = new vscode.EventEmitter<ChatPanel>();
  /** Fires when a tab shows another session. */
  readonly onDidRepin = this.repinEmitter.event;

  constructor(private readonly deps: ChatPanelDeps) {}

  /** The tab showing this session, or a new one beside the active editor group. */
  open(sessionId: string, column: vscode.ViewColumn = vscode.ViewColumn.Beside): ChatPanel {
    const existing = this.find(sessionId);
    if (existing) {
      existing.panel.reveal(undefined, false);
      return existing;
    }
    const webviewPanel = vscode.window.createWebviewPanel(
      CHAT_PANEL_TYPE,
      "ACP Chat",
      { viewColumn: column, preserveFocus: false },
      { retainContextWhenHidden: true }, // its webview's options: ChatPanel's
    );
    return this.adopt(webviewPanel, sessionId);
  }

  /** Restores the tabs VS Code reopens after a window reload. */
  registerSerializer(): vscode.Disposable {
    return vscode.window.registerWebviewPanelSerializer(CHAT_PANEL_TYPE, {
      deserializeWebviewPanel: async (webviewPanel, state: unknown) => {
        if (!isChatTabState(state)) {
          webviewPanel.dispose(); // nothing says which session it showed
          return;
        }
        // Not awaited: the tab shows at once, its session follows once the server answers.
        void this.adopt(webviewPanel, state.sessionId).reopen(state, this.deps.store, this.deps.output);
      },
    });
  }

  private adopt(webviewPanel: vscode.WebviewPanel, sessionId: string): ChatPanel {
    const panel = new ChatPanel(webviewPanel, sessionId, this.deps);
    this.panels.add(panel);
    panel.onDidDispose(() => this.panels.delete(panel));
    panel.onDidRepin(() => this.repinEmitter.fire(panel));
    return panel;
  }

  find(sessionId: string): ChatPanel | undefined {
    return this.list().find((p) => p.sessionId === sessionId);
  }

  list(): ChatPanel[] {
    return [...this.panels];
  }

  /** Show the chat tab `tab` again in `column` (focused: it was the active editor). False for
   * a tab that is no chat tab of this extension. */
  reveal(tab: vscode.Tab, column: vscode.ViewColumn): boolean {
    if (!(tab.input instanceof vscode.TabInputWebview) || !tab.input.viewType.endsWith(CHAT_PANEL_TYPE)) {
      return false;
    }
    const chat = this.list().find((p) => p.panel.viewColumn === column && p.panel.title === tab.label);
    if (!chat) {
      return false;
    }
    chat.panel.reveal(column, false);
    return true;
  }

  /** Whether a tab on screen shows this session (its permission prompts need no notification). */
  showsSession(sessionId: string): boolean {
    return this.list().some((p) => p.sessionId === sessionId && p.panel.visible);
  }

  dispose(): void {
    for (const panel of this.list()) {
      panel.dispose();
    }
    this.repinEmitter.dispose();
  }
}
