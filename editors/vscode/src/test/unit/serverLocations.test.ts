// Where the server's tools are, platform by platform, on fake file systems: a set of the files
// that exist. Windows paths are built with path.win32, so these run the same on any machine.

import assert from "node:assert/strict";
import * as path from "node:path";
import { describe, test } from "node:test";
import {
  PYTHON_NAMES,
  commandLine,
  envValue,
  findTool,
  lookPath,
  pythonAdvice,
  pythonCommands,
  pythonSearch,
  searched,
  usualBinDirs,
  venvExecutable,
} from "../../serverLocations";

/** A file system holding exactly `files`. */
function fakeFs(...files: string[]): (file: string) => boolean {
  const there = new Set(files);
  return (file) => there.has(file);
}

const WIN_ENV = {
  Path: String.raw`C:\Windows\system32;C:\Windows;"C:\Program Files\Git\cmd";C:\Users\ann\AppData\Local\Microsoft\WindowsApps`,
  PATHEXT: ".COM;.EXE;.BAT;.CMD;.VBS;.JS",
  LOCALAPPDATA: String.raw`C:\Users\ann\AppData\Local`,
  ProgramFiles: String.raw`C:\Program Files`,
  USERPROFILE: String.raw`C:\Users\ann`,
};
const MAC_ENV = { PATH: "/usr/bin:/bin:/usr/sbin:/sbin", HOME: "/Users/ann" };
const LINUX_ENV = { PATH: "/home/ann/.local/bin:/usr/local/bin:/usr/bin:/bin", HOME: "/home/ann" };

describe("Linux: PATH only, as before", () => {
  test("the Pythons are the names on PATH, newest first", () => {
    assert.deepEqual(
      pythonSearch("linux", LINUX_ENV).map(commandLine),
      ["python3.14", "python3.13", "python3.12", "python3.11", "python3", "python"],
    );
    assert.deepEqual(PYTHON_NAMES, pythonSearch("linux", LINUX_ENV).map(commandLine));
    const fs = fakeFs("/usr/bin/python3", "/usr/bin/python3.12", "/usr/local/bin/python3", "/opt/homebrew/bin/python3.13");
    assert.deepEqual(pythonCommands(pythonSearch("linux", LINUX_ENV), "linux", LINUX_ENV, fs), [
      { command: "/usr/bin/python3.12", args: [] },
      { command: "/usr/local/bin/python3", args: [] },
    ]);
  });

  test("tools on PATH in order; no usual folders", () => {
    const fs = fakeFs("/usr/bin/uv", "/usr/local/bin/uv", "/home/ann/.cargo/bin/uv");
    assert.equal(lookPath("uv", "linux", LINUX_ENV, fs), "/usr/local/bin/uv");
    assert.deepEqual(usualBinDirs("linux", LINUX_ENV), []);
    assert.equal(findTool("uv", "linux", { PATH: "/usr/bin" }, fakeFs("/home/ann/.cargo/bin/uv")), undefined);
    assert.equal(lookPath("uv", "linux", {}, fs), undefined);
  });

  test("the venv's programs are in bin/", () => {
    assert.equal(venvExecutable("/s/server-venv", "acp-lsp", "linux"), "/s/server-venv/bin/acp-lsp");
    assert.equal(venvExecutable("/s/server-venv", "python", "linux"), "/s/server-venv/bin/python");
  });

  test("the message when there is no Python names what was looked for", () => {
    assert.equal(
      searched(pythonSearch("linux", LINUX_ENV), "linux"),
      "none of python3.14, python3.13, python3.12, python3.11, python3, python is on PATH",
    );
    assert.equal(pythonAdvice("linux"), "Debian/Ubuntu: python3-venv");
  });
});

describe("Windows: py -3, Scripts\\, .exe", () => {
  test("the py launcher comes first, with -3", () => {
    const fs = fakeFs(String.raw`C:\Windows\py.exe`, String.raw`C:\Users\ann\AppData\Local\Programs\Python\Python313\python.exe`);
    assert.deepEqual(pythonCommands(pythonSearch("win32", WIN_ENV), "win32", WIN_ENV, fs), [
      { command: String.raw`C:\Windows\py.exe`, args: ["-3"] },
      { command: String.raw`C:\Users\ann\AppData\Local\Programs\Python\Python313\python.exe`, args: [] },
    ]);
  });

  test("a per-user launcher off PATH, the Store's alias, python.org's folders newest first", () => {
    const launcher = String.raw`C:\Users\ann\AppData\Local\Programs\Python\Launcher\py.exe`;
    const store = String.raw`C:\Users\ann\AppData\Local\Microsoft\WindowsApps\python3.exe`;
    const user312 = String.raw`C:\Users\ann\AppData\Local\Programs\Python\Python312\python.exe`;
    const all314 = String.raw`C:\Program Files\Python314\python.exe`;
    const fs = fakeFs(launcher, store, user312, all314);
    assert.deepEqual(pythonCommands(pythonSearch("win32", WIN_ENV), "win32", WIN_ENV, fs).map(commandLine), [
      `${launcher} -3`,
      store,
      all314,
      user312,
    ]);
  });

  test("PATH is found in any case, quoted folders work, only .com and .exe run", () => {
    const fs = fakeFs(String.raw`C:\Program Files\Git\cmd\uv.cmd`, String.raw`C:\Program Files\Git\cmd\git.exe`);
    assert.equal(lookPath("git", "win32", WIN_ENV, fs), String.raw`C:\Program Files\Git\cmd\git.exe`);
    assert.equal(lookPath("git.exe", "win32", WIN_ENV, fs), String.raw`C:\Program Files\Git\cmd\git.exe`);
    assert.equal(lookPath("uv", "win32", WIN_ENV, fs), undefined); // a .cmd needs a shell
    assert.equal(envValue(WIN_ENV, "PATH", "win32"), WIN_ENV.Path);
    assert.equal(envValue(WIN_ENV, "PATH", "linux"), undefined);
    assert.equal(lookPath("git", "win32", { PATH: String.raw`C:\Program Files\Git\cmd` }, fs), String.raw`C:\Program Files\Git\cmd\git.exe`);
  });

  test("uv off PATH: where its installer and cargo put it", () => {
    const fs = fakeFs(String.raw`C:\Users\ann\.local\bin\uv.exe`);
    assert.equal(findTool("uv", "win32", WIN_ENV, fs), String.raw`C:\Users\ann\.local\bin\uv.exe`);
    assert.deepEqual(usualBinDirs("win32", WIN_ENV), [String.raw`C:\Users\ann\.local\bin`, String.raw`C:\Users\ann\.cargo\bin`]);
  });

  test("the venv's programs are Scripts\\*.exe", () => {
    const venv = String.raw`C:\Users\ann\AppData\Roaming\Code\User\globalStorage\acp-lsp.acp-lsp\server-venv`;
    assert.equal(venvExecutable(venv, "acp-lsp", "win32"), path.win32.join(venv, "Scripts", "acp-lsp.exe"));
    assert.equal(venvExecutable(venv, "python", "win32"), `${venv}\\Scripts\\python.exe`);
  });

  test("without LOCALAPPDATA or ProgramFiles only the names are searched", () => {
    assert.deepEqual(pythonSearch("win32", { Path: "" }).map(commandLine), ["py -3", "python3", "python"]);
    assert.equal(searched(pythonSearch("win32", { Path: "" }), "win32"), "none of py -3, python3, python is on PATH");
    assert.match(searched(pythonSearch("win32", WIN_ENV), "win32"), /no Python is in .*Python314, C:\\Program Files\\Python314/);
    assert.match(pythonAdvice("win32"), /py launcher/);
  });
});

describe("macOS: Homebrew and python.org, never Apple's stub", () => {
  test("Homebrew's Python off PATH (a Dock-started editor), Apple silicon first", () => {
    const fs = fakeFs("/usr/bin/python3", "/opt/homebrew/bin/python3", "/opt/homebrew/bin/python3.13", "/usr/local/bin/python3.12");
    assert.deepEqual(pythonCommands(pythonSearch("darwin", MAC_ENV), "darwin", MAC_ENV, fs).map(commandLine), [
      "/opt/homebrew/bin/python3.13",
      "/opt/homebrew/bin/python3",
      "/usr/local/bin/python3.12",
    ]);
  });

  test("versioned names on PATH first; a PATH entry met again is tried once", () => {
    const env = { PATH: "/opt/homebrew/bin:/usr/bin:/bin", HOME: "/Users/ann" };
    const fs = fakeFs("/opt/homebrew/bin/python3.12", "/opt/homebrew/bin/python3", "/usr/bin/python3");
    assert.deepEqual(pythonCommands(pythonSearch("darwin", env), "darwin", env, fs).map(commandLine), [
      "/opt/homebrew/bin/python3.12",
      "/opt/homebrew/bin/python3",
    ]);
  });

  test("python.org's framework builds, newest first", () => {
    const fs = fakeFs(
      "/Library/Frameworks/Python.framework/Versions/3.11/bin/python3",
      "/Library/Frameworks/Python.framework/Versions/3.13/bin/python3",
    );
    assert.deepEqual(pythonCommands(pythonSearch("darwin", MAC_ENV), "darwin", MAC_ENV, fs).map(commandLine), [
      "/Library/Frameworks/Python.framework/Versions/3.13/bin/python3",
      "/Library/Frameworks/Python.framework/Versions/3.11/bin/python3",
    ]);
  });

  test("Apple's /usr/bin/python3 is never run, unless named as a file", () => {
    const fs = fakeFs("/usr/bin/python3");
    assert.deepEqual(pythonCommands(pythonSearch("darwin", MAC_ENV), "darwin", MAC_ENV, fs), []);
    assert.match(searched(pythonSearch("darwin", MAC_ENV), "darwin"), /Apple's \/usr\/bin\/python3 is never run/);
    assert.match(searched(pythonSearch("darwin", MAC_ENV), "darwin"), /no Python is in \/opt\/homebrew\/bin, \/usr\/local\/bin, /);
    assert.deepEqual(pythonCommands([{ command: "/usr/bin/python3", args: [] }], "darwin", MAC_ENV, fs), [
      { command: "/usr/bin/python3", args: [] },
    ]);
    assert.match(pythonAdvice("darwin"), /brew install/);
  });

  test("uv off PATH: Homebrew's, then the installer's ~/.local/bin", () => {
    assert.equal(findTool("uv", "darwin", MAC_ENV, fakeFs("/Users/ann/.local/bin/uv")), "/Users/ann/.local/bin/uv");
    assert.equal(findTool("uv", "darwin", MAC_ENV, fakeFs("/Users/ann/.local/bin/uv", "/opt/homebrew/bin/uv")), "/opt/homebrew/bin/uv");
    assert.equal(findTool("uv", "darwin", MAC_ENV, fakeFs("/usr/bin/uv", "/opt/homebrew/bin/uv")), "/usr/bin/uv");
  });

  test("the venv's programs are in bin/", () => {
    assert.equal(venvExecutable("/Users/ann/v", "acp-lsp", "darwin"), "/Users/ann/v/bin/acp-lsp");
  });
});
