// The extension host's sessions: snapshots from the server kept current by acp/* notifications
// (through the same reducer the webview runs), and typed wrappers for the acp/* requests.

import * as vscode from "vscode";
import { WorkDoneProgress, type LanguageClient } from "vscode-languageclient/node";
import {
  applySessionUpdate,
  applyStatus,
  applyTerminalOutput,
  fromSnapshot,
  type ChangeKey,
  type ChatSession,
} from "./model/sessionModel";
import { isOpen } from "./model/sessionList";
import * as protocol from "./protocol";
import type { AcpServer } from "./server";

/** Notifications kept for a session whose snapshot has not arrived yet (acp/loadSession). */
const EARLY_LIMIT = 1000;

export type SessionEvent =
  | { kind: "replace"; sessionId: string }
  | { kind: "update"; sessionId: string; params: protocol.SessionUpdateParams; changed: Set<ChangeKey> }
  | { kind: "status"; sessionId: string; params: protocol.SessionStatusParams }
  | { kind: "terminal"; sessionId: string; params: protocol.TerminalOutputParams }
  | { kind: "active"; sessionId: string | null }
  | { kind: "removed"; sessionId: string };

export interface ProgressReport {
  sessionId: string;
  kind: "begin" | "report" | "end";
  title?: string;
  message?: string;
  percentage?: number;
}

export class SessionStore implements vscode.Disposable {
  private readonly sessions = new Map<string, ChatSession>();
  private readonly early = new Map<string, protocol.SessionUpdateParams[]>();
  private readonly follow = new Map<string, boolean>();
  private active: string | null = null;
  private tokens = 0;
  private readonly emitter = new vscode.EventEmitter<SessionEvent>();
  private readonly progressEmitter = new vscode.EventEmitter<ProgressReport>();
  readonly onDidChange = this.emitter.event;
  /** `$/progress` of running turns (the status bar shows it). */
  readonly onDidProgress = this.progressEmitter.event;

  constructor(
    private readonly server: AcpServer,
    private readonly defaultFollow: () => boolean,
  ) {}

  get activeId(): string | null {
    return this.active;
  }

  get activeSession(): ChatSession | null {
    return this.active === null ? null : (this.sessions.get(this.active) ?? null);
  }

  get(sessionId: string): ChatSession | undefined {
    return this.sessions.get(sessionId);
  }

  all(): ChatSession[] {
    return [...this.sessions.values()];
  }

  /** The sessions still open here, most recently active first. */
  openSessions(): ChatSession[] {
    return this.all().filter(isOpen).reverse();
  }

  /** The open sessions besides this one (the status bar counts the busy ones). */
  others(sessionId: string | null = this.active): ChatSession[] {
    return this.openSessions().filter((s) => s.sessionId !== sessionId);
  }

  isFollowing(sessionId: string | null): boolean {
    return sessionId === null ? this.defaultFollow() : (this.follow.get(sessionId) ?? this.defaultFollow());
  }

  setActive(sessionId: string | null): void {
    if (sessionId !== null && !this.sessions.has(sessionId)) {
      return;
    }
    if (sessionId !== null) {
      // Re-inserted last: the map's order is the order of use, which the switcher lists.
      const session = this.sessions.get(sessionId) as ChatSession;
      this.sessions.delete(sessionId);
      this.sessions.set(sessionId, session);
    }
    this.active = sessionId;
    this.emitter.fire({ kind: "active", sessionId });
  }

  /** Forget a closed or deleted session; the chat moves on to the last one used before it. */
  private drop(sessionId: string): void {
    if (!this.sessions.delete(sessionId)) {
      return;
    }
    this.early.delete(sessionId);
    this.follow.delete(sessionId);
    this.emitter.fire({ kind: "removed", sessionId });
    if (this.active === sessionId) {
      this.setActive(this.openSessions()[0]?.sessionId ?? null);
    }
  }

  /** The server was restarted: it knows none of our sessions any more. */
  forgetAll(): void {
    for (const session of this.sessions.values()) {
      if (session.status !== "closed") {
        applyStatus(session, { sessionId: session.sessionId, status: "closed" });
        this.emitter.fire({
          kind: "status",
          sessionId: session.sessionId,
          params: { sessionId: session.sessionId, status: "closed" },
        });
      }
    }
    this.early.clear();
  }

  // -- notifications ------------------------------------------------------------------------

  handleUpdate(params: protocol.SessionUpdateParams): void {
    const session = this.sessions.get(params.sessionId);
    if (!session) {
      const queue = this.early.get(params.sessionId) ?? [];
      if (queue.length < EARLY_LIMIT) {
        queue.push(params);
      }
      this.early.set(params.sessionId, queue);
      return;
    }
    const changed = applySessionUpdate(session, params);
    if (changed) {
      this.emitter.fire({ kind: "update", sessionId: session.sessionId, params, changed });
    }
  }

  handleStatus(params: protocol.SessionStatusParams): void {
    const session = this.sessions.get(params.sessionId);
    if (session) {
      applyStatus(session, params);
      this.emitter.fire({ kind: "status", sessionId: params.sessionId, params });
    }
  }

  handleTerminal(params: protocol.TerminalOutputParams): void {
    const session = this.sessions.get(params.sessionId);
    if (session) {
      applyTerminalOutput(session, params);
      this.emitter.fire({ kind: "terminal", sessionId: params.sessionId, params });
    }
  }

  /** Take a snapshot as the session's state, then what arrived after it. */
  adopt(snapshot: protocol.SessionSnapshot, makeActive = true): ChatSession {
    const session = fromSnapshot(snapshot);
    this.sessions.set(session.sessionId, session);
    const queued = this.early.get(session.sessionId) ?? [];
    this.early.delete(session.sessionId);
    for (const params of queued) {
      applySessionUpdate(session, params);
    }
    this.emitter.fire({ kind: "replace", sessionId: session.sessionId });
    if (makeActive) {
      this.setActive(session.sessionId);
    }
    return session;
  }

  // -- requests -----------------------------------------------------------------------------

  private async client(): Promise<LanguageClient> {
    return this.server.ready();
  }

  async listAgents(includeRegistry = false): Promise<protocol.AgentSummary[]> {
    const result = await (await this.client()).sendRequest(protocol.listAgents, includeRegistry ? { includeRegistry } : {});
    return result.agents;
  }

  /** acp/forkSession: a new session starting from a copy of this one's conversation. */
  async forkSession(sessionId: string, makeActive = true): Promise<ChatSession> {
    return this.adopt(await (await this.client()).sendRequest(protocol.forkSession, { sessionId }), makeActive);
  }

  async restoreCheckpoint(params: protocol.RestoreCheckpointParams): Promise<protocol.RestoreCheckpointResult> {
    return (await this.client()).sendRequest(protocol.restoreCheckpoint, params);
  }

  async rewindSession(params: protocol.RewindSessionParams, makeActive = true): Promise<ChatSession> {
    return this.adopt(await (await this.client()).sendRequest(protocol.rewindSession, params), makeActive);
  }

  async logout(agent: string): Promise<void> {
    await (await this.client()).sendRequest(protocol.logout, { agent });
  }

  async installAgent(agent: string): Promise<protocol.InstallAgentResult> {
    return (await this.client()).sendRequest(protocol.installAgent, { agent });
  }

  async updateAgent(agent: string): Promise<protocol.UpdateAgentResult> {
    return (await this.client()).sendRequest(protocol.updateAgent, { agent });
  }

  /** A new session; `makeActive` false for one started in a chat tab (the side bar stays). */
  async newSession(agent?: string, makeActive = true): Promise<ChatSession> {
    const params: protocol.NewSessionParams = {};
    if (agent) {
      params.agent = agent;
    }
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (cwd) {
      params.cwd = cwd;
    }
    const snapshot = await (await this.client()).sendRequest(protocol.newSession, params);
    const session = this.adopt(snapshot, makeActive);
    if (!this.defaultFollow()) {
      await this.setFollow(session.sessionId, false).catch(() => undefined);
    }
    return session;
  }

  async listSessions(params: protocol.ListSessionsParams = {}): Promise<protocol.ListSessionsResult> {
    return (await this.client()).sendRequest(protocol.listSessions, params);
  }

  /** Open a listed session: a live one by acp/getSession, others (stored ones too) by
   * acp/loadSession, which resumes them under the same id. */
  async openSession(info: { agent: string; sessionId: string; live: boolean }, makeActive = true): Promise<ChatSession> {
    const client = await this.client();
    const snapshot = info.live
      ? await client.sendRequest(protocol.getSession, { sessionId: info.sessionId })
      : await client.sendRequest(protocol.loadSession, { agent: info.agent, sessionId: info.sessionId });
    return this.adopt(snapshot, makeActive);
  }

  /** The session a chat tab restored after a window reload shows: the server's live one (kept
   * here, not made active), else its stored snapshot (status "stored", read-only, not kept). */
  async reopen(sessionId: string): Promise<ChatSession> {
    const known = this.sessions.get(sessionId);
    if (known) {
      return known;
    }
    const snapshot = await (await this.client()).sendRequest(protocol.getSession, { sessionId });
    return isOpen(snapshot) ? this.adopt(snapshot, false) : fromSnapshot(snapshot);
  }

  async renameSession(sessionId: string, title: string): Promise<void> {
    await (await this.client()).sendRequest(protocol.renameSession, { sessionId, title });
  }

  /** Delete a session's stored history (and the agent's copy where it can); an open session
   * is closed first, so an agent that cannot delete sessions does not keep it running. */
  async deleteSession(sessionId: string, agent?: string): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (session && isOpen(session)) {
      await this.closeSession(sessionId);
    }
    await (await this.client()).sendRequest(protocol.deleteSession, { sessionId, agent: agent ?? session?.agent });
    this.drop(sessionId);
  }

  async exportSession(sessionId: string): Promise<string> {
    return (await (await this.client()).sendRequest(protocol.exportSession, { sessionId, format: "markdown" })).text;
  }

  /** Run one turn; resolves with the stop reason once every update of it has arrived. With
   * `queue`, a turn already running is waited for; cancelling `token` withdraws the prompt. */
  async prompt(
    sessionId: string,
    prompt: string | protocol.ContentBlock[],
    opts: { queue?: boolean; token?: vscode.CancellationToken } = {},
  ): Promise<protocol.PromptResult> {
    const client = await this.client();
    const token = `acp-lsp-vscode-${process.pid}-${++this.tokens}`;
    const progress = client.onProgress(WorkDoneProgress.type, token, (value) => {
      this.progressEmitter.fire({
        sessionId,
        kind: value.kind,
        title: value.kind === "begin" ? value.title : undefined,
        message: value.kind === "end" ? value.message : value.message,
        percentage: value.kind === "end" ? undefined : value.percentage,
      });
    });
    try {
      const params: protocol.PromptParams = { sessionId, prompt, workDoneToken: token };
      if (opts.queue) {
        params.queue = true;
      }
      return await client.sendRequest(protocol.prompt, params, opts.token);
    } finally {
      progress.dispose();
      this.progressEmitter.fire({ sessionId, kind: "end" });
    }
  }

  async cancel(sessionId: string): Promise<void> {
    await (await this.client()).sendRequest(protocol.cancel, { sessionId });
  }

  async setMode(sessionId: string, modeId: string): Promise<void> {
    await (await this.client()).sendRequest(protocol.setMode, { sessionId, modeId });
  }

  async setConfigOption(sessionId: string, configId: string, value: string | boolean): Promise<void> {
    const result = await (await this.client()).sendRequest(protocol.setConfigOption, {
      sessionId,
      configId,
      value,
    });
    const session = this.sessions.get(sessionId);
    if (session && Array.isArray(result.configOptions)) {
      session.configOptions = result.configOptions;
      this.emitter.fire({ kind: "replace", sessionId });
    }
  }

  async setFollow(sessionId: string, enabled: boolean): Promise<boolean> {
    const result = await (await this.client()).sendRequest(protocol.setFollow, { sessionId, enabled });
    this.follow.set(sessionId, result.enabled);
    return result.enabled;
  }

  async review(params: protocol.ReviewEditParams): Promise<protocol.ReviewEditResult> {
    return (await this.client()).sendRequest(protocol.reviewEdit, params);
  }

  async closeSession(sessionId: string): Promise<void> {
    await (await this.client()).sendRequest(protocol.closeSession, { sessionId });
    this.drop(sessionId);
  }

  async restartAgent(agent: string): Promise<void> {
    await (await this.client()).sendRequest(protocol.restartAgent, { agent });
  }

  async authenticate(agent: string, methodId: string): Promise<protocol.AuthenticateResult> {
    return (await this.client()).sendRequest(protocol.authenticate, { agent, methodId });
  }

  dispose(): void {
    this.emitter.dispose();
    this.progressEmitter.dispose();
  }
}
