// The `ACP: …` commands of the command palette.

import * as vscode from "vscode";
import type { CurrentChat } from "./chat/current";
import type { ChatPanels } from "./chat/panel";
import type { ChatViewProvider } from "./chat/view";
import type { ChatSession } from "./model/sessionModel";
import type { Prompts } from "./prompts";
import { searchPick } from "./searchPick";
import type { AcpServer } from "./server";
import type * as protocol from "./protocol";
import { confirmDelete, sessionCommands } from "./sessionCommands";
import type { SessionStore } from "./sessions";

export interface CommandDeps {
  server: AcpServer;
  store: SessionStore;
  /** The chat last used (a tab or the side bar's): "the chat" and its session of the commands. */
  current: () => CurrentChat;
  view: ChatViewProvider;
  panels: ChatPanels;
  prompts: Prompts;
}

/** Configured agents and the ACP Registry's, with version, description and whether they are
 * installed; a registry agent picked here is installed at once (with progress). */
async function pickAgent(store: SessionStore, title: string): Promise<string | undefined> {
  const agents = await store.listAgents(true);
  if (agents.length <= 1) {
    return agents[0]?.name;
  }
  type Item = vscode.QuickPickItem & { agent?: protocol.AgentSummary };
  const configured = agents.filter((a) => a.source !== "registry");
  const registry = agents.filter((a) => a.source === "registry");
  const item = (a: protocol.AgentSummary): Item => ({
    label: a.title || a.name,
    description: [
      a.name,
      a.version ? `v${a.version}` : "",
      a.default ? "default" : "",
      a.running ? "running" : "",
      a.source === "registry" ? (a.installed ? "installed" : "not installed") : "",
    ]
      .filter(Boolean)
      .join(" · "),
    detail: a.error ?? a.description,
    agent: a,
  });
  const items: Item[] = [
    ...configured.map(item),
    ...(registry.length > 0 ? [{ label: "ACP Registry", kind: vscode.QuickPickItemKind.Separator }] : []),
    ...registry.map(item),
  ];
  const picked = await vscode.window.showQuickPick(items, { title, matchOnDescription: true, matchOnDetail: true });
  const agent = picked?.agent;
  if (agent?.source === "registry" && !agent.installed) {
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Installing ${agent.title}…` },
      () => store.installAgent(agent.name),
    );
  }
  return agent?.name;
}

/** The session history: a searchable pick (the query searches titles and message text). */
async function pickStoredSession(store: SessionStore): Promise<protocol.SessionInfo | undefined> {
  const picked = await searchPick({
    title: "Session history",
    placeholder: "Search titles and messages",
    debounceMs: 150,
    searchOnShow: true,
    search: async (value) => {
      const query = value.trim();
      const result = await store.listSessions(query ? { query, limit: 200 } : { limit: 200 });
      return result.sessions.map((s) => ({
        label: s.title || s.sessionId,
        description: [s.agent, s.live ? "open" : s.stored ? "stored" : "agent", s.messageCount ? `${s.messageCount} messages` : ""]
          .filter(Boolean)
          .join(" · "),
        detail: [s.updatedAt, s.cwd].filter(Boolean).join(" · "),
        info: s,
      }));
    },
  });
  return picked?.info;
}

function isDoctorOptions(value: unknown): value is { agents: string[] } {
  const agents = (value as { agents?: unknown } | undefined)?.agents;
  return Array.isArray(agents) && agents.every((a) => typeof a === "string");
}

/** Which agents doctor starts: each costs an agent start (a first `npx` run downloads), so the
 * user picks one or all. [] means all configured; undefined, dismissed. */
async function pickDoctorAgents(store: SessionStore, prompts: Prompts): Promise<string[] | undefined> {
  const agents = (await store.listAgents(false).catch(() => [])).filter((a) => a.source !== "registry");
  type Item = vscode.QuickPickItem & { agents: string[] };
  const items: Item[] = [
    { label: "All configured agents", description: "starts each of them", agents: [] },
    ...agents.map((a) => ({
      label: a.title || a.name,
      description: [a.name, a.default ? "default" : ""].filter(Boolean).join(" · "),
      agents: [a.name],
    })),
  ];
  return (await prompts.pick(items, { title: "ACP: Run Doctor on…" }))?.agents;
}

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const { server, store, current, view, panels, prompts } = deps;
  /** The session of the chat last used (the side bar's: the active one). */
  const chatSession = (): ChatSession | null => current().controller.session();
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
    ...Object.entries(sessionCommands(store, view, panels, prompts, chatSession)).map(([id, fn]) => register(id, fn)),
    register("acpLsp.openChat", () => view.reveal()),
    register("acpLsp.newSession", async (agent?: unknown) => {
      const name = typeof agent === "string" ? agent : await pickAgent(store, "New session with…");
      // In the chat last used: a tab shows it, and the side bar stays on its session.
      const target = current();
      await target.reveal();
      return target.controller.newSession(name);
    }),
    register("acpLsp.sendPrompt", async (text?: unknown) => {
      const prompt =
        typeof text === "string" ? text : await vscode.window.showInputBox({ title: "Ask the agent", prompt: "Prompt" });
      if (!prompt) {
        return undefined;
      }
      const target = current();
      await target.reveal();
      return target.controller.sendPrompt(prompt);
    }),
    register("acpLsp.cancel", () => current().controller.cancel()),
    register("acpLsp.loadSession", async () => {
      const picked = await pickStoredSession(store);
      if (!picked) {
        return;
      }
      const action = await vscode.window.showQuickPick(
        [
          { label: picked.live ? "Open" : "Resume", id: "resume", detail: "continue in the chat" },
          { label: "Export as Markdown", id: "export" },
          { label: "Rename…", id: "rename" },
          { label: "Delete", id: "delete", detail: "from the history (and the agent, where it can)" },
        ],
        { title: picked.title || picked.sessionId },
      );
      if (action?.id === "resume") {
        await view.reveal();
        const session = await store.openSession(picked);
        if (session.resumedFrom === "transcript") {
          void vscode.window.showInformationMessage(
            "ACP: the agent could not reload this session; it continues from the stored transcript.",
          );
        }
      } else if (action?.id === "export") {
        const text = await store.exportSession(picked.sessionId);
        const doc = await vscode.workspace.openTextDocument({ language: "markdown", content: text });
        await vscode.window.showTextDocument(doc, { preview: false });
      } else if (action?.id === "rename") {
        const title = await vscode.window.showInputBox({ title: "Rename session", value: picked.title ?? "" });
        if (title) {
          await store.renameSession(picked.sessionId, title);
        }
      } else if (action?.id === "delete" && (await confirmDelete(prompts, picked.title || picked.sessionId))) {
        await store.deleteSession(picked.sessionId, picked.agent);
      }
    }),
    register("acpLsp.setMode", async () => {
      const session = chatSession();
      const modes = session?.modes?.availableModes ?? [];
      if (!session || modes.length === 0) {
        throw new Error("The chat's session has no modes.");
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
      const { controller } = current();
      const enabled = await controller.setFollow(!store.isFollowing(controller.session()?.sessionId ?? null));
      vscode.window.setStatusBarMessage(`ACP: follow-along ${enabled ? "on" : "off"}`, 3000);
      return enabled;
    }),
    register("acpLsp.acceptAll", () => current().controller.review("accept")),
    register("acpLsp.rejectAll", () => current().controller.review("reject")),
    register("acpLsp.addSelection", async () => {
      const target = current();
      await target.reveal();
      target.controller.focusInput();
    }),
    register("acpLsp.restartAgent", async (agent?: unknown) => {
      const name = typeof agent === "string" ? agent : (chatSession()?.agent ?? (await pickAgent(store, "Restart agent")));
      if (name) {
        await store.restartAgent(name);
        vscode.window.setStatusBarMessage(`ACP: restarted ${name}`, 3000);
      }
    }),
    register("acpLsp.forkSession", async () => {
      const target = current();
      await target.reveal();
      return target.controller.fork();
    }),
    register("acpLsp.logout", async () => {
      const name = chatSession()?.agent ?? (await pickAgent(store, "Log out of agent"));
      if (name) {
        await store.logout(name);
        vscode.window.setStatusBarMessage(`ACP: logged out of ${name}`, 3000);
      }
    }),
    register("acpLsp.updateAgent", async () => {
      const name = await pickAgent(store, "Update agent (from the ACP Registry)");
      if (name) {
        const result = await store.updateAgent(name);
        void vscode.window.showInformationMessage(
          result.updated
            ? `ACP: ${name} updated ${result.previousVersion ?? "?"} → ${result.version}`
            : `ACP: ${name} stays at ${result.version}`,
        );
      }
    }),
    register("acpLsp.restartServer", async () => {
      await server.restart();
    }),
    register("acpLsp.showOutput", () => server.output.show()),
    register("acpLsp.doctor", async (options?: unknown) => {
      const agents = isDoctorOptions(options) ? options.agents : await pickDoctorAgents(store, prompts);
      if (agents === undefined) {
        return undefined;
      }
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "ACP: acp-lsp doctor…" },
        () => server.doctor(agents),
      );
      server.output.show(true);
      const summary = /(\d+) problem\(s\), (\d+) warning\(s\)/.exec(result.output);
      const text = summary ? `${summary[1]} problem(s), ${summary[2]} warning(s)` : "no report";
      if (result.code === 0) {
        void vscode.window.showInformationMessage(`ACP doctor: ${text} (table in the output)`);
      } else {
        void vscode.window.showErrorMessage(`ACP doctor: ${text} (table in the output)`);
      }
      return { ...result, summary: text };
    }),
  ];
}
