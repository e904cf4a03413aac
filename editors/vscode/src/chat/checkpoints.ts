// "Restore checkpoint" and "Edit and resend" on a user message (acp/restoreCheckpoint,
// acp/rewindSession). Nothing changes on disk before the user saw which files would, and
// said yes: the server is asked first with `dryRun`.

import * as vscode from "vscode";
import type { ChatSession } from "../model/sessionModel";
import type * as protocol from "../protocol";
import type { SessionStore } from "../sessions";
import { displayPath } from "../webview/html";

const VERBS: Record<string, string> = { created: "remove", deleted: "bring back", modified: "restore" };

/** One line per file: what restoring does to it, or why it is left as it is. */
export function describeFiles(files: protocol.RestoredFile[], cwd: string): string {
  return files
    .filter((file) => file.status !== "unchanged")
    .map((file) =>
      file.status === "failed"
        ? `keep ${displayPath(file.path, cwd)}: ${file.message ?? "cannot restore it"}`
        : `${VERBS[file.change ?? "modified"] ?? "restore"} ${displayPath(file.path, cwd)}`,
    )
    .join("\n");
}

async function plan(store: SessionStore, session: ChatSession, messageIndex: number): Promise<protocol.RestoredFile[]> {
  const result = await store.restoreCheckpoint({ sessionId: session.sessionId, messageIndex, dryRun: true });
  return result.files;
}

function count(n: number): string {
  return n === 1 ? "1 file" : `${n} files`;
}

/** Ask, then put the files the session changed since that message back; the files' results,
 * or undefined when the user said no or there was nothing to do. */
export async function restoreCheckpoint(
  store: SessionStore,
  session: ChatSession,
  messageIndex: number,
): Promise<protocol.RestoredFile[] | undefined> {
  const files = await plan(store, session, messageIndex);
  const changing = files.filter((file) => file.status === "restored");
  if (changing.length === 0) {
    const kept = describeFiles(files, session.cwd);
    void vscode.window.showInformationMessage(
      kept ? `ACP: nothing restored. ${kept}` : "ACP: the files already read as they did before this message.",
    );
    return undefined;
  }
  const answer = await vscode.window.showWarningMessage(
    `Restore ${count(changing.length)} to before this message?`,
    { modal: true, detail: describeFiles(files, session.cwd) },
    "Restore",
  );
  if (answer !== "Restore") {
    return undefined;
  }
  const done = (await store.restoreCheckpoint({ sessionId: session.sessionId, messageIndex })).files;
  const failed = done.filter((file) => file.status === "failed");
  const restored = done.filter((file) => file.status === "restored").length;
  if (failed.length > 0) {
    void vscode.window.showWarningMessage(
      `ACP: restored ${count(restored)}; ${failed.map((file) => file.message ?? file.path).join("; ")}`,
    );
  } else {
    void vscode.window.showInformationMessage(`ACP: restored ${count(restored)} to before that message.`);
  }
  return done;
}

/** The text of a message, as the user would type it again. */
export function messageText(session: ChatSession, messageIndex: number): string {
  const message = session.messages[messageIndex];
  return (message?.content ?? [])
    .map((block) => (block.type === "text" && typeof block.text === "string" ? block.text : ""))
    .join("");
}

/** Before "Edit and resend": whether the files go back too (asked only when the message has a
 * checkpoint that would change files); undefined when the user cancelled. */
export async function askRestoreFiles(
  store: SessionStore,
  session: ChatSession,
  messageIndex: number,
): Promise<boolean | undefined> {
  let files: protocol.RestoredFile[];
  try {
    files = await plan(store, session, messageIndex);
  } catch {
    return false; // no checkpoint (the folder is not tracked): the conversation alone
  }
  const changing = files.filter((file) => file.status === "restored");
  if (changing.length === 0) {
    return false;
  }
  const restore = `Restore ${count(changing.length)} too`;
  const answer = await vscode.window.showInformationMessage(
    "Edit and resend: a new session from before this message. Restore the files it changed too?",
    { modal: true, detail: describeFiles(files, session.cwd) },
    restore,
    "Keep the files",
  );
  return answer === undefined ? undefined : answer === restore;
}
