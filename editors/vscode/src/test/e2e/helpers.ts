// Helpers of the end-to-end suite: the extension's API, workspace files, editors, and answering
// permission prompts through the webview's message path.

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import type { AcpLspApi } from "../../extension";
import type { PendingPermission } from "../../model/messages";
import { messageText } from "../../model/queries";
import type { ChatSession } from "../../model/sessionModel";
import type { Prompts } from "../../prompts";
import type * as protocol from "../../protocol";
import { assert, assertEqual } from "./harness";

const EXTENSION_ID = "acp-lsp.acp-lsp";
export const NOTE = /acp-lsp demo: reviewed in turn \d+/;

let apiPromise: Promise<AcpLspApi> | undefined;

export function api(): Promise<AcpLspApi> {
  apiPromise ??= (async () => {
    const ext = vscode.extensions.getExtension<AcpLspApi>(EXTENSION_ID);
    assert(ext, `extension ${EXTENSION_ID} is installed`);
    return ext.activate();
  })();
  return apiPromise;
}

function root(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert(folder, "a workspace folder is open");
  return folder.uri.fsPath;
}

export function writeFile(rel: string, text: string): string {
  const abs = path.join(root(), rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, text);
  return abs;
}

export async function openEditor(abs: string): Promise<vscode.TextEditor> {
  const document = await vscode.workspace.openTextDocument(abs);
  return vscode.window.showTextDocument(document, { preview: false });
}

export async function closeAllEditors(): Promise<void> {
  // Unsaved editors would make "close" ask with a modal dialog that blocks what follows.
  await vscode.workspace.saveAll(false);
  await vscode.commands.executeCommand("workbench.action.closeAllEditors");
}

type Answer = { optionId: string | null; reason?: string } | "leave";

/** Answer every permission prompt with `choose`, through the webview's message path. */
export function answerPermissions(a: AcpLspApi, choose: (p: PendingPermission) => Answer): {
  seen: PendingPermission[];
  dispose(): void;
} {
  const seen: PendingPermission[] = [];
  const sub = a.permissions.onDidAdd((permission) => {
    seen.push(permission);
    const answer = choose(permission);
    if (answer !== "leave") {
      // Answer a little later, as a user would: the prompt is visible meanwhile.
      setTimeout(() => {
        void a.chat.handle({ type: "permission", requestId: permission.requestId, ...answer });
      }, 50);
    }
  });
  return { seen, dispose: () => sub.dispose() };
}

export const allow = (): Answer => ({ optionId: "allow" });

export async function freshSession(a: AcpLspApi): Promise<ChatSession> {
  await vscode.commands.executeCommand("acpLsp.openChat");
  const session = await a.chat.newSession();
  assertEqual(a.store.activeId, session.sessionId, "the new session is the active one");
  return session;
}

export function current(a: AcpLspApi, sessionId: string): ChatSession {
  const session = a.store.get(sessionId);
  assert(session, `session ${sessionId} is known`);
  return session;
}

function toolCallsOfKind(session: ChatSession, kind: string): protocol.ToolCallState[] {
  return Object.values(session.toolCalls).filter((c) => c.kind === kind);
}

export function lastToolCallOfKind(session: ChatSession, kind: string): protocol.ToolCallState {
  const calls = toolCallsOfKind(session, kind);
  const call = calls[calls.length - 1];
  assert(call, `the session has a ${kind} tool call`);
  return call;
}

export function agentText(session: ChatSession): string {
  return session.messages
    .filter((m) => m.role === "agent")
    .map(messageText)
    .join("\n");
}

export async function documentFor(abs: string): Promise<vscode.TextDocument> {
  return vscode.workspace.openTextDocument(vscode.Uri.file(abs));
}

export type Asked =
  | { kind: "pick"; items: vscode.QuickPickItem[]; options: vscode.QuickPickOptions }
  | { kind: "input"; options: vscode.InputBoxOptions }
  | { kind: "confirm"; message: string; detail: string; action: string };

/** Answer the commands' questions (quick pick, input box, modal) as the user would; `asked`
 * records what was shown. Questions without an answer here go to the real UI. */
export function answerPrompts(a: AcpLspApi, answers: Partial<Prompts>): { asked: Asked[]; dispose(): void } {
  const asked: Asked[] = [];
  const real = { ...a.prompts };
  a.prompts.pick = async (items, options) => {
    asked.push({ kind: "pick", items, options });
    return (answers.pick ?? real.pick)(items, options);
  };
  // A pick with item buttons: answered by `pickWithButtons`, else as a plain pick by `pick`.
  a.prompts.pickWithButtons = async (items, options) => {
    asked.push({ kind: "pick", items, options });
    if (answers.pickWithButtons || !answers.pick) {
      return (answers.pickWithButtons ?? real.pickWithButtons)(items, options);
    }
    const item = await answers.pick(items, options);
    return item && { item };
  };
  a.prompts.input = async (options) => {
    asked.push({ kind: "input", options });
    return (answers.input ?? real.input)(options);
  };
  a.prompts.confirm = async (message, detail, action) => {
    asked.push({ kind: "confirm", message, detail, action });
    return (answers.confirm ?? real.confirm)(message, detail, action);
  };
  return { asked, dispose: () => Object.assign(a.prompts, real) };
}

/** The session an open-session pick offered under `label`. */
export function pickByLabel(label: string) {
  return async <T extends vscode.QuickPickItem>(items: T[]): Promise<T | undefined> => {
    const item = items.find((i) => i.label === label);
    assert(item, `the pick offers "${label}": ${JSON.stringify(items.map((i) => i.label))}`);
    return item;
  };
}

/** Run a command with its questions answered by `answers`; what it asked. */
export async function runAnswering(a: AcpLspApi, answers: Partial<Prompts>, command: string, ...args: unknown[]): Promise<Asked[]> {
  const prompts = answerPrompts(a, answers);
  try {
    await vscode.commands.executeCommand(command, ...args);
  } finally {
    prompts.dispose();
  }
  return prompts.asked;
}

/** The items ACP: Switch Session offers (the pick is then dismissed). */
export async function switcherItems(a: AcpLspApi): Promise<vscode.QuickPickItem[]> {
  const [asked] = await runAnswering(a, { pick: async () => undefined }, "acpLsp.switchSession");
  assert(asked?.kind === "pick", "the switcher was shown");
  return asked.items;
}
