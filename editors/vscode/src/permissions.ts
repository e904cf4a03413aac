// acp/requestPermission: every request becomes a pending prompt shown in the chat view (and
// as a notification when the chat is not visible). Several can be pending at once; each gets
// exactly one answer: the first of the user's click, the notification, or the server's
// cancellation wins, later ones are ignored.

import * as vscode from "vscode";
import type { PendingPermission } from "./model/messages";
import type * as protocol from "./protocol";

interface Entry {
  permission: PendingPermission;
  resolve(result: protocol.RequestPermissionResult): void;
}

export class PermissionBroker implements vscode.Disposable {
  private readonly pending = new Map<string, Entry>();
  private counter = 0;
  private readonly addEmitter = new vscode.EventEmitter<PendingPermission>();
  private readonly doneEmitter = new vscode.EventEmitter<{
    permission: PendingPermission;
    result: protocol.RequestPermissionResult;
  }>();
  readonly onDidAdd = this.addEmitter.event;
  readonly onDidResolve = this.doneEmitter.event;

  /** Whether a chat on screen will show the session's prompt (no notification then). */
  constructor(private readonly chatVisible: (sessionId: string) => boolean) {}

  list(sessionId?: string): PendingPermission[] {
    return [...this.pending.values()]
      .map((e) => e.permission)
      .filter((p) => sessionId === undefined || p.sessionId === sessionId);
  }

  request(
    params: protocol.RequestPermissionParams,
    token: vscode.CancellationToken,
  ): Promise<protocol.RequestPermissionResult> {
    const permission: PendingPermission = {
      requestId: `perm-${++this.counter}`,
      sessionId: params.sessionId,
      toolCall: params.toolCall,
      options: Array.isArray(params.options) ? params.options : [],
    };
    const answer = new Promise<protocol.RequestPermissionResult>((resolve) => {
      this.pending.set(permission.requestId, { permission, resolve });
    });
    // The server withdrew the request (acp/cancel, shutdown): drop the prompt.
    const sub = token.onCancellationRequested(() => this.answer(permission.requestId, null));
    void answer.finally(() => sub.dispose());
    this.addEmitter.fire(permission);
    if (!this.chatVisible(permission.sessionId)) {
      void this.notify(permission);
    }
    return answer;
  }

  /** Answer a prompt: an option id, or null for "cancelled". False if already answered. */
  answer(requestId: string, optionId: string | null, reason?: string): boolean {
    const entry = this.pending.get(requestId);
    if (!entry) {
      return false;
    }
    this.pending.delete(requestId);
    const known = optionId !== null && entry.permission.options.some((o) => o.optionId === optionId);
    const result: protocol.RequestPermissionResult = {
      outcome: known ? { outcome: "selected", optionId: optionId as string } : { outcome: "cancelled" },
    };
    if (reason) {
      result.reason = reason;
    }
    entry.resolve(result);
    this.doneEmitter.fire({ permission: entry.permission, result });
    return true;
  }

  /** Answer every pending prompt of a session `cancelled` (the turn was cancelled). */
  cancelSession(sessionId: string): void {
    for (const permission of this.list(sessionId)) {
      this.answer(permission.requestId, null);
    }
  }

  private async notify(permission: PendingPermission): Promise<void> {
    const title = permission.toolCall.title || permission.toolCall.kind;
    const names = permission.options.map((o) => o.name);
    const choice = await vscode.window.showWarningMessage(`Agent wants to: ${title}`, ...names);
    if (choice !== undefined) {
      const option = permission.options.find((o) => o.name === choice);
      this.answer(permission.requestId, option?.optionId ?? null);
    }
  }

  dispose(): void {
    for (const permission of this.list()) {
      this.answer(permission.requestId, null);
    }
    this.addEmitter.dispose();
    this.doneEmitter.dispose();
  }
}
