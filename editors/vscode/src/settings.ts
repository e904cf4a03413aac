// The extension's settings (`acpLsp.*`) and what they become: the server command line and the
// server's configuration (`initializationOptions` / `workspace/didChangeConfiguration`,
// section `acp`, DESIGN §2). The mapping functions are pure so they are unit-tested.

import * as path from "node:path";

export const SECTION = "acpLsp";
export const DEFAULT_COMMAND = "acp-lsp";

export interface Settings {
  serverCommand: string;
  /** Whether `server.command` was set by the user (any scope), not left at its default. */
  serverCommandExplicit: boolean;
  serverArgs: string[];
  serverEnv: Record<string, string>;
  agents: Record<string, unknown>;
  defaultAgent: string;
  followAlong: boolean;
  permissionRules: unknown[];
  allowOutsideWorkspace: boolean;
  includeActiveFile: boolean;
  /** Tell a user whose window is not focused that a turn ended or waits for an answer. */
  notifyWhenAway: boolean;
}

/** The `acp` configuration object the server takes. Unset keys are left out. */
export function serverConfiguration(settings: Settings): Record<string, unknown> {
  const config: Record<string, unknown> = {
    followAlong: settings.followAlong,
    fs: { allowOutsideWorkspace: settings.allowOutsideWorkspace },
  };
  if (Object.keys(settings.agents).length > 0) {
    config.agents = settings.agents;
  }
  if (settings.defaultAgent.trim() !== "") {
    config.defaultAgent = settings.defaultAgent.trim();
  }
  if (settings.permissionRules.length > 0) {
    config.permissions = { rules: settings.permissionRules };
  }
  return config;
}

export interface ServerCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export interface ExpandContext {
  workspaceFolder?: string;
  userHome: string;
  env: Record<string, string | undefined>;
}

/** Expand `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~/`. */
export function expandVariables(value: string, ctx: ExpandContext): string {
  let out = value.replace(/\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g, (whole, name: string, envName?: string) => {
    if (envName !== undefined) {
      return ctx.env[envName] ?? "";
    }
    if (name === "userHome") {
      return ctx.userHome;
    }
    return ctx.workspaceFolder ?? whole;
  });
  if (out.startsWith("~/")) {
    out = path.join(ctx.userHome, out.slice(2));
  }
  return out;
}

/**
 * The server's command line. An explicit `acpLsp.server.command` wins; otherwise
 * `ACP_LSP_PYTHON` (a Python with acp_lsp installed, for development and tests) runs
 * `python -m acp_lsp`; otherwise `acp-lsp` from PATH.
 */
export function resolveServerCommand(settings: Settings, ctx: ExpandContext): ServerCommand {
  const args = settings.serverArgs.map((a) => expandVariables(a, ctx));
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(settings.serverEnv)) {
    env[key] = expandVariables(String(value), ctx);
  }
  const python = ctx.env.ACP_LSP_PYTHON;
  if (!settings.serverCommandExplicit && python) {
    return { command: python, args: ["-m", "acp_lsp", ...args], env };
  }
  const command = expandVariables(settings.serverCommand.trim() || DEFAULT_COMMAND, ctx);
  return { command, args, env };
}

/** Whether a change of these settings needs a server restart (vs. a configuration push). */
export function needsRestart(before: Settings, after: Settings): boolean {
  return (
    before.serverCommand !== after.serverCommand ||
    before.serverCommandExplicit !== after.serverCommandExplicit ||
    JSON.stringify(before.serverArgs) !== JSON.stringify(after.serverArgs) ||
    JSON.stringify(before.serverEnv) !== JSON.stringify(after.serverEnv)
  );
}
