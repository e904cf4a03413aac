// Telling the user what needs them: while the window is not focused, a notification with
// "Show" when a turn ends or fails or an agent waits for a permission answer (off with
// `acpLsp.notifications.whenAway`); and the agents' notices (ACP session notices) at any time,
// an info one passing in the status bar, a warning or an error kept until dismissed.

import * as vscode from "vscode";
import { noticeOf, statusAttention } from "./model/attention";
import { sessionLabel } from "./model/sessionList";
import type { SessionStore } from "./sessions";
import { readSettings } from "./vscodeSettings";

const INFO_NOTICE_MS = 8000;

export function watchAttention(store: SessionStore, show: (sessionId: string) => Promise<void>): vscode.Disposable {
  const statuses = new Map<string, string>();
  return store.onDidChange((event) => {
    const session = store.get(event.sessionId ?? "");
    if (event.kind === "status" && session) {
      const before = statuses.get(event.sessionId);
      statuses.set(event.sessionId, event.params.status);
      const text = statusAttention(`${sessionLabel(session)} (${session.agent})`, before, event.params);
      if (text && !vscode.window.state.focused && readSettings().notifyWhenAway) {
        const tell = event.params.error ? vscode.window.showErrorMessage : vscode.window.showInformationMessage;
        void tell(`ACP: ${text}`, "Show").then((choice) => (choice === "Show" ? show(event.sessionId) : undefined));
      }
    } else if (event.kind === "update" && session) {
      for (const update of event.params.updates) {
        const notice = noticeOf(update as Record<string, unknown>);
        const text = notice && `ACP: ${session.agent}: ${notice.text}`;
        if (!notice || !text) {
          continue;
        }
        if (notice.severity === "info") {
          vscode.window.setStatusBarMessage(text, INFO_NOTICE_MS);
        } else {
          const tell = notice.severity === "error" ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
          void tell(text);
        }
      }
    }
  });
}
