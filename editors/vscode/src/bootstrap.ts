// Which acp-lsp the extension runs. A configured `acpLsp.server.command` (or ACP_LSP_PYTHON)
// wins; then an `acp-lsp` on PATH of exactly the extension's version; otherwise the server that
// comes with the extension (serverInstall.ts): `uv tool run` of the shipped wheel, or a private
// venv in global storage, installed once per extension version with progress and a message
// naming what is missing.

import * as path from "node:path";
import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import {
  InstallError,
  canRun,
  findOnPath,
  findPython,
  installVenv,
  parseVersion,
  run,
  shippedWheel,
  stamped,
  uvArgs,
  versionMismatch,
  writeStamp,
} from "./serverInstall";
import { commandLine, findTool, pythonSearch, venvExecutable } from "./serverLocations";
import { SECTION, resolveServerCommand, type ServerCommand, type Settings } from "./settings";
import { expandContext } from "./vscodeSettings";

/** What of the extension the bundled server needs (an ExtensionContext has it). */
export interface ExtensionPlace {
  extensionPath: string;
  globalStorageUri: vscode.Uri;
  extension: { packageJSON: { version?: string } };
}

export function extensionVersion(place: ExtensionPlace | undefined): string | undefined {
  return place?.extension.packageJSON.version;
}

/** The command line of the server to run; may install it first (with progress). Throws after
 * telling the user when it cannot. */
export async function serverCommand(
  settings: Settings,
  place: ExtensionPlace | undefined,
  output: vscode.LogOutputChannel,
): Promise<ServerCommand> {
  const ctx = expandContext();
  const configured = resolveServerCommand(settings, ctx);
  const version = extensionVersion(place);
  if (settings.serverCommandExplicit || ctx.env.ACP_LSP_PYTHON || place === undefined || version === undefined) {
    return configured;
  }
  const env = { ...process.env, ...configured.env };
  const onPath = await findOnPath(configured.command, env);
  if (onPath !== undefined) {
    const found = parseVersion((await run(onPath, ["--version"], { env, timeoutMs: 30_000 })).output);
    if (found === version) {
      return configured;
    }
    output.info(`${onPath} is acp-lsp ${found ?? "(unknown version)"}, not ${version}: using the server that comes with the extension`);
  }
  const wheel = await shippedWheel(place.extensionPath, version);
  if (wheel === undefined) {
    output.warn(`no acp-lsp ${version} wheel in ${path.join(place.extensionPath, "server")} (a development build): running ${configured.command}`);
    return configured;
  }
  const storage = place.globalStorageUri.fsPath;
  try {
    const uv = findTool("uv", process.platform, env, canRun);
    if (uv !== undefined) {
      const viaUv = await once(`uv ${version}`, () => prepareUv(uv, wheel, version, storage, env, output));
      if (viaUv) {
        return { command: uv, args: uvArgs(wheel, configured.args, true), env: configured.env };
      }
    }
    const exe = await once(`venv ${version}`, () => prepareVenv(wheel, version, path.join(storage, "server-venv"), env, output));
    return { command: exe, args: configured.args, env: configured.env };
  } catch (error) {
    reportInstallError(error, output);
    throw error;
  }
}

const pending = new Map<string, Promise<unknown>>();

/** One install at a time in this window: a start and ACP: Run Doctor may ask together. */
function once<T>(key: string, task: () => Promise<T>): Promise<T> {
  let running = pending.get(key) as Promise<T> | undefined;
  if (running === undefined) {
    running = task().finally(() => pending.delete(key));
    pending.set(key, running);
  }
  return running;
}

/** The first `uv tool run` of a version fetches the dependencies into uv's cache: done with
 * progress, checked by its `--version`; later starts check the cache has them (offline, quick)
 * and fetch again only when it does not. False (logged) when uv cannot run it: the venv is
 * tried next. */
async function prepareUv(
  uv: string,
  wheel: string,
  version: string,
  storage: string,
  env: NodeJS.ProcessEnv,
  output: vscode.LogOutputChannel,
): Promise<boolean> {
  const stampDir = path.join(storage, "uv");
  if (await stamped(stampDir, version)) {
    const cached = await run(uv, uvArgs(wheel, ["--version"], true), { env, timeoutMs: 60_000 });
    if (parseVersion(cached.output) === version) {
      return true;
    }
    output.info(`uv's cache no longer has acp-lsp ${version}'s dependencies: fetching them again`);
  }
  output.info(`preparing acp-lsp ${version} with ${uv} tool run --from ${wheel}`);
  const result = await withProgress(`ACP: preparing the acp-lsp server ${version} (uv)`, () =>
    run(uv, uvArgs(wheel, ["--version"]), { env, onOutput: lineLog(output) }),
  );
  if (parseVersion(result.output) !== version) {
    output.warn(`uv could not run acp-lsp ${version} (exit ${result.code}); trying a private venv`);
    return false;
  }
  await vscode.workspace.fs.createDirectory(vscode.Uri.file(stampDir));
  await writeStamp(stampDir, version);
  return true;
}

/** The venv's acp-lsp, installed first unless the stamp says this version is there. */
async function prepareVenv(
  wheel: string,
  version: string,
  venv: string,
  env: NodeJS.ProcessEnv,
  output: vscode.LogOutputChannel,
): Promise<string> {
  const exe = venvExecutable(venv, "acp-lsp", process.platform);
  if (await stamped(venv, version)) {
    return exe;
  }
  const configured = vscode.workspace.getConfiguration(SECTION).get<string>("server.python", "").trim();
  const search = configured !== "" ? [{ command: configured, args: [] }] : pythonSearch(process.platform, env);
  const python = await findPython(search, env);
  output.info(`installing acp-lsp ${version} into ${venv} with ${commandLine(python)} (Python ${python.version})`);
  return withProgress(`ACP: installing the acp-lsp server ${version}`, () =>
    installVenv(python, venv, wheel, version, env, lineLog(output)),
  );
}

/** A tool's output into the log, one entry per non-empty line (its chunks split lines anywhere). */
function lineLog(output: vscode.LogOutputChannel): (text: string) => void {
  let partial = "";
  return (text) => {
    const lines = (partial + text).split(/\r?\n|\r/);
    partial = lines.pop() ?? "";
    for (const line of lines) {
      if (line.trim() !== "") {
        output.info(line);
      }
    }
  };
}

function withProgress<T>(title: string, task: () => Promise<T>): Promise<T> {
  return Promise.resolve(vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, task));
}

function reportInstallError(error: unknown, output: vscode.LogOutputChannel): void {
  const message = error instanceof Error ? error.message : String(error);
  const detail = error instanceof InstallError ? error.detail : "";
  output.error(`acp-lsp install: ${message}${detail ? `\n${detail}` : ""}`);
  void vscode.window
    .showErrorMessage(`ACP: cannot provide the acp-lsp server: ${message}${detail ? `: ${detail}` : ""}`, "Show Log", "Open Settings")
    .then((choice) => {
      if (choice === "Show Log") {
        output.show();
      } else if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", "acpLsp.server");
      }
    });
}

const warned = new Set<string>();

/** A server of another version than the extension's (its `serverInfo`) is a warning, once. */
export function warnOnVersionMismatch(
  client: LanguageClient,
  place: ExtensionPlace | undefined,
  command: string,
  output: vscode.LogOutputChannel,
): void {
  const version = extensionVersion(place);
  const server = client.initializeResult?.serverInfo?.version;
  output.info(`acp-lsp ${server ?? "(no serverInfo version)"} running; the extension is ${version ?? "(unknown)"}`);
  const message = version === undefined ? undefined : versionMismatch(version, server, command);
  if (message !== undefined && !warned.has(message)) {
    output.warn(message);
    warned.add(message);
    void vscode.window.showWarningMessage(message);
  }
}
