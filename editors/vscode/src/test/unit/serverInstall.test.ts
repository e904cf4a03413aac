import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  InstallError,
  findOnPath,
  findPython,
  installVenv,
  lastLines,
  parseVersion,
  shippedWheel,
  stamped,
  uvArgs,
  versionMismatch,
  writeStamp,
} from "../../serverInstall";

const named = (...commands: string[]) => commands.map((command) => ({ command, args: [] }));

let dir = "";

/** An executable shell script `name` in `sub` that prints `out` (a fake python or acp-lsp). */
async function fake(sub: string, name: string, out: string, code = 0): Promise<string> {
  await mkdir(path.join(dir, sub), { recursive: true });
  const file = path.join(dir, sub, name);
  await writeFile(file, `#!/bin/sh\nprintf '%s\\n' '${out}'\nexit ${code}\n`);
  await chmod(file, 0o755);
  return file;
}

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "acp-lsp-install-"));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the server that comes with the extension", () => {
  test("the shipped wheel is the one of exactly the extension's version", async () => {
    await mkdir(path.join(dir, "ext", "server"), { recursive: true });
    await writeFile(path.join(dir, "ext", "server", "acp_lsp-0.1.0-py3-none-any.whl"), "");
    assert.equal(await shippedWheel(path.join(dir, "ext"), "0.1.0"), path.join(dir, "ext", "server", "acp_lsp-0.1.0-py3-none-any.whl"));
    assert.equal(await shippedWheel(path.join(dir, "ext"), "0.2.0"), undefined);
    assert.equal(await shippedWheel(path.join(dir, "nowhere"), "0.1.0"), undefined);
  });

  test("uv runs the wheel's acp-lsp with the server args, offline once its dependencies are cached", () => {
    assert.deepEqual(uvArgs("/x/a.whl", [], true), ["tool", "run", "--offline", "--from", "/x/a.whl", "acp-lsp"]);
    assert.deepEqual(uvArgs("/x/acp_lsp-0.1.0-py3-none-any.whl", ["--log", "debug"]), [
      "tool",
      "run",
      "--from",
      "/x/acp_lsp-0.1.0-py3-none-any.whl",
      "acp-lsp",
      "--log",
      "debug",
    ]);
  });

  test("findOnPath finds executables only, in PATH order", async () => {
    const first = await fake("a", "uv", "uv 1");
    await fake("b", "uv", "uv 2");
    await writeFile(path.join(dir, "b", "plain"), "not executable");
    const env = { PATH: [path.join(dir, "missing"), path.join(dir, "a"), path.join(dir, "b")].join(path.delimiter) };
    assert.equal(await findOnPath("uv", env), first);
    assert.equal(await findOnPath("plain", env), undefined);
    assert.equal(await findOnPath("uv", {}), undefined);
  });

  test("findPython takes the first 3.11+ and names what it found otherwise", async () => {
    await fake("py", "python3.12", "3.12");
    await fake("py", "python3", "3.10");
    await fake("py", "python", "No module named ensurepip", 1);
    const env = { PATH: path.join(dir, "py") };
    assert.deepEqual(await findPython(named("python3.13", "python3.12", "python3"), env), {
      command: path.join(dir, "py", "python3.12"),
      args: [],
      version: "3.12",
    });
    await assert.rejects(findPython(named("python3", "python"), env), (error: unknown) => {
      assert.ok(error instanceof InstallError);
      assert.match(error.message, /needs uv or Python 3\.11\+/);
      assert.match(error.message, /python3 \(3\.10\)/);
      assert.match(error.message, /no venv\/ensurepip: No module named ensurepip/);
      return true;
    });
    await assert.rejects(findPython(named("python3.99"), env), /none of python3\.99 is on PATH/);
    await assert.rejects(findPython(named(path.join(dir, "nowhere", "python3")), env), /nowhere\/python3 is not there \(or cannot run\)/);
  });

  test("a launcher's arguments come before the probe's (py -3)", async () => {
    await mkdir(path.join(dir, "launcher"), { recursive: true });
    const py = path.join(dir, "launcher", "py");
    await writeFile(py, `#!/bin/sh\n[ "$1" = -3 ] && [ "$2" = -c ] && echo 3.13 && exit 0\necho "wrong args: $*"\nexit 1\n`);
    await chmod(py, 0o755);
    const env = { PATH: path.join(dir, "launcher") };
    assert.deepEqual(await findPython([{ command: "py", args: ["-3"] }], env), { command: py, args: ["-3"], version: "3.13" });
    await assert.rejects(findPython(named("py"), env), /py \(no venv\/ensurepip: wrong args: -c/);
  });

  test("installVenv makes the venv with the launcher's arguments, then uses the venv's own programs", async () => {
    // A stand-in `py`: for `-3 -m venv DIR` it makes DIR/bin/python (logs pip's arguments) and
    // DIR/bin/acp-lsp (says its version).
    const py = path.join(dir, "launcher", "py-venv");
    await mkdir(path.dirname(py), { recursive: true });
    await writeFile(
      py,
      [
        "#!/bin/sh",
        '[ "$1 $2 $3" = "-3 -m venv" ] || { echo "wrong args: $*"; exit 1; }',
        'mkdir -p "$4/bin"',
        `printf '#!/bin/sh\necho "$*" >> "%s/pip.log"\n' "$4" > "$4/bin/python"`,
        `printf '#!/bin/sh\necho "acp-lsp 0.1.0"\n' > "$4/bin/acp-lsp"`,
        'chmod +x "$4/bin/python" "$4/bin/acp-lsp"',
        "",
      ].join("\n"),
    );
    await chmod(py, 0o755);
    const venv = path.join(dir, "made-venv");
    const exe = await installVenv({ command: py, args: ["-3"], version: "3.13" }, venv, "/w/acp_lsp-0.1.0.whl", "0.1.0", { PATH: process.env.PATH }, () => {});
    assert.equal(exe, path.join(venv, "bin", "acp-lsp"));
    assert.equal(await stamped(venv, "0.1.0"), true);
    assert.match(await readFile(path.join(venv, "pip.log"), "utf8"), /^-m pip install .*\/w\/acp_lsp-0\.1\.0\.whl$/m);
    await assert.rejects(
      installVenv({ command: py, args: [], version: "3.13" }, venv, "/w/a.whl", "0.1.0", { PATH: process.env.PATH }, () => {}),
      /py-venv -m venv failed \(exit 1\)/,
    );
  });

  test("a stamp marks an install of one version; another version installs anew", async () => {
    const venv = path.join(dir, "venv");
    await mkdir(venv, { recursive: true });
    assert.equal(await stamped(venv, "0.1.0"), false);
    await writeStamp(venv, "0.1.0");
    assert.equal(await stamped(venv, "0.1.0"), true);
    assert.equal(await stamped(venv, "0.2.0"), false);
  });

  test("versions: parsed from --version; a mismatch is a warning naming both", () => {
    assert.equal(parseVersion("acp-lsp 0.1.0\n"), "0.1.0");
    assert.equal(parseVersion("command not found"), undefined);
    assert.equal(versionMismatch("0.1.0", "0.1.0", "acp-lsp"), undefined);
    assert.equal(versionMismatch("0.1.0", undefined, "acp-lsp"), undefined);
    const warning = versionMismatch("0.2.0", "0.1.0", "/opt/acp-lsp");
    assert.ok(warning?.includes("/opt/acp-lsp") && warning.includes("version 0.1.0") && warning.includes("extension is 0.2.0"), warning);
  });

  test("pip's last lines", () => {
    assert.equal(lastLines("a\nb\nc\nd\n\n", 2), "c\nd");
  });
});
