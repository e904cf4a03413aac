// The language server's lifecycle: start, stop, restart (command and on settings change),
// the output channel, the experimental capability, and the acp/* handlers wired on every
// new client.

import { execFile } from "node:child_process";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  ShowMessageNotification,
  State,
  type ShowMessageParams,
  type ErrorHandler,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
} from "vscode-languageclient/node";
import { serverCommand, warnOnVersionMismatch, type ExtensionPlace } from "./bootstrap";
import * as protocol from "./protocol";
import { needsRestart, resolveServerCommand, serverConfiguration, type Settings } from "./settings";
import { expandContext, readSettings } from "./vscodeSettings";

export const CLIENT_ID = "acpLsp";
const RESTART_DEBOUNCE_MS = 500;

/** The acp/* messages the server sends, handled by the rest of the extension. */
export interface ServerHandlers {
  sessionUpdate(params: protocol.SessionUpdateParams): void;
  sessionStatus(params: protocol.SessionStatusParams): void;
  terminalOutput(params: protocol.TerminalOutputParams): void;
  requestPermission(
    params: protocol.RequestPermissionParams,
    token: vscode.CancellationToken,
  ): Promise<protocol.RequestPermissionResult>;
  saveDocument(params: protocol.SaveDocumentParams): Promise<protocol.SaveDocumentResult>;
  elicitation(params: protocol.ElicitationParams): Promise<protocol.ElicitationResult>;
  editorTool(params: protocol.EditorToolParams, token: vscode.CancellationToken): Promise<protocol.EditorToolResult>;
  elicitationComplete(params: protocol.ElicitationCompleteParams): void;
  documentsSynced(params: protocol.DocumentsSyncedParams): void;
  /** window/showMessage (taken over from the client, which would show each as it is). */
  showMessage(params: ShowMessageParams): void;
}

/** Declares `capabilities.experimental.acp` in `initialize` (DESIGN §2). */
class AcpCapabilityFeature implements StaticFeature {
  fillClientCapabilities(capabilities: { experimental?: unknown }): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    experimental.acp = { ...protocol.CLIENT_CAPABILITIES };
    capabilities.experimental = experimental;
  }
  initialize(): void {}
  getState(): { kind: "static" } {
    return { kind: "static" };
  }
  clear(): void {}
}

export class AcpServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private settings: Settings;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly startEmitter = new vscode.EventEmitter<LanguageClient>();
  private readonly stopEmitter = new vscode.EventEmitter<void>();
  /** Fires with each newly started client (after a restart, sessions must be fetched anew). */
  readonly onDidStart = this.startEmitter.event;
  readonly onDidStop = this.stopEmitter.event;
  private readonly followEmitter = new vscode.EventEmitter<{ uri: string; line: number; shown: boolean }>();
  /** Fires after each follow-along jump the server asked for (0-based line). */
  readonly onDidFollow = this.followEmitter.event;

  constructor(
    readonly output: vscode.LogOutputChannel,
    private readonly handlers: ServerHandlers,
    /** Where the server that comes with the extension is installed (bootstrap.ts). */
    private readonly place?: ExtensionPlace,
  ) {
    this.settings = readSettings();
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration("acpLsp")) {
          this.onSettingsChanged();
        }
      }),
    );
  }

  get current(): LanguageClient | undefined {
    return this.client?.isRunning() ? this.client : undefined;
  }

  /** The running client, starting it if needed. */
  async ready(): Promise<LanguageClient> {
    const current = this.current;
    if (current) {
      return current;
    }
    return this.start();
  }

  async start(): Promise<LanguageClient> {
    if (this.starting) {
      return this.starting;
    }
    this.starting = this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** `acp-lsp doctor` with this extension's server command, its table in the output channel;
   * `agents` limits the agents it starts ([]: every configured one). */
  async doctor(agents: string[] = []): Promise<{ code: number | null; output: string }> {
    const cmd = await serverCommand(readSettings(), this.place, this.output).catch(() =>
      resolveServerCommand(readSettings(), expandContext()),
    );
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const args = [
      ...cmd.args,
      "doctor",
      ...(cwd ? ["--workspace", cwd] : []),
      // the agents defined only in acpLsp.agents: on stdin, as they may carry env values
      "--editor-settings",
      "-",
      ...agents.flatMap((a) => ["--agent", a]),
    ];
    this.output.info(`running: ${cmd.command} ${args.join(" ")}`);
    return new Promise((resolve) => {
      const child = execFile(
        cmd.command,
        args,
        { cwd, env: { ...process.env, ...cmd.env }, timeout: 300_000 },
        (error, stdout, stderr) => {
          const output = `${stdout}${stderr ? `\n${stderr}` : ""}`;
          this.output.appendLine(output);
          const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
          resolve({ code, output });
        },
      );
      child.stdin?.end(JSON.stringify(serverConfiguration(readSettings())));
    });
  }

  private async doStart(): Promise<LanguageClient> {
    await this.stop();
    const settings = readSettings();
    this.settings = settings;
    const cmd = await serverCommand(settings, this.place, this.output);
    this.output.info(`starting acp-lsp: ${cmd.command} ${cmd.args.join(" ")}`);
    const serverOptions: ServerOptions = {
      command: cmd.command,
      args: cmd.args,
      // No `transport`: TransportKind.stdio would append `--stdio`, which acp-lsp does not take.
      options: {
        cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
        env: { ...process.env, ...cmd.env },
      },
    };
    const clientOptions: LanguageClientOptions = {
      // Every file is synchronised: agents read unsaved text and edits merge over it.
      documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
      outputChannel: this.output,
      initializationOptions: serverConfiguration(settings),
      connectionOptions: { maxRestartCount: 3 },
      errorHandler: this.errorHandler(),
      middleware: {
        window: {
          // Follow-along (window/showDocument) is shown by the client itself; this only notes it.
          showDocument: async (params, token, next) => {
            const result = await next(params, token);
            const shown = "success" in result && result.success;
            const line = params.selection?.start.line ?? 0;
            this.output.info(`follow: ${params.uri}:${line + 1}${shown ? "" : " (not shown)"}`);
            this.followEmitter.fire({ uri: params.uri, line, shown });
            return result;
          },
        },
      },
    };
    const client = new LanguageClient(CLIENT_ID, "ACP Agents (acp-lsp)", serverOptions, clientOptions);
    client.registerFeature(new AcpCapabilityFeature());
    this.registerHandlers(client);
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      this.client = undefined;
      const message = error instanceof Error ? error.message : String(error);
      this.output.error(`acp-lsp failed to start: ${message}`);
      void vscode.window
        .showErrorMessage(
          `ACP: cannot start the acp-lsp server (${cmd.command}): ${message}. Install it (pip install acp-lsp) or set "acpLsp.server.command".`,
          "Open Settings",
          "Show Output",
        )
        .then((choice) => {
          if (choice === "Open Settings") {
            void vscode.commands.executeCommand("workbench.action.openSettings", "acpLsp.server");
          } else if (choice === "Show Output") {
            this.output.show();
          }
        });
      throw error;
    }
    warnOnVersionMismatch(client, this.place, cmd.command, this.output);
    // Settings changed while the server started went nowhere (no client to tell yet).
    const now = readSettings();
    if (JSON.stringify(serverConfiguration(now)) !== JSON.stringify(clientOptions.initializationOptions)) {
      this.settings = now;
      void client.sendNotification("workspace/didChangeConfiguration", { settings: { acp: serverConfiguration(now) } });
    }
    return client;
  }

  private errorHandler(): ErrorHandler {
    let crashes = 0;
    return {
      error: () => ({ action: ErrorAction.Continue }),
      closed: () => {
        crashes++;
        if (crashes <= 3) {
          this.output.warn(`acp-lsp exited; restarting (${crashes}/3)`);
          return { action: CloseAction.Restart };
        }
        return {
          action: CloseAction.DoNotRestart,
          message: "The acp-lsp server exited 4 times. Run \"ACP: Restart Server\" after fixing it.",
        };
      },
    };
  }

  private registerHandlers(client: LanguageClient): void {
    const h = this.handlers;
    client.onNotification(protocol.sessionUpdate, (p) => h.sessionUpdate(p));
    client.onNotification(protocol.sessionStatus, (p) => h.sessionStatus(p));
    client.onNotification(protocol.terminalOutput, (p) => h.terminalOutput(p));
    client.onRequest(protocol.requestPermission, (p, token) => h.requestPermission(p, token));
    client.onRequest(protocol.saveDocument, (p) => h.saveDocument(p));
    client.onRequest(protocol.elicitation, (p) => h.elicitation(p));
    client.onRequest(protocol.editorTool, (p, token) => h.editorTool(p, token));
    client.onNotification(protocol.elicitationComplete, (p) => h.elicitationComplete(p));
    client.onNotification(protocol.documentsSynced, (p) => h.documentsSynced(p));
    // Registered before start, this replaces the client's own handler (added first).
    client.onNotification(ShowMessageNotification.type, (p) => h.showMessage(p));
    // Also after the client's own restart of a crashed server: sessions must be fetched anew.
    client.onDidChangeState((event) => {
      if (this.client !== client) {
        return;
      }
      if (event.newState === State.Running) {
        this.startEmitter.fire(client);
      } else if (event.newState === State.Stopped) {
        this.stopEmitter.fire();
      }
    });
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        if (client.isRunning()) {
          await client.stop(5000);
        }
      } catch (error) {
        this.output.warn(`stopping acp-lsp: ${String(error)}`);
      }
      await client.dispose(2000).catch(() => undefined);
      this.stopEmitter.fire();
    }
  }

  async restart(): Promise<LanguageClient> {
    this.output.info("restarting acp-lsp");
    return this.start();
  }

  private onSettingsChanged(): void {
    const next = readSettings();
    if (needsRestart(this.settings, next)) {
      clearTimeout(this.restartTimer);
      this.restartTimer = setTimeout(() => {
        void this.restart().catch(() => undefined);
      }, RESTART_DEBOUNCE_MS);
      return;
    }
    this.settings = next;
    const client = this.current;
    if (client) {
      void client.sendNotification("workspace/didChangeConfiguration", {
        settings: { acp: serverConfiguration(next) },
      });
    }
  }

  dispose(): void {
    clearTimeout(this.restartTimer);
    for (const d of this.disposables) {
      d.dispose();
    }
    this.startEmitter.dispose();
    this.stopEmitter.dispose();
    this.followEmitter.dispose();
  }
}
