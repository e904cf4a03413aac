// ACP: Switch / Rename / Close / Delete Session, Open Chat in Editor: several sessions side by
// side. Each acts on the session of the chat last used (a tab's, or the side bar's active one)
// unless given a session id (other extensions, keybindings with args); with no open session
// there it asks which open one.

import * as vscode from "vscode";
import type { ChatPanels } from "./chat/panel";
import type { ChatViewProvider } from "./chat/view";
import { isOpen, sessionLabel, switchEntries, type SessionPickEntry } from "./model/sessionList";
import type { ChatSession } from "./model/sessionModel";
import type { Prompts } from "./prompts";
import type { SessionStore } from "./sessions";

type Handler = (...args: unknown[]) => unknown;

/** The modal question before a session's history is deleted. */
export function confirmDelete(prompts: Prompts, label: string): Promise<boolean> {
  return prompts.confirm(
    `Delete the session "${label}"?`,
    "Its stored history is deleted (and the agent's copy, where the agent can). This cannot be undone.",
    "Delete",
  );
}

/** The switcher's button on each session: open it in an editor tab instead. */
const OPEN_IN_TAB: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon("link-external"), tooltip: "Open in Editor Tab" };

/** The open sessions to pick from (the active one first); none: says so. */
function openEntries(store: SessionStore): SessionPickEntry[] {
  const entries = switchEntries(store.openSessions(), store.activeId);
  if (entries.length === 0) {
    void vscode.window.showInformationMessage('ACP: no open session. Start one with "ACP: New Session".');
  }
  return entries;
}

/** An open session picked by the user (the active one first), or undefined. */
async function pickOpen(store: SessionStore, prompts: Prompts, title: string): Promise<ChatSession | undefined> {
  const entries = openEntries(store);
  const picked = entries.length > 0 ? await prompts.pick(entries, { title, placeHolder: "Open sessions", matchOnDescription: true }) : undefined;
  return picked ? store.get(picked.sessionId) : undefined;
}

/** Switch Session's pick: a session for the side bar, or (its button) for an editor tab. */
async function pickSwitch(store: SessionStore, prompts: Prompts): Promise<{ session: ChatSession; inTab: boolean } | undefined> {
  const entries = openEntries(store).map((entry) => ({ ...entry, buttons: [OPEN_IN_TAB] }));
  const picked =
    entries.length > 0
      ? await prompts.pickWithButtons(entries, { title: "Switch session", placeHolder: "Open sessions", matchOnDescription: true })
      : undefined;
  const session = picked && store.get(picked.item.sessionId);
  return session && { session, inTab: picked.button !== undefined } // its one button;
}

function known(store: SessionStore, sessionId: string): ChatSession {
  const session = store.get(sessionId);
  if (!session) {
    throw new Error(`No open session ${sessionId}.`);
  }
  return session;
}

type SessionOf = () => ChatSession | null;

export function sessionCommands(
  store: SessionStore,
  view: ChatViewProvider,
  panels: ChatPanels,
  prompts: Prompts,
  /** The session of the chat last used (a tab's, or the active one). */
  chatSession: SessionOf,
): Record<string, Handler> {
  const activeSession: SessionOf = () => store.activeSession;
  /** The session a command acts on: the one named, else the chat's, else one picked. */
  const target = async (arg: unknown, title: string, chat: SessionOf = chatSession): Promise<ChatSession | undefined> => {
    if (typeof arg === "string") {
      return known(store, arg);
    }
    const session = chat();
    return session && isOpen(session) ? session : pickOpen(store, prompts, title);
  };
  // Rename, Close, Delete: from the palette on the chat last used; from the side bar's title
  // bar (the `…ActiveSession` ids) on its session, whichever chat was used last.
  const rename =
    (chat: SessionOf): Handler =>
    async (sessionId?: unknown, title?: unknown) => {
      const session = await target(sessionId, "Rename which session?", chat);
      if (!session) {
        return;
      }
      const name =
        typeof title === "string"
          ? title
          : await prompts.input({
              title: "Rename session",
              prompt: `New name for "${sessionLabel(session)}"`,
              value: session.title ?? "",
              validateInput: (value) => (value.trim() ? undefined : "The name cannot be empty."),
            });
      if (name?.trim()) {
        await store.renameSession(session.sessionId, name.trim());
      }
    };
  const close =
    (chat: SessionOf): Handler =>
    async (sessionId?: unknown) => {
      const session = await target(sessionId, "Close which session?", chat);
      if (session) {
        await store.closeSession(session.sessionId);
        vscode.window.setStatusBarMessage(`ACP: closed "${sessionLabel(session)}"`, 3000);
      }
    };
  const remove =
    (chat: SessionOf): Handler =>
    async (sessionId?: unknown) => {
      const session = await target(sessionId, "Delete which session?", chat);
      if (session && (await confirmDelete(prompts, sessionLabel(session)))) {
        await store.deleteSession(session.sessionId, session.agent);
        vscode.window.setStatusBarMessage(`ACP: deleted "${sessionLabel(session)}"`, 3000);
      }
    };
  return {
    "acpLsp.openChatInEditor": async (sessionId?: unknown) => {
      const session = await target(sessionId, "Open which session in an editor tab?", () => null);
      if (!session) {
        return undefined;
      }
      panels.open(session.sessionId);
      return session.sessionId;
    },
    // The side bar chat's title bar: its session, without asking.
    "acpLsp.openActiveChatInEditor": async () => {
      const session = await target(undefined, "Open which session in an editor tab?", activeSession);
      if (session) {
        panels.open(session.sessionId);
      }
      return session?.sessionId;
    },
    // Picked: shown in the side bar; picked by its "Open in Editor Tab" button: in a tab.
    "acpLsp.switchSession": async (sessionId?: unknown) => {
      const picked = typeof sessionId === "string" ? { session: known(store, sessionId), inTab: false } : await pickSwitch(store, prompts);
      if (!picked) {
        return undefined;
      }
      const { session } = picked;
      if (picked.inTab) {
        panels.open(session.sessionId);
        return session.sessionId;
      }
      store.setActive(session.sessionId);
      await view.reveal();
      return session.sessionId;
    },
    "acpLsp.renameSession": rename(chatSession),
    "acpLsp.renameActiveSession": rename(activeSession),
    "acpLsp.closeSession": close(chatSession),
    "acpLsp.closeActiveSession": close(activeSession),
    "acpLsp.deleteSession": remove(chatSession),
    "acpLsp.deleteActiveSession": remove(activeSession),
  };
}

/** `acpLsp.hasActiveSession` for the chat view's title bar: Rename, Close, Delete need one. */
export function trackSessionContext(store: SessionStore): vscode.Disposable {
  let last: boolean | undefined;
  const update = (): void => {
    const active = store.activeSession;
    const has = active !== null && isOpen(active);
    if (has !== last) {
      last = has;
      void vscode.commands.executeCommand("setContext", "acpLsp.hasActiveSession", has);
    }
  };
  update();
  return store.onDidChange(update);
}
