// Signing in to an agent that answered a prompt with "auth required": a terminal login, an
// acp/authenticate method, or the env setting for an API key (secrets never pass through acp-lsp).

import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient/node";
import * as protocol from "../protocol";
import type { SessionStore } from "../sessions";

/** acp/prompt; when the agent asks for a sign-in first, offer it and send the same prompt once
 * more. Throws what the prompt threw; `declined` (the agent's error) when the user did not sign in. */
export async function promptSigningIn(
  store: SessionStore,
  session: { sessionId: string; agent: string },
  blocks: protocol.ContentBlock[],
): Promise<{ result: protocol.PromptResult } | { declined: ResponseError<unknown> }> {
  try {
    return { result: await store.prompt(session.sessionId, blocks) };
  } catch (error) {
    if (!(error instanceof ResponseError) || error.code !== protocol.ErrorCodes.authRequired) {
      throw error;
    }
    if (!(await offerAuthentication(store, session.agent, error.data))) {
      return { declined: error };
    }
    return { result: await store.prompt(session.sessionId, blocks) };
  }
}

/** Ask the user to sign in; true when done here (the prompt can be retried at once). */
export async function offerAuthentication(store: SessionStore, agent: string, data: unknown): Promise<boolean> {
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
    runLogin(agent, info.loginTerminal);
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
  const result = await store.authenticate(agent, picked.id);
  if (result.terminal) {
    runLogin(agent, result.terminal);
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
function runLogin(agent: string, login: { command: string; args?: string[]; env?: Record<string, string> }): void {
  const terminal = vscode.window.createTerminal({
    name: `Sign in: ${agent}`,
    shellPath: login.command,
    shellArgs: login.args ?? [],
    env: login.env,
  });
  terminal.show();
  void vscode.window.showInformationMessage("ACP: finish signing in in the terminal, then send the prompt again.");
}
