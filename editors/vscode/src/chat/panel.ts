// Chats in editor tabs (ACP: Open Chat in Editor): each tab is the chat webview pinned to one
// session, with its own ChatController, so several sessions can be seen side by side. The tab's
// title is its session's name; opening a session that already has a tab reveals that tab.

import * as vscode from "vscode";
import type { DiffDocuments } from "../diffs";
import type { HostToWebview, WebviewToHost } from "../model/messages";
import { chatTabTitle } from "../model/sessionList";
import type { PermissionBroker } from "../permissions";
import type { SessionStore } from "../sessions";
import { batchedPost } from "./batchedPost";
import { ChatController } from "./controller";
import type { EditorContextTracker } from "./editorContext";
import type { LastUsed } from "./lastUsed";
import { PinnedSession } from "./target";
import { ChatViewProvider } from "./view";

export const CHAT_PANEL_TYPE = "acpLsp.chatPanel";

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
  private readonly batched = batchedPost((message) => void this.panel.webview.postMessage(message));

  constructor(
    readonly panel: vscode.WebviewPanel,
    sessionId: string,
    deps: ChatPanelDeps,
  ) {
    const { store } = deps;
    this.target = new PinnedSession(store, sessionId, () => this.retitle());
    this.controller = new ChatController(store, deps.permissions, deps.diffs, deps.output, deps.editors, this.target);
    const dist = vscode.Uri.joinPath(deps.extensionUri, "dist");
    panel.iconPath = vscode.Uri.joinPath(deps.extensionUri, "media", "agent.svg");
    panel.webview.html = ChatViewProvider.html(panel.webview, dist);
    this.disposables.push(
      this.controller,
      panel.webview.onDidReceiveMessage((message: WebviewToHost) => void this.controller.handle(message)),
      this.controller.onDidFocus(() => deps.lastUsed.use(this.controller)),
      { dispose: () => deps.lastUsed.forget(this.controller) },
      store.onDidChange((event) => {
        if (event.sessionId === this.target.sessionId) {
          this.retitle();
        }
      }),
      panel.onDidDispose(() => this.dispose()),
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

  private retitle(): void {
    const title = chatTabTitle(this.target.session(), this.target.open);
    if (this.panel.title !== title) {
      this.panel.title = title;
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

  constructor(private readonly deps: ChatPanelDeps) {}

  /** The tab showing this session, or a new one beside the active editor group. */
  open(sessionId: string, column: vscode.ViewColumn = vscode.ViewColumn.Beside): ChatPanel {
    const existing = this.find(sessionId);
    if (existing) {
      existing.panel.reveal(undefined, false);
      return existing;
    }
    const dist = vscode.Uri.joinPath(this.deps.extensionUri, "dist");
    const webviewPanel = vscode.window.createWebviewPanel(
      CHAT_PANEL_TYPE,
      "ACP Chat",
      { viewColumn: column, preserveFocus: false },
      { enableScripts: true, localResourceRoots: [dist], retainContextWhenHidden: true },
    );
    const panel = new ChatPanel(webviewPanel, sessionId, this.deps);
    this.panels.add(panel);
    panel.onDidDispose(() => this.panels.delete(panel));
    return panel;
  }

  find(sessionId: string): ChatPanel | undefined {
    return this.list().find((p) => p.sessionId === sessionId);
  }

  list(): ChatPanel[] {
    return [...this.panels];
  }

  /** Whether a tab on screen shows this session (its permission prompts need no notification). */
  showsSession(sessionId: string): boolean {
    return this.list().some((p) => p.sessionId === sessionId && p.panel.visible);
  }

  dispose(): void {
    for (const panel of this.list()) {
      panel.dispose();
    }
  }
}
