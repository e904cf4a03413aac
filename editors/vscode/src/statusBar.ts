// The status bar item: the active session's state, the tool call it is running, the turn's
// `$/progress` message, and how many other sessions run in the background (text from
// ./model/statusText). Clicking it opens the chat, or the session switcher when there are
// other open sessions.

import * as vscode from "vscode";
import type { ChatSession } from "./model/sessionModel";
import { statusText } from "./model/statusText";
import type { ProgressReport } from "./sessions";

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("acpLsp.status", vscode.StatusBarAlignment.Left, 50);
  private progress = new Map<string, string>();
  private session: ChatSession | null = null;
  private others: ChatSession[] = [];

  constructor() {
    this.item.name = "ACP Agents";
    this.render();
    this.item.show();
  }

  /** The text currently shown (for tests). */
  get text(): string {
    return this.item.text;
  }

  /** The tooltip currently shown (for tests). */
  get tooltip(): string {
    return typeof this.item.tooltip === "string" ? this.item.tooltip : (this.item.tooltip?.value ?? "");
  }

  /** The active session and the other open ones. */
  update(session: ChatSession | null, others: ChatSession[] = []): void {
    this.session = session;
    this.others = others;
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
    const { text, tooltip } = statusText(this.session, progress, this.others);
    this.item.text = text;
    this.item.tooltip = tooltip;
    this.item.command = this.others.length > 0 ? "acpLsp.switchSession" : "acpLsp.openChat";
    const waiting = [this.session, ...this.others].some((s) => s?.status === "awaiting_permission");
    this.item.backgroundColor = waiting ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
