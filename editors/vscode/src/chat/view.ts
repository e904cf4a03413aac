// The chat webview view: its HTML shell (strict CSP, nonce'd script), and the message pipe
// between it and the ChatController.

import * as crypto from "node:crypto";
import * as vscode from "vscode";
import type { WebviewToHost } from "../model/messages";
import { isOpen, sessionLabel } from "../model/sessionList";
import type { ChatSession } from "../model/sessionModel";
import { batchedPost } from "./batchedPost";
import type { ChatController } from "./controller";

export const CHAT_VIEW_ID = "acpLsp.chat";

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private label: string | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ChatController,
  ) {}

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /** What the view's title bar shows beside "Chat": the active session's name. */
  get description(): string | undefined {
    return this.label;
  }

  /** Name the chat's session in the view's title bar (several may be open side by side). */
  describe(session: ChatSession | null): void {
    this.label = session && isOpen(session) ? sessionLabel(session) : undefined;
    if (this.view) {
      this.view.description = this.label;
    }
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.html = ChatViewProvider.html(view.webview, dist);
    view.description = this.label;
    this.disposables.push(
      view.webview.onDidReceiveMessage((message: WebviewToHost) => void this.controller.handle(message)),
      view.onDidDispose(() => {
        if (this.view === view) {
          this.view = undefined;
          this.controller.attach(undefined);
        }
      }),
    );
    this.controller.attach(batchedPost((message) => void view.webview.postMessage(message)));
  }

  /** Reveal the chat view (creating it if needed). */
  async reveal(): Promise<void> {
    if (this.view) {
      this.view.show(false);
      return;
    }
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  }

  /** The chat's HTML shell; chats in editor tabs (panel.ts) load the same one. */
  static html(webview: vscode.Webview, dist: vscode.Uri): string {
    const nonce = crypto.randomBytes(16).toString("base64");
    const src = (file: string): string => webview.asWebviewUri(vscode.Uri.joinPath(dist, file)).toString();
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} data:`,
      `script-src 'nonce-${nonce}'`,
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${src("codicons/codicon.css")}">
<link rel="stylesheet" href="${src("chat.css")}">
<title>ACP Chat</title>
</head>
<body>
<header id="toolbar">
  <select id="agent" title="Agent for new sessions" aria-label="Agent"></select>
  <button id="new" class="icon" title="New session" aria-label="New session"><span class="codicon codicon-add"></span></button>
  <button id="history" class="icon" title="Sessions" aria-label="Sessions"><span class="codicon codicon-history"></span></button>
  <span class="spacer"></span>
  <select id="mode" title="Mode" aria-label="Mode" hidden></select>
  <button id="follow" class="icon" title="Follow the agent: open the files it works on" aria-label="Follow along"><span class="codicon codicon-eye"></span></button>
  <div id="title" hidden></div>
</header>
<div id="config"></div>
<div id="sessions" hidden></div>
<div id="plan"></div>
<main id="timeline" aria-live="polite"></main>
<div id="empty" class="muted">Ask the agent anything. Type <kbd>/</kbd> for its commands, <kbd>@</kbd> to attach files, folders, diagnostics, a symbol or an image.</div>
<div id="turn-review"></div>
<footer>
  <div id="permissions"></div>
  <div id="error" class="error-text" hidden></div>
  <div class="meta"><span id="statusline"></span><span class="spacer"></span><span id="usage"></span></div>
  <div id="completions" role="listbox" hidden></div>
  <div id="mentions" role="listbox" hidden></div>
  <div id="context" hidden></div>
  <div id="queue" aria-label="Prompts waiting their turn" hidden></div>
  <div class="composer">
    <textarea id="input" rows="3" placeholder="Ask the agent… (Enter to send, Shift+Enter for a new line)" aria-label="Prompt"></textarea>
    <button id="attach" class="icon" title="Add context: file, folder, diagnostics, symbol, image (or type @)" aria-label="Add context"><span class="codicon codicon-attach"></span></button>
    <button id="send" title="Send (Enter)">Send</button>
    <button id="cancel" class="danger" title="Stop the agent (Esc)" hidden>Stop</button>
  </div>
  <div id="attachments" aria-label="Attached to the prompt" hidden></div>
</footer>
<script nonce="${nonce}" src="${src("webview.js")}"></script>
</body>
</html>`;
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
