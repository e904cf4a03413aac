// Build the acp-lsp wheel of the repository (the extension's own version) into server/, which
// the .vsix ships (issue 28: the server comes with the extension). Run by `vscode:prepublish`.
// Python: $ACP_LSP_BUILD_PYTHON, else the repository's .venv, else python3; `uv build` when
// the Python has no `build` module but uv is on PATH.

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(fileURLToPath(import.meta.url));
const repo = join(root, "..", "..");
const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
const venvPython = join(repo, ".venv", "bin", "python");
const python = process.env.ACP_LSP_BUILD_PYTHON || (existsSync(venvPython) ? venvPython : "python3");
const out = mkdtempSync(join(tmpdir(), "acp-lsp-wheel-"));

try {
  const hasBuild = spawnSync(python, ["-c", "import build"]).status === 0;
  const [command, args] = hasBuild
    ? [python, ["-m", "build", "--wheel", "--outdir", out, repo]]
    : ["uv", ["build", "--wheel", "--out-dir", out, repo]];
  execFileSync(command, args, { stdio: ["ignore", "inherit", "inherit"] });
  const wheel = readdirSync(out).find((n) => n.endsWith(".whl"));
  if (!wheel || !wheel.startsWith(`acp_lsp-${version}-`)) {
    throw new Error(`built ${wheel ?? "no wheel"}, not acp-lsp ${version} (package.json and pyproject.toml disagree)`);
  }
  const dest = join(root, "server");
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest);
  copyFileSync(join(out, wheel), join(dest, wheel));
  process.stderr.write(`bundled server/${wheel}\n`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
