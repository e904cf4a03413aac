// The chat's logic on the extension-host side: it answers the webview's messages with acp/*
// requests and forwards session changes, permission prompts and the editor context to it.
// Commands and tests drive the same methods the webview does.

import * as path from "node:path";
import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient/node";
import type { HostToWebview, PendingPermission, PromptContext, WebviewToHost } from "../model/messages";
import { sessionLabel } from "../model/sessionList";
import { type ChatSession } from "../model/sessionModel";
import { isBusy } from "../model/queries";
import type { DiffDocuments } from "../diffs";
import type { PermissionBroker } from "../permissions";
import { sendRefusal } from "../model/attachments";
import { buildPrompt, describeContext, type EditorContext } from "../promptContext";
import * as protocol from "../protocol";
import type { SessionStore } from "../sessions";
import { readSettings } from "../vscodeSettings";
import { PromptAttachments, type PromptTarget } from "./attachments";

export class ChatController implements vscode.Disposable {
  private post: ((message: HostToWebview) => void) | undefined;
  private agents: protocol.AgentSummary[] = [];
  private selectedAgent: string | undefined;
  private includeContext = readSettings().includeActiveFile;
  private lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly turnEmitter = new vscode.EventEmitter<{ sessionId: string; result?: protocol.PromptResult; error?: unknown }>();
  /** Fires when a turn started from the chat ends (for tests and the status bar). */
  readonly onDidFinishTurn = this.turnEmitter.event;
  /** What the user attached to the next prompt (chips under the input). */
  readonly attachments = new PromptAttachments(
    (message) => this.send(message),
    () => this.promptTarget(),
    () => this.visibleEditor(),
  );

  constructor(
    private readonly store: SessionStore,
    private readonly permissions: PermissionBroker,
    private readonly diffs: DiffDocuments,
    private readonly output: vscode.LogOutputChannel,
  ) {
    this.disposables.push(
      store.onDidChange((event) => {
        const active = store.activeId;
        switch (event.kind) {
          case "replace":
          case "active":
            if (event.sessionId === active) {
              this.sendSession();
            }
            break;
          case "update":
            if (event.sessionId === active) {
              this.send({ type: "update", params: event.params });
            }
            break;
          case "status":
            if (event.sessionId === active) {
              this.send({ type: "status", params: event.params });
            }
            break;
          case "terminal":
            if (event.sessionId === active) {
              this.send({ type: "terminal", params: event.params });
            }
            break;
        }
      }),
      permissions.onDidAdd((permission) => this.send({ type: "permission", permission: this.labelled(permission) })),
      permissions.onDidResolve(({ permission }) => this.send({ type: "permissionDone", requestId: permission.requestId })),
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        if (editor && editor.document.uri.scheme !== "output") {
          this.lastEditor = editor;
          this.sendContext();
        }
      }),
      vscode.window.onDidChangeVisibleTextEditors(() => this.sendContext()),
      vscode.window.onDidChangeTextEditorSelection((event) => {
        if (event.textEditor === this.lastEditor) {
          this.sendContext();
        }
      }),
      this.turnEmitter,
      this.attachments,
    );
  }

  /** Connect a webview (null: it went away). Sends it the whole state. */
  attach(post: ((message: HostToWebview) => void) | undefined): void {
    this.post = post;
  }

  private send(message: HostToWebview): void {
    this.post?.(message);
  }

  private sendSession(): void {
    const session = this.store.activeSession;
    this.send({ type: "session", session, follow: this.store.isFollowing(session?.sessionId ?? null) });
  }

  /** A prompt with its session's name: it shows in the chat whichever session is there. */
  private labelled(permission: PendingPermission): PendingPermission {
    const session = this.store.get(permission.sessionId);
    return session ? { ...permission, sessionLabel: sessionLabel(session) } : permission;
  }

  private sendContext(): void {
    this.send({ type: "context", context: this.context() });
  }

  // -- context ----------------------------------------------------------------------------------

  /** The last focused editor, while it is still on screen (focus may be in the chat now). */
  private visibleEditor(): vscode.TextEditor | undefined {
    const editor = this.lastEditor;
    if (
      !editor ||
      editor.document.uri.scheme !== "file" ||
      !vscode.window.visibleTextEditors.some((e) => e.document === editor.document)
    ) {
      return undefined;
    }
    return editor;
  }

  private editorContext(): EditorContext | undefined {
    const editor = this.visibleEditor();
    if (!editor) {
      return undefined;
    }
    const document = editor.document;
    const selection = editor.selection;
    return {
      uri: document.uri.toString(),
      label: vscode.workspace.asRelativePath(document.uri, false),
      languageId: document.languageId,
      selection: selection.isEmpty
        ? undefined
        : {
            text: document.getText(selection),
            startLine: selection.start.line + 1,
            endLine: selection.end.line + 1,
          },
    };
  }

  context(): PromptContext {
    return describeContext(this.editorContext());
  }

  // -- webview messages -----------------------------------------------------------------------

  async handle(message: WebviewToHost): Promise<void> {
    try {
      await this.dispatch(message);
    } catch (error) {
      this.reportError(error);
    }
  }

  private async dispatch(message: WebviewToHost): Promise<void> {
    switch (message.type) {
      case "ready":
        await this.sendInit();
        break;
      case "prompt":
        this.includeContext = message.includeContext;
        await this.sendPrompt(message.text);
        break;
      case "cancel":
        await this.cancel();
        break;
      case "newSession":
        if (message.agent) {
          this.selectedAgent = message.agent;
        }
        await this.newSession();
        break;
      case "listSessions":
        this.send({ type: "sessions", sessions: (await this.store.listSessions()).sessions });
        break;
      case "loadSession":
        await this.store.openSession(message);
        break;
      case "switchSession":
        this.store.setActive(message.sessionId);
        break;
      case "setMode": {
        const session = this.requireSession();
        await this.store.setMode(session.sessionId, message.modeId);
        break;
      }
      case "setConfigOption": {
        const session = this.requireSession();
        await this.store.setConfigOption(session.sessionId, message.configId, message.value);
        break;
      }
      case "setFollow":
        await this.setFollow(message.enabled);
        break;
      case "permission":
        this.permissions.answer(message.requestId, message.optionId, message.reason);
        break;
      case "review":
        await this.review(message.action, message.toolCallId, message.path);
        break;
      case "openDiff": {
        const call = this.store.activeSession?.toolCalls[message.toolCallId];
        if (call) {
          await this.diffs.open(call, message.index);
        }
        break;
      }
      case "openLocation":
        await this.openLocation(message.path, message.line ?? null);
        break;
      case "selectAgent":
        this.selectedAgent = message.agent;
        break;
      case "includeContext":
        this.includeContext = message.enabled;
        break;
      default:
        await this.attachments.handle(message);
    }
  }

  private async sendInit(): Promise<void> {
    const session = this.store.activeSession;
    this.send({
      type: "init",
      agents: this.agents,
      defaultAgent: this.defaultAgentName(),
      session,
      sessions: [],
      permissions: this.permissions.list().map((p) => this.labelled(p)),
      context: this.context(),
      includeContext: this.includeContext,
      follow: this.store.isFollowing(session?.sessionId ?? null),
    });
    this.attachments.publish();
    await this.refreshAgents().catch((error) => this.output.warn(`acp/listAgents: ${String(error)}`));
  }

  async refreshAgents(): Promise<protocol.AgentSummary[]> {
    this.agents = await this.store.listAgents();
    this.send({ type: "agents", agents: this.agents, defaultAgent: this.defaultAgentName() });
    return this.agents;
  }

  private defaultAgentName(): string | null {
    return (
      this.selectedAgent ??
      (readSettings().defaultAgent || undefined) ??
      this.agents.find((a) => a.default)?.name ??
      null
    );
  }

  /** The agent the next prompt goes to: the open session's, else the one a new session gets. */
  private promptTarget(): PromptTarget {
    const session = this.store.activeSession;
    if (session && session.status !== "closed" && session.status !== "failed") {
      return { agent: session.agent, caps: session.promptCapabilities };
    }
    const name = this.defaultAgentName();
    return { agent: name ?? "the agent", caps: this.agents.find((a) => a.name === name)?.promptCapabilities };
  }

  private requireSession(): ChatSession {
    const session = this.store.activeSession;
    if (!session) {
      throw new Error("No ACP session: start one with \"ACP: New Session\".");
    }
    return session;
  }

  // -- actions (also used by commands) ----------------------------------------------------------

  async newSession(agent?: string): Promise<ChatSession> {
    return this.store.newSession(agent ?? this.selectedAgent ?? (readSettings().defaultAgent || undefined));
  }

  /** Send a prompt in the active session (starting one if needed); resolves when the turn ends. */
  async sendPrompt(text: string): Promise<protocol.PromptResult | undefined> {
    let session = this.store.activeSession;
    if (!session || session.status === "closed" || session.status === "failed") {
      session = await this.newSession();
    }
    if (isBusy(session.status)) {
      throw new Error("The agent is still working on the last prompt: wait, or cancel it.");
    }
    // Images the agent does not take stop the prompt, with the reason: never dropped.
    const refusal = sendRefusal(session.agent, session.promptCapabilities, this.attachments.items());
    if (refusal) {
      this.focusInput(text); // the webview cleared its input: give the text back
      throw new Error(refusal);
    }
    const attached = this.attachments.take();
    const blocks = buildPrompt(text, this.editorContext(), this.includeContext, attached.items.map((a) => a.block));
    const sessionId = session.sessionId;
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.store.prompt(sessionId, blocks);
        this.turnEmitter.fire({ sessionId, result });
        return result;
      } catch (error) {
        const authRequired = error instanceof ResponseError && error.code === protocol.ErrorCodes.authRequired;
        if (!authRequired || attempt > 1) {
          attached.restore();
          this.turnEmitter.fire({ sessionId, error });
          throw error;
        }
        // Signed in without a terminal step: send the same prompt again, once.
        if (!(await this.offerAuthentication(session.agent, error.data))) {
          attached.restore();
          this.turnEmitter.fire({ sessionId, error });
          return undefined;
        }
      }
    }
  }

  async cancel(): Promise<void> {
    const session = this.store.activeSession;
    if (session && isBusy(session.status)) {
      this.permissions.cancelSession(session.sessionId);
      await this.store.cancel(session.sessionId);
    }
  }

  async setFollow(enabled: boolean): Promise<boolean> {
    const session = this.requireSession();
    const result = await this.store.setFollow(session.sessionId, enabled);
    this.send({ type: "follow", enabled: result });
    return result;
  }

  async review(action: "accept" | "reject", toolCallId?: string, filePath?: string): Promise<protocol.ReviewEditResult> {
    const session = this.requireSession();
    const params: protocol.ReviewEditParams = { sessionId: session.sessionId, action };
    if (toolCallId) {
      params.toolCallId = toolCallId;
    }
    if (filePath) {
      params.path = filePath;
    }
    const result = await this.store.review(params);
    if (!result.applied) {
      void vscode.window.showWarningMessage(`ACP: nothing to ${action === "accept" ? "keep" : "undo"}.`);
    }
    return result;
  }

  async openLocation(target: string, line: number | null): Promise<void> {
    if (/^https?:/i.test(target)) {
      await vscode.env.openExternal(vscode.Uri.parse(target));
      return;
    }
    let uri: vscode.Uri;
    if (target.startsWith("file:")) {
      uri = vscode.Uri.parse(target);
    } else {
      const cwd = this.store.activeSession?.cwd ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
      uri = vscode.Uri.file(path.isAbsolute(target) ? target : path.join(cwd, target));
    }
    const options: vscode.TextDocumentShowOptions = { preview: true };
    if (line !== null && line > 0) {
      const position = new vscode.Position(line - 1, 0);
      options.selection = new vscode.Range(position, position);
    }
    await vscode.window.showTextDocument(uri, options);
  }

  /** Show the chat and put `text` in its input. */
  focusInput(text?: string): void {
    this.send({ type: "focusInput", text });
  }

  /** Ask the user to sign in; true when done here (the prompt can be retried at once). */
  private async offerAuthentication(agent: string, data: unknown): Promise<boolean> {
    const info = (typeof data === "object" && data !== null ? data : {}) as {
      authMethods?: protocol.AuthMethod[];
      message?: string;
      loginTerminal?: { methodId: string; command: string; args?: string[]; env?: Record<string, string> };
    };
    const methods = Array.isArray(info.authMethods) ? info.authMethods : [];
    const actions = [
      ...(info.loginTerminal ? ["Log In in Terminal"] : []),
      ...(methods.length > 0 ? ["Sign In…"] : []),
    ];
    const reason = info.message ? ` (${info.message})` : "";
    const choice = await vscode.window.showWarningMessage(
      `ACP: the agent "${agent}" needs you to sign in${reason}.`,
      ...actions,
    );
    if (choice === "Log In in Terminal" && info.loginTerminal) {
      this.runLogin(agent, info.loginTerminal);
      return false;
    }
    if (choice !== "Sign In…") {
      return false;
    }
    const picked =
      methods.length === 1
        ? methods[0]
        : await vscode.window.showQuickPick(
            methods.map((m) => ({
              label: m.name,
              description: m.type === "env_var" ? (m.vars ?? []).map((v) => v.name).join(", ") : (m.description ?? undefined),
              detail: m.type === "env_var" ? m.description ?? undefined : undefined,
              id: m.id,
            })),
            { title: `Sign in to ${agent}` },
          );
    if (!picked) {
      return false;
    }
    const result = await this.store.authenticate(agent, picked.id);
    if (result.terminal) {
      this.runLogin(agent, result.terminal);
      return false;
    }
    if (result.envVars) {
      // Secrets never pass through acp-lsp: the user puts them in the agent's env setting.
      const names = result.envVars.map((v) => v.name).join(", ");
      const open = await vscode.window.showInformationMessage(
        `ACP: ${result.message ?? `set ${names} for ${agent}`}`,
        "Open Settings",
      );
      if (open === "Open Settings") {
        await vscode.commands.executeCommand("workbench.action.openSettings", "acpLsp.agents");
      }
      return false;
    }
    return true;
  }

  /** A terminal login (e.g. `claude-agent-acp --cli auth login`): the user finishes it, then sends again. */
  private runLogin(agent: string, login: { command: string; args?: string[]; env?: Record<string, string> }): void {
    const terminal = vscode.window.createTerminal({
      name: `Sign in: ${agent}`,
      shellPath: login.command,
      shellArgs: login.args ?? [],
      env: login.env,
    });
    terminal.show();
    void vscode.window.showInformationMessage("ACP: finish signing in in the terminal, then send the prompt again.");
  }

  private reportError(error: unknown): void {
    const message =
      error instanceof ResponseError
        ? `${error.message}${error.code === protocol.ErrorCodes.agentUnavailable ? " (ACP: Restart Agent… may help)" : ""}`
        : error instanceof Error
          ? error.message
          : String(error);
    this.output.error(message);
    this.send({ type: "error", message });
    void vscode.window.showErrorMessage(`ACP: ${message}`);
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
