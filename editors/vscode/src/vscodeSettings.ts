// Reads the `acpLsp.*` settings from VS Code into the pure `Settings` shape.

import * as os from "node:os";
import * as vscode from "vscode";
import { DEFAULT_COMMAND, SECTION, type ExpandContext, type Settings } from "./settings";

export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const inspected = config.inspect<string>("server.command");
  const explicit = [
    inspected?.globalValue,
    inspected?.workspaceValue,
    inspected?.workspaceFolderValue,
  ].some((v) => typeof v === "string" && v.trim() !== "" && v.trim() !== DEFAULT_COMMAND);
  const rules = config.get<unknown[]>("permissions.rules", []);
  return {
    serverCommand: config.get<string>("server.command", DEFAULT_COMMAND),
    serverCommandExplicit: explicit,
    serverArgs: config.get<string[]>("server.args", []).map(String),
    serverEnv: config.get<Record<string, string>>("server.env", {}),
    agents: config.get<Record<string, unknown>>("agents", {}),
    defaultAgent: config.get<string>("defaultAgent", ""),
    followAlong: config.get<boolean>("followAlong", true),
    permissionRules: Array.isArray(rules) ? rules : [],
    allowOutsideWorkspace: config.get<boolean>("fs.allowOutsideWorkspace", false),
    includeActiveFile: config.get<boolean>("chat.includeActiveFile", true),
    notifyWhenAway: config.get<boolean>("notifications.whenAway", true),
  };
}

export function expandContext(): ExpandContext {
  return {
    workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
    userHome: os.homedir(),
    env: process.env,
  };
}
