// The chat's logic on the extension-host side: it answers the webview's messages with acp/*
// requests and forwards session changes, permission prompts and the editor context to it.
// Commands and tests drive the same methods the webview does.

import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient/node";
import type { HostToWebview, PendingPermission, PromptContext, WebviewToHost } from "../model/messages";
import { sessionLabel } from "../model/sessionList";
import { type ChatSession } from "../model/sessionModel";
import { isBusy } from "../model/queries";
import type { DiffDocuments } from "../diffs";
import type { PermissionBroker } from "../permissions";
import { sendRefusal } from "../model/attachments";
import { buildPrompt } from "../promptContext";
import * as protocol from "../protocol";
import type { SessionStore } from "../sessions";
import { readSettings } from "../vscodeSettings";
import { askRestoreFiles, messageText, restoreCheckpoint } from "./checkpoints";
import { PromptQueue, untilIdle, untilStatus } from "./queue";
import { openLocation } from "./openLocation";
import { PromptAttachments, type PromptTarget } from "./attachments";
import { PendingSwitch } from "./pendingSwitch";
import { promptSigningIn } from "./signIn";
import type { EditorContextTracker } from "./editorContext";
import { activeSessionTarget, type ChatTarget } from "./target";

export class ChatController implements vscode.Disposable {
  private post: ((message: HostToWebview) => void) | undefined;
  private agents: protocol.AgentSummary[] = [];
  private selectedAgent: string | undefined;
  private includeContext = readSettings().includeActiveFile;
  private readonly disposables: vscode.Disposable[] = [];
  /** A session on its way into this chat: prompts sent meanwhile wait for it. */
  readonly pending = new PendingSwitch();
  private readonly turnEmitter = new vscode.EventEmitter<{ sessionId: string; result?: protocol.PromptResult; error?: unknown }>();
  /** Fires when a turn started from the chat ends (for tests and the status bar). */
  readonly onDidFinishTurn = this.turnEmitter.event;
  private readonly focusEmitter = new vscode.EventEmitter<void>();
  /** Fires when the user focuses or clicks into this chat's webview. */
  readonly onDidFocus = this.focusEmitter.event;
  /** What the user attached to the next prompt (chips under the input). */
  /** Prompts typed while a turn runs, waiting their turn on the server. */
  readonly queue = new PromptQueue((sessionId, blocks, token) => this.store.prompt(sessionId, blocks, { queue: true, token }));
  readonly attachments = new PromptAttachments(
    (message) => this.send(message),
    () => this.promptTarget(),
    () => this.editors.visibleEditor(),
  );

  constructor(
    private readonly store: SessionStore,
    private readonly permissions: PermissionBroker,
    private readonly diffs: DiffDocuments,
    private readonly output: vscode.LogOutputChannel,
    private readonly editors: EditorContextTracker,
    /** Which session this chat shows: the active one (the side bar), or its own (a tab). */
    readonly target: ChatTarget = activeSessionTarget(store),
  ) {
    this.disposables.push(
      store.onDidChange((event) => {
        const active = this.target.sessionId;
        switch (event.kind) {
          case "replace":
            if (event.sessionId === active) {
              this.sendSession();
            }
            break;
          case "active":
            if (!this.target.pinned && event.sessionId === active) {
              this.sendSession();
            }
            break;
          case "removed":
            if (this.target.pinned && event.sessionId === active) {
              this.sendSession(); // its transcript stays, marked closed
            }
            break;
          case "update":
            if (event.sessionId === active) {
              this.send({ type: "update", params: event.params });
            }
            break;
          case "status":
            this.queue.onStatus(event.sessionId, event.params.status);
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
      permissions.onDidAdd((permission) => {
        if (this.showsPermission(permission)) {
          this.send({ type: "permission", permission: this.labelled(permission) });
        }
      }),
      permissions.onDidResolve(({ permission }) => this.send({ type: "permissionDone", requestId: permission.requestId })),
      editors.onDidChange((context) => this.send({ type: "context", context })),
      this.turnEmitter,
      this.focusEmitter,
      this.attachments,
      this.queue,
      this.queue.onDidChange(() => this.sendQueue()),
    );
  }

  /** Connect a webview (null: it went away). Sends it the whole state. */
  attach(post: ((message: HostToWebview) => void) | undefined): void {
    this.post = post;
  }

  private send(message: HostToWebview): void {
    this.post?.(message);
  }

  /** The session this chat shows. */
  session(): ChatSession | null {
    return this.target.session();
  }

  /** Send the chat its session again (a chat tab's, once restored). */
  sendSession(): void {
    const session = this.session();
    this.send({ type: "session", session, follow: this.store.isFollowing(session?.sessionId ?? null) });
    this.sendQueue();
  }

  /** The prompts of this chat's session still waiting their turn, listed above the input. */
  private sendQueue(): void {
    const sessionId = this.target.sessionId;
    const items = sessionId ? this.queue.waiting(sessionId).map(({ id, text }) => ({ id, text })) : [];
    this.send({ type: "queue", items });
  }

  /** Edit (back into the input), remove, or send now one of the prompts waiting. Sending now
   * cancels the running turn, which withdraws every queued prompt: the others follow it. */
  async queued(action: "edit" | "remove" | "sendNow", id: number): Promise<void> {
    if (action !== "sendNow") {
      const taken = this.queue.remove(id);
      if (taken && action === "edit") {
        this.focusInput(taken.text);
      }
      return;
    }
    const session = this.requireSession();
    const waiting = this.queue.takeAll(session.sessionId);
    const first = waiting.find((prompt) => prompt.id === id);
    if (!first) {
      return;
    }
    const sessionId = session.sessionId;
    await this.store.cancel(sessionId);
    await untilIdle(this.store, sessionId);
    const sent = this.store.prompt(sessionId, first.blocks);
    // the others wait behind it once its turn runs (or is over): queued sooner, they could go first
    await Promise.race([sent.catch(() => undefined), untilStatus(this.store, sessionId, (status) => status !== "idle")]);
    for (const prompt of waiting.filter((p) => p !== first)) {
      void this.queue.add(sessionId, prompt.text, prompt.blocks).catch((error) => this.reportError(error));
    }
    this.turnEmitter.fire({ sessionId, result: await sent });
  }

  /** The side bar shows every session's prompts; a pinned chat only its own session's. */
  private showsPermission(permission: PendingPermission): boolean {
    return !this.target.pinned || permission.sessionId === this.target.sessionId;
  }

  /** Show another session here: the side bar makes it active, a pinned chat pins it. */
  private show(sessionId: string): void {
    if (this.target.sessionId === sessionId) {
      return;
    }
    this.target.show(sessionId);
    if (this.target.pinned) {
      this.sendSession();
    }
  }

  /** A prompt with its session's name: it shows in the chat whichever session is there. */
  private labelled(permission: PendingPermission): PendingPermission {
    const session = this.store.get(permission.sessionId);
    return session ? { ...permission, sessionLabel: sessionLabel(session) } : permission;
  }

  // -- context ----------------------------------------------------------------------------------

  context(): PromptContext {
    return this.editors.context();
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
        await this.switchTo(() => this.store.openSession(message, !this.target.pinned));
        break;
      case "switchSession":
        this.show(message.sessionId);
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
        const call = this.session()?.toolCalls[message.toolCallId];
        if (call) {
          await this.diffs.open(call, message.index);
        }
        break;
      }
      case "openLocation":
        await openLocation(message.path, message.line ?? null, this.session()?.cwd);
        break;
      case "selectAgent":
        this.selectedAgent = message.agent;
        break;
      case "includeContext":
        this.includeContext = message.enabled;
        break;
      case "focused":
        this.focusEmitter.fire();
        break;
      case "restoreCheckpoint":
        await restoreCheckpoint(this.store, this.requireSession(), message.messageIndex);
        break;
      case "editResend":
        await this.editResend(message.messageIndex);
        break;
      case "queued":
        await this.queued(message.action, message.id);
        break;
      default:
        await this.attachments.handle(message);
    }
  }

  private async sendInit(): Promise<void> {
    const session = this.session();
    this.send({
      type: "init",
      agents: this.agents,
      defaultAgent: this.defaultAgentName(),
      session,
      sessions: [],
      permissions: this.permissions
        .list()
        .filter((p) => this.showsPermission(p))
        .map((p) => this.labelled(p)),
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
    const session = this.session();
    if (session && session.status !== "closed" && session.status !== "failed") {
      return { agent: session.agent, caps: session.promptCapabilities };
    }
    const name = this.defaultAgentName();
    return { agent: name ?? "the agent", caps: this.agents.find((a) => a.name === name)?.promptCapabilities };
  }

  private requireSession(): ChatSession {
    const session = this.session();
    if (!session) {
      throw new Error("No ACP session: start one with \"ACP: New Session\".");
    }
    return session;
  }

  // -- actions (also used by commands) ----------------------------------------------------------

  /** A new session, shown in this chat: in the side bar it becomes the active one; a tab
   * shows it alone and the side bar stays on its session. */
  async newSession(agent?: string): Promise<ChatSession> {
    const name = agent ?? this.selectedAgent ?? (readSettings().defaultAgent || undefined);
    return this.switchTo(() => this.store.newSession(name, !this.target.pinned));
  }

  /** Show the session `open` gives (see PendingSwitch). */
  private switchTo(open: () => Promise<ChatSession>): Promise<ChatSession> {
    return this.pending.switchTo(open, (session) => this.show(session.sessionId));
  }

  /** A fork of this chat's session, shown in this chat (as a new session is). */
  async fork(): Promise<ChatSession> {
    const session = this.session();
    if (!session) {
      throw new Error("No session in the chat to fork.");
    }
    return this.switchTo(() => this.store.forkSession(session.sessionId, !this.target.pinned));
  }

  /** "Edit and resend": this chat moves to a new session rewound to before that user message
   * (the files too, if the user says so), with the message's text in the input. */
  async editResend(messageIndex: number): Promise<ChatSession | undefined> {
    const session = this.requireSession();
    const restoreFiles = await askRestoreFiles(this.store, session, messageIndex);
    if (restoreFiles === undefined) {
      return undefined;
    }
    const params = { sessionId: session.sessionId, messageIndex, restoreFiles };
    const rewound = await this.switchTo(() => this.store.rewindSession(params, !this.target.pinned));
    this.focusInput(messageText(session, messageIndex));
    return rewound;
  }

  /** Send a prompt in this chat's session (starting one if needed); resolves when the turn ends. */
  async sendPrompt(text: string): Promise<protocol.PromptResult | undefined> {
    let session: ChatSession;
    try {
      session = await this.sessionForPrompt();
      // Images the agent does not take stop the prompt, with the reason: never dropped.
      const refusal = sendRefusal(session.agent, session.promptCapabilities, this.attachments.items());
      if (refusal) {
        throw new Error(refusal);
      }
    } catch (error) {
      this.focusInput(text); // the webview cleared its input: give the text back
      throw error;
    }
    const attached = this.attachments.take();
    const blocks = buildPrompt(text, this.editors.editorContext(), this.includeContext, attached.items.map((a) => a.block));
    const sessionId = session.sessionId;
    if (isBusy(session.status)) {
      // typed while a turn runs: it waits its turn on the server, listed above the input
      const result = await this.queue.add(sessionId, text, blocks);
      this.turnEmitter.fire({ sessionId, result });
      return result;
    }
    try {
      const sent = await promptSigningIn(this.store, session, blocks);
      if ("declined" in sent) {
        attached.restore();
        this.turnEmitter.fire({ sessionId, error: sent.declined });
        return undefined;
      }
      this.turnEmitter.fire({ sessionId, result: sent.result });
      return sent.result;
    } catch (error) {
      attached.restore();
      this.turnEmitter.fire({ sessionId, error });
      throw error;
    }
  }

  /** The session a prompt goes to, once a switch under way is done: resumed or started if need be. */
  private async sessionForPrompt(): Promise<ChatSession> {
    if (!(await this.pending.settled())) {
      throw new Error("The prompt was not sent: the session it was for did not start.");
    }
    let session = this.session();
    if (session?.status === "stored") {
      // A tab restored after the server restarted: its session resumes under the same id.
      const { agent, sessionId } = session;
      session = await this.switchTo(() => this.store.openSession({ agent, sessionId, live: false }, !this.target.pinned));
    }
    if (!session || session.status === "closed" || session.status === "failed") {
      session = await this.newSession();
    }
    return session;
  }

  async cancel(): Promise<void> {
    const session = this.session();
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

  /** Show the chat and put `text` in its input. */
  focusInput(text?: string): void {
    this.send({ type: "focusInput", text });
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
