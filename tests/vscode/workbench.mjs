// Helpers shared by the drivers of a running code-server (tests/vscode/driver.mjs and
// bench/vscode/driver.mjs): the browser, waiting, the quick input and the chat webview.

import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(join(process.env.ACP_LSP_VSCODE_TOOLS, "package.json"));
const { chromium } = require("playwright-core");

/** Debian's Chromium, headless, through playwright-core. */
export async function launchBrowser(extraArgs = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
      "--disable-dev-shm-usage",
      ...extraArgs,
    ],
  });
}

export async function poll(fn, what, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const value = await fn();
      if (value) {
        return value;
      }
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ""}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The frame of the chat webview (the one holding the prompt input). */
export async function chatFrame(page) {
  return poll(async () => {
    for (const frame of page.frames()) {
      if (await frame.$("#input").catch(() => null)) {
        return frame;
      }
    }
    return null;
  }, "the chat webview");
}

// Type into the quick input (Ctrl+P, or F1 for commands) and accept the row matching `row`.
// Retried: right after start-up the workbench may drop the first keys or not list files yet.
export async function quickPick(page, key, text, row, log = () => undefined) {
  for (let attempt = 1; ; attempt++) {
    try {
      await page.keyboard.press("Escape");
      await page.keyboard.press(key);
      const input = page.locator(".quick-input-widget .quick-input-box input");
      await input.waitFor({ state: "visible", timeout: 5_000 });
      await input.fill(key === "F1" ? `>${text}` : text);
      await page.locator(`.quick-input-list .monaco-list-row${row}`).first().waitFor({ state: "visible", timeout: 5_000 });
      await page.keyboard.press("Enter");
      return;
    } catch (error) {
      if (attempt >= 4) {
        throw error;
      }
      log(`quick input "${text}" not ready (attempt ${attempt}), retrying`);
    }
  }
}

export async function runCommand(page, title, log) {
  await quickPick(page, "F1", title, `[aria-label*="${title}"]`, log);
}

export async function editorText(page) {
  // Monaco renders spaces as no-break spaces.
  const text = await page.locator(".editor-instance .monaco-editor .view-lines").first().innerText();
  return text.replace(/\u00a0/g, " ");
}
