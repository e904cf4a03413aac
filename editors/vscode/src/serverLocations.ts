// Where the server's tools are on each platform (issue 36): a program on PATH (`.exe` on
// Windows), the Pythons that can make the private venv, the places installers put programs that
// an editor started from the Dock or the Start menu may not have on its PATH, and a venv's
// executables (`Scripts\*.exe` on Windows, `bin/*` elsewhere). Pure: the platform, the
// environment and a "does this file exist (and run)" check come in, so each platform is
// unit-tested on any machine with a fake file system. Linux searches PATH only, as before.

import * as path from "node:path";

export type Env = Record<string, string | undefined>;
/** Whether a file exists and may be run (the real one: `access(file, X_OK)`). */
export type Exists = (file: string) => boolean;

/** A Python to try: a name looked up on PATH or an absolute file, with its first arguments
 * (`py -3`). */
export interface PythonCommand {
  command: string;
  args: string[];
}

/** Newest first: the Pythons the server runs on. */
const VERSIONS = ["3.14", "3.13", "3.12", "3.11"];
/** Tried in order on Linux, by name on PATH (unchanged from before issue 36). */
export const PYTHON_NAMES = [...VERSIONS.map((v) => `python${v}`), "python3", "python"];

export function pathFor(platform: string): path.PlatformPath {
  return platform === "win32" ? path.win32 : path.posix;
}

/** An environment variable; on Windows in any case (a copy of `process.env` is case-sensitive). */
export function envValue(env: Env, name: string, platform: string): string | undefined {
  if (platform !== "win32") {
    return env[name];
  }
  const wanted = name.toUpperCase();
  return Object.entries(env).find(([key, value]) => key.toUpperCase() === wanted && value !== undefined)?.[1];
}

function pathDirs(platform: string, env: Env): string[] {
  const value = platform === "win32" ? envValue(env, "PATH", platform) : (env.PATH ?? env.Path);
  // Windows allows quoted entries ("C:\Program Files\x").
  return (value ?? "")
    .split(pathFor(platform).delimiter)
    .map((d) => (platform === "win32" ? d.replace(/^"(.*)"$/, "$1") : d))
    .filter((d) => d !== "");
}

/** The file names `name` may have: on Windows the PATHEXT kinds a process starts from without a
 * shell (`.com`, `.exe`: Node refuses `.cmd` and `.bat` then), elsewhere the name itself. */
function fileNames(name: string, platform: string, env: Env): string[] {
  if (platform !== "win32") {
    return [name];
  }
  const runnable = [".com", ".exe"];
  const exts = (envValue(env, "PATHEXT", platform) ?? ".COM;.EXE")
    .split(";")
    .map((e) => e.toLowerCase())
    .filter((e) => runnable.includes(e));
  const given = path.win32.extname(name).toLowerCase();
  return runnable.includes(given) ? [name] : exts.map((e) => name + e);
}

/** The first `name` in `dirs` that exists, or undefined. */
export function lookIn(dirs: string[], name: string, platform: string, env: Env, exists: Exists): string | undefined {
  const p = pathFor(platform);
  for (const dir of dirs) {
    for (const file of fileNames(name, platform, env)) {
      const candidate = p.join(dir, file);
      if (exists(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

/** The executable `name` on the PATH of `env`, or undefined. */
export function lookPath(name: string, platform: string, env: Env, exists: Exists): string | undefined {
  return lookIn(pathDirs(platform, env), name, platform, env, exists);
}

const HOMEBREW_PREFIXES = ["/opt/homebrew", "/usr/local"]; // Apple silicon, Intel (and python.org's links)
const FRAMEWORKS = "/Library/Frameworks/Python.framework";

/** Folders searched after PATH on macOS and Windows: where Homebrew and the installers of uv
 * and pipx put programs. A VS Code started from the Dock usually gets the login shell's PATH,
 * but not when that fails; one started from the Start menu misses a PATH changed since login.
 * None on Linux. */
export function usualBinDirs(platform: string, env: Env): string[] {
  const p = pathFor(platform);
  const home = envValue(env, platform === "win32" ? "USERPROFILE" : "HOME", platform);
  const inHome = home === undefined || home === "" ? [] : [p.join(home, ".local", "bin"), p.join(home, ".cargo", "bin")];
  if (platform === "darwin") {
    return [...HOMEBREW_PREFIXES.map((prefix) => p.join(prefix, "bin")), ...inHome];
  }
  return platform === "win32" ? inHome : [];
}

/** A tool (uv): on PATH, else (macOS, Windows) in the usual folders. */
export function findTool(name: string, platform: string, env: Env, exists: Exists): string | undefined {
  return lookPath(name, platform, env, exists) ?? lookIn(usualBinDirs(platform, env), name, platform, env, exists);
}

const named = (command: string, args: string[] = []): PythonCommand => ({ command, args });

/** What to try for a Python, in order, before looking anything up.
 * - Linux: `python3.14` … `python3.11`, `python3`, `python` on PATH.
 * - macOS: the versioned names on PATH, then Homebrew's (`/opt/homebrew/bin`, `/usr/local/bin`)
 *   and python.org's framework builds, then `python3` and `python` on PATH (never Apple's
 *   `/usr/bin` stub: Python 3.9, and it asks to install the developer tools: see pythonCommands).
 * - Windows: the `py -3` launcher (on PATH, or where a per-user install puts it), `python3` and
 *   `python` on PATH (the Store's aliases among them), then python.org's per-user and all-users
 *   folders (`%LOCALAPPDATA%\Programs\Python\Python313\python.exe`, `%ProgramFiles%\Python313\…`). */
export function pythonSearch(platform: string, env: Env): PythonCommand[] {
  if (platform === "win32") {
    const p = path.win32;
    const local = envValue(env, "LOCALAPPDATA", platform);
    const programs = envValue(env, "ProgramFiles", platform);
    const launcher = local ? [named(p.join(local, "Programs", "Python", "Launcher", "py.exe"), ["-3"])] : [];
    const folders = VERSIONS.flatMap((v) => {
      const dir = `Python${v.replace(".", "")}`;
      return [
        ...(local ? [named(p.join(local, "Programs", "Python", dir, "python.exe"))] : []),
        ...(programs ? [named(p.join(programs, dir, "python.exe"))] : []),
      ];
    });
    return [named("py", ["-3"]), ...launcher, named("python3"), named("python"), ...folders];
  }
  if (platform === "darwin") {
    const p = path.posix;
    const versioned = VERSIONS.map((v) => `python${v}`);
    const brew = HOMEBREW_PREFIXES.flatMap((prefix) =>
      [...versioned, "python3"].map((name) => named(p.join(prefix, "bin", name))),
    );
    const frameworks = VERSIONS.map((v) => named(p.join(FRAMEWORKS, "Versions", v, "bin", "python3")));
    return [...versioned.map((n) => named(n)), ...brew, ...frameworks, named("python3"), named("python")];
  }
  return PYTHON_NAMES.map((n) => named(n));
}

/** Apple's `/usr/bin/python3` is Python 3.9 at best and, without the developer tools, opens a
 * dialog asking to install them: never run. */
const MAC_STUBS = ["/usr/bin/python3", "/usr/bin/python"];

/** The Pythons of `search` that are there, in order, each once: names resolved on PATH (on
 * macOS never to Apple's stub), absolute files kept when they exist. */
export function pythonCommands(search: PythonCommand[], platform: string, env: Env, exists: Exists): PythonCommand[] {
  const p = pathFor(platform);
  const found: PythonCommand[] = [];
  const seen = new Set<string>();
  for (const { command, args } of search) {
    const file = p.isAbsolute(command) ? (exists(command) ? command : undefined) : lookPath(command, platform, env, exists);
    const stub = platform === "darwin" && !p.isAbsolute(command) && file !== undefined && MAC_STUBS.includes(file);
    if (file === undefined || stub) {
      continue;
    }
    const key = [platform === "win32" || platform === "darwin" ? file.toLowerCase() : file, ...args].join("\0");
    if (!seen.has(key)) {
      seen.add(key);
      found.push({ command: file, args });
    }
  }
  return found;
}

/** What was looked for, for the message when nothing fit: the names on PATH, then the files
 * (a configured one by name, the usual places by folder). */
export function searched(search: PythonCommand[], platform: string): string {
  const p = pathFor(platform);
  const names = search.filter((c) => !p.isAbsolute(c.command)).map(commandLine);
  const files = search.filter((c) => p.isAbsolute(c.command)).map((c) => c.command);
  const parts = names.length > 0 ? [`none of ${names.join(", ")} is on PATH`] : [];
  if (files.length > 0 && files.length <= 2) {
    parts.push(`${files.join(" and ")} ${files.length > 1 ? "are" : "is"} not there (or cannot run)`);
  } else if (files.length > 2) {
    parts.push(`no Python is in ${[...new Set(files.map((f) => p.dirname(f)))].join(", ")}`);
  }
  const stub = platform === "darwin" ? ` (Apple's ${MAC_STUBS[0]} is never run)` : "";
  return parts.join("; ") + stub;
}

/** How to get a Python 3.11+ with venv on this platform, for the message when there is none. */
export function pythonAdvice(platform: string): string {
  if (platform === "win32") {
    return "python.org's installer (with the py launcher), or winget install Python.Python.3.13";
  }
  if (platform === "darwin") {
    return "brew install python@3.13, or python.org's installer";
  }
  return "Debian/Ubuntu: python3-venv";
}

/** A program of a venv: `Scripts\name.exe` on Windows, `bin/name` elsewhere. */
export function venvExecutable(venv: string, name: string, platform: string): string {
  const p = pathFor(platform);
  return platform === "win32" ? p.join(venv, "Scripts", `${name}.exe`) : p.join(venv, "bin", name);
}

/** How a command reads in a message: `py -3`. */
export function commandLine(python: PythonCommand): string {
  return [python.command, ...python.args].join(" ");
}
