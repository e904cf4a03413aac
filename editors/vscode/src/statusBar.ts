// The status bar item: the active session's state, the tool call it is running, and the
// turn's `$/progress` message (text from ./model/statusText). Clicking it opens the chat.

import * as vscode from "vscode";
import type { ChatSession } from "./model/sessionModel";
import { statusText } from "./model/statusText";
import type { ProgressReport } from "./sessions";

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("acpLsp.status", vscode.StatusBarAlignment.Left, 50);
  private progress = new Map<string, string>();
  private session: ChatSession | null = null;

  constructor() {
    this.item.name = "ACP Agents";
    this.item.command = "acpLsp.openChat";
    this.render();
    this.item.show();
  }

  /** The text currently shown (for tests). */
  get text(): string {
    return this.item.text;
  }

  update(session: ChatSession | null): void {
    this.session = session;
    this.render();
  }

  onProgress(report: ProgressReport): void {
    if (report.kind === "end") {
      this.progress.delete(report.sessionId);
    } else {
      const text = report.message ?? report.title;
      if (text) {
        this.progress.set(report.sessionId, text);
      }
    }
    this.render();
  }

  private render(): void {
    const progress = this.session ? this.progress.get(this.session.sessionId) : undefined;
    const { text, tooltip } = statusText(this.session, progress);
    this.item.text = text;
    this.item.tooltip = tooltip;
    this.item.backgroundColor =
      this.session?.status === "awaiting_permission"
        ? new vscode.ThemeColor("statusBarItem.warningBackground")
        : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
