// The server that comes with the extension (issue 28): the acp-lsp wheel shipped in the .vsix
// (server/acp_lsp-<version>-py3-none-any.whl) run by `uv tool run` when uv is on PATH, else
// installed with pip into a private venv in the extension's global storage. Node only (no
// `vscode`), so the choices are unit-tested; bootstrap.ts adds progress and messages. Where
// things are on each platform is serverLocations.ts.

import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { readFile, readdir, rm, writeFile } from "node:fs/promises";
import * as path from "node:path";
import {
  type Env,
  type Exists,
  type PythonCommand,
  commandLine,
  lookPath,
  pythonAdvice,
  pythonCommands,
  searched,
  venvExecutable,
} from "./serverLocations";

export const MIN_PYTHON = [3, 11] as const;
const STAMP = "acp-lsp-version";

/** The real file system's check: the file is there and may be run. */
export const canRun: Exists = (file) => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

export interface RunResult {
  code: number | null;
  output: string;
}

/** Run a program to its end, its stdout and stderr together (also passed to `onOutput`). */
export function run(
  command: string,
  args: string[],
  options: { env?: Env; timeoutMs?: number; onOutput?: (text: string) => void } = {},
): Promise<RunResult> {
  return new Promise((resolve) => {
    let output = "";
    const child = execFile(command, args, {
      env: options.env as NodeJS.ProcessEnv | undefined,
      timeout: options.timeoutMs ?? 600_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    const take = (chunk: Buffer | string): void => {
      const text = String(chunk);
      output += text;
      options.onOutput?.(text);
    };
    child.stdout?.on("data", take);
    child.stderr?.on("data", take);
    child.on("error", (error) => resolve({ code: null, output: `${output}${error.message}\n` }));
    child.on("close", (code) => resolve({ code, output }));
  });
}

/** The executable `name` on the PATH of `env`, or undefined. */
export async function findOnPath(
  name: string,
  env: Env,
  platform: string = process.platform,
  exists: Exists = canRun,
): Promise<string | undefined> {
  return Promise.resolve(lookPath(name, platform, env, exists));
}

/** The wheel of exactly `version` shipped in the extension, or undefined (a development build). */
export async function shippedWheel(extensionPath: string, version: string): Promise<string | undefined> {
  const dir = path.join(extensionPath, "server");
  const names = await readdir(dir).catch(() => [] as string[]);
  const wheel = names.find((n) => n.startsWith(`acp_lsp-${version}-`) && n.endsWith(".whl"));
  return wheel === undefined ? undefined : path.join(dir, wheel);
}

/** The version in `acp-lsp --version`'s output ("acp-lsp 0.1.0"). */
export function parseVersion(output: string): string | undefined {
  return /acp-lsp\s+(\S+)/.exec(output)?.[1];
}

/** The warning for a server whose version is not the extension's, or undefined when they agree. */
export function versionMismatch(extension: string, server: string | undefined, command: string): string | undefined {
  if (server === undefined || server === extension) {
    return undefined;
  }
  return (
    `ACP: the acp-lsp server (${command}) is version ${server}, this extension is ${extension}. ` +
    `Install acp-lsp ${extension}, or clear "acpLsp.server.command" to use the server that comes with the extension.`
  );
}

/** `uv tool run` of the shipped wheel: acp-lsp itself from the wheel, its dependencies from the
 * index, or (`offline`, once they are in uv's cache) from the cache only: a start in ~0.2 s
 * instead of ~2 s of resolving again. */
export function uvArgs(wheel: string, args: string[], offline = false): string[] {
  return ["tool", "run", ...(offline ? ["--offline"] : []), "--from", wheel, "acp-lsp", ...args];
}

export function lastLines(text: string, count: number): string {
  return text.trimEnd().split(/\r?\n/).slice(-count).join("\n");
}

/** Whether `dir` holds a finished install of `version` (the stamp is written last). */
export async function stamped(dir: string, version: string): Promise<boolean> {
  const stamp = await readFile(path.join(dir, STAMP), "utf8").catch(() => "");
  return stamp.trim() === version;
}

export async function writeStamp(dir: string, version: string): Promise<void> {
  await writeFile(path.join(dir, STAMP), `${version}\n`, "utf8");
}

/** What the install could not do, for the user: `detail` is the failing tool's last lines. */
export class InstallError extends Error {
  constructor(
    message: string,
    readonly detail = "",
  ) {
    super(message);
  }
}

export interface Python extends PythonCommand {
  version: string;
}

// venv and ensurepip: Debian's python3 without python3-venv has the first, not the second.
const PROBE = "import sys, venv, ensurepip; print('%d.%d' % sys.version_info[:2])";

/** The first Python of `search` (see pythonSearch) that is 3.11+ and can make a venv with pip. */
export async function findPython(
  search: PythonCommand[],
  env: Env,
  platform: string = process.platform,
  exists: Exists = canRun,
): Promise<Python> {
  const tried: string[] = [];
  for (const python of pythonCommands(search, platform, env, exists)) {
    const probe = await run(python.command, [...python.args, "-c", PROBE], { env, timeoutMs: 30_000 });
    const version = /^(\d+)\.(\d+)\s*$/m.exec(probe.output);
    if (probe.code !== 0 || version === null) {
      tried.push(`${commandLine(python)} (no venv/ensurepip: ${lastLines(probe.output, 1)})`);
      continue;
    }
    const [major, minor] = [Number(version[1]), Number(version[2])];
    if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
      tried.push(`${commandLine(python)} (${major}.${minor})`);
      continue;
    }
    return { ...python, version: `${major}.${minor}` };
  }
  const found = tried.length > 0 ? `found only ${tried.join(", ")}` : searched(search, platform);
  throw new InstallError(
    `the acp-lsp server needs uv or Python ${MIN_PYTHON.join(".")}+ with venv: ${found}. ` +
      `Install uv or Python ${MIN_PYTHON.join(".")}+ (${pythonAdvice(platform)}), or set "acpLsp.server.python".`,
  );
}

/** A fresh venv in `venv` with the wheel installed; returns its acp-lsp. A failed step throws
 * with the tool's last lines. `log` gets every line of output as it comes. */
export async function installVenv(
  python: Python,
  venv: string,
  wheel: string,
  version: string,
  env: Env,
  log: (text: string) => void,
): Promise<string> {
  await rm(venv, { recursive: true, force: true });
  const made = await run(python.command, [...python.args, "-m", "venv", venv], { env, onOutput: log });
  if (made.code !== 0) {
    throw new InstallError(`${commandLine(python)} -m venv failed (exit ${made.code})`, lastLines(made.output, 5));
  }
  const pip = await run(
    venvExecutable(venv, "python", process.platform),
    ["-m", "pip", "install", "--disable-pip-version-check", "--no-input", wheel],
    { env, onOutput: log },
  );
  if (pip.code !== 0) {
    throw new InstallError(`pip install of acp-lsp ${version} failed (exit ${pip.code})`, lastLines(pip.output, 5));
  }
  const exe = venvExecutable(venv, "acp-lsp", process.platform);
  const check = await run(exe, ["--version"], { env, timeoutMs: 60_000, onOutput: log });
  if (parseVersion(check.output) !== version) {
    throw new InstallError(`the installed acp-lsp does not run as version ${version}`, lastLines(check.output, 5));
  }
  await writeStamp(venv, version);
  return exe;
}
