// The status bar item: the state of the session of the chat last used (the side bar's active
// session, or a chat tab's), the tool call it is running, the turn's `$/progress` message, and
// how many other sessions run in the background (text from ./model/statusText). Clicking it opens the chat, or the session switcher when there are
// other open sessions.

import * as vscode from "vscode";
import type { ChatSession } from "./model/sessionModel";
import { statusText } from "./model/statusText";
import type { ProgressReport } from "./sessions";
import { throttle } from "./throttle";

/** The item is redrawn at most this often: each change is a round trip to the workbench,
 * which lays out the status bar again (a busy turn changes it on every update). */
const REDRAW_MS = 100;

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("acpLsp.status", vscode.StatusBarAlignment.Left, 50);
  private progress = new Map<string, string>();
  private session: ChatSession | null = null;
  private others: ChatSession[] = [];
  private shown = { text: "", tooltip: "", command: "", waiting: false };
  private readonly redraw = throttle(() => this.draw(), REDRAW_MS);

  constructor() {
    this.item.name = "ACP Agents";
    this.render();
    this.item.show();
  }

  /** The text shown (for tests; the item itself may be up to REDRAW_MS behind). */
  get text(): string {
    return this.shown.text;
  }

  /** The tooltip shown (for tests). */
  get tooltip(): string {
    return this.shown.tooltip;
  }

  /** The session shown (the chat last used's) and the other open ones. */
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
    this.shown = {
      text,
      tooltip,
      command: this.others.length > 0 ? "acpLsp.switchSession" : "acpLsp.openChat",
      waiting: [this.session, ...this.others].some((s) => s?.status === "awaiting_permission"),
    };
    this.redraw.request();
  }

  private draw(): void {
    const { text, tooltip, command, waiting } = this.shown;
    this.item.text = text;
    this.item.tooltip = tooltip;
    this.item.command = command;
    this.item.backgroundColor = waiting ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  }

  dispose(): void {
    this.redraw.cancel();
    this.item.dispose();
  }
}
