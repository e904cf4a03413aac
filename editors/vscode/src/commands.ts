// The `ACP: …` commands of the command palette.

import * as vscode from "vscode";
import type { ChatController } from "./chat/controller";
import type { ChatViewProvider } from "./chat/view";
import type { AcpServer } from "./server";
import type { SessionStore } from "./sessions";

export interface CommandDeps {
  server: AcpServer;
  store: SessionStore;
  chat: ChatController;
  view: ChatViewProvider;
}

async function pickAgent(chat: ChatController, title: string): Promise<string | undefined> {
  const agents = await chat.refreshAgents();
  if (agents.length <= 1) {
    return agents[0]?.name;
  }
  const picked = await vscode.window.showQuickPick(
    agents.map((a) => ({
      label: a.title || a.name,
      description: `${a.name} · ${a.protocol.toUpperCase()}${a.default ? " · default" : ""}${a.running ? " · running" : ""}`,
      name: a.name,
    })),
    { title },
  );
  return picked?.name;
}

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const { server, store, chat, view } = deps;
  const register = (id: string, fn: (...args: unknown[]) => unknown): vscode.Disposable =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await fn(...args);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        server.output.error(`${id}: ${message}`);
        void vscode.window.showErrorMessage(`ACP: ${message}`);
        return undefined;
      }
    });

  return [
    register("acpLsp.openChat", () => view.reveal()),
    register("acpLsp.newSession", async (agent?: unknown) => {
      const name = typeof agent === "string" ? agent : await pickAgent(chat, "New session with…");
      await view.reveal();
      return chat.newSession(name);
    }),
    register("acpLsp.sendPrompt", async (text?: unknown) => {
      const prompt =
        typeof text === "string" ? text : await vscode.window.showInputBox({ title: "Ask the agent", prompt: "Prompt" });
      if (!prompt) {
        return undefined;
      }
      await view.reveal();
      return chat.sendPrompt(prompt);
    }),
    register("acpLsp.cancel", () => chat.cancel()),
    register("acpLsp.loadSession", async () => {
      const sessions = await store.listSessions();
      const picked = await vscode.window.showQuickPick(
        sessions.map((s) => ({
          label: s.title || s.sessionId,
          description: `${s.agent}${s.live ? " · open" : ""}`,
          detail: s.updatedAt ?? undefined,
          info: s,
        })),
        { title: "Load session", placeHolder: sessions.length === 0 ? "No sessions" : undefined },
      );
      if (picked) {
        await view.reveal();
        await store.openSession(picked.info);
      }
    }),
    register("acpLsp.setMode", async () => {
      const session = store.activeSession;
      const modes = session?.modes?.availableModes ?? [];
      if (!session || modes.length === 0) {
        throw new Error("The active session has no modes.");
      }
      const picked = await vscode.window.showQuickPick(
        modes.map((m) => ({
          label: m.name,
          description: m.id === session.modes?.currentModeId ? "current" : undefined,
          detail: m.description ?? undefined,
          id: m.id,
        })),
        { title: "Mode" },
      );
      if (picked) {
        await store.setMode(session.sessionId, picked.id);
      }
    }),
    register("acpLsp.toggleFollow", async () => {
      const enabled = await chat.setFollow(!store.isFollowing(store.activeId));
      vscode.window.setStatusBarMessage(`ACP: follow-along ${enabled ? "on" : "off"}`, 3000);
      return enabled;
    }),
    register("acpLsp.acceptAll", () => chat.review("accept")),
    register("acpLsp.rejectAll", () => chat.review("reject")),
    register("acpLsp.addSelection", async () => {
      await view.reveal();
      chat.focusInput();
    }),
    register("acpLsp.restartAgent", async (agent?: unknown) => {
      const name = typeof agent === "string" ? agent : (store.activeSession?.agent ?? (await pickAgent(chat, "Restart agent")));
      if (name) {
        await store.restartAgent(name);
        vscode.window.setStatusBarMessage(`ACP: restarted ${name}`, 3000);
      }
    }),
    register("acpLsp.restartServer", async () => {
      await server.restart();
    }),
    register("acpLsp.showOutput", () => server.output.show()),
  ];
}
