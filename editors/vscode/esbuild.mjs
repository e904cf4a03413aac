// Build: the extension (Node, CommonJS, `vscode` external) and the chat webview (browser IIFE)
// into dist/, plus the webview's CSS and the codicon font. `--tests` also builds the
// end-to-end suite (out/test/index.js, run inside VS Code) and the unit tests
// (out/test/unit/*.test.js, run by `node --test`). `--production` minifies.

import { build } from "esbuild";
import { copyFile, mkdir, readdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(fileURLToPath(import.meta.url));
const production = process.argv.includes("--production");
const tests = process.argv.includes("--tests");

const common = {
  bundle: true,
  sourcemap: production ? false : "linked",
  minify: production,
  logLevel: "warning",
  absWorkingDir: root,
};

async function copyAssets() {
  await mkdir(join(root, "dist/codicons"), { recursive: true });
  await copyFile(join(root, "media/chat.css"), join(root, "dist/chat.css"));
  const codicons = join(root, "node_modules/@vscode/codicons/dist");
  await copyFile(join(codicons, "codicon.css"), join(root, "dist/codicons/codicon.css"));
  await copyFile(join(codicons, "codicon.ttf"), join(root, "dist/codicons/codicon.ttf"));
}

const builds = [
  build({
    ...common,
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode"],
  }),
  build({
    ...common,
    entryPoints: ["src/webview/main.ts"],
    outfile: "dist/webview.js",
    platform: "browser",
    format: "iife",
    target: "es2022",
  }),
  copyAssets(),
];

if (tests) {
  const unitDir = join(root, "src/test/unit");
  const unitTests = (await readdir(unitDir)).filter((f) => f.endsWith(".test.ts")).map((f) => `src/test/unit/${f}`);
  builds.push(
    build({
      ...common,
      entryPoints: ["src/test/e2e/index.ts"],
      outfile: "out/test/index.js",
      platform: "node",
      format: "cjs",
      target: "node20",
      external: ["vscode"],
    }),
    build({
      ...common,
      entryPoints: unitTests,
      outdir: "out/test/unit",
      platform: "node",
      format: "cjs",
      target: "node20",
      external: ["vscode"],
    }),
  );
}

await Promise.all(builds);
