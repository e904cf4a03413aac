// Editor tools in code-server (issue 27): claude-agent-acp against the scripted model calls the
// editor's tools, which the extension answers from VS Code's real language servers (ruff server,
// jedi-language-server, started by the test-only extension tests/vscode/python_servers/) and
// from the user's answer in VS Code's diff editor. Used as a person would: the chat, the
// permission buttons, the diff editor's title actions, the tab's close button. One JSON line per
// check on stdout (tests/vscode/test_vscode_editor_tools.py reads them and the model's
// requests). Environment as for production.mjs, plus ACP_LSP_TEST_SERVERS_READY (the file the
// test extension writes once both language servers run) and ACP_LSP_KEPT (a line the user adds
// to the first proposal).

import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chatFrame, editorText, launchBrowser, poll, quickPick, runCommand } from "./workbench.mjs";

const base = process.env.CODE_SERVER_URL;
const workspace = process.env.ACP_LSP_WORKSPACE;
const artifacts = process.env.ACP_LSP_ARTIFACTS;
const ready = process.env.ACP_LSP_TEST_SERVERS_READY;
const kept = process.env.ACP_LSP_KEPT;
const greet = join(workspace, "greet.py");

const browser = await launchBrowser();

function log(message) {
  process.stderr.write(`[editor-tools] ${message}\n`);
}

function check(name, ok, detail = "") {
  process.stdout.write(`${JSON.stringify({ name, ok: Boolean(ok), detail: String(detail).slice(0, 3000) })}\n`);
}

async function shot(page, name) {
  await page.screenshot({ path: join(artifacts, name) });
  log(`screenshot ${name}`);
}

const diffTab = (page) => page.locator(".tabs-container .tab", { hasText: "greet.py (" });

/** Send a prompt; while the turn runs, allow each permission and hand each diff review to
 * `review(page)`; returns once the chat is idle again. */
async function turn(chat, page, text, review = async () => undefined) {
  const agents = await chat.locator(".message.agent").count();
  await chat.locator("#input").fill(text);
  await chat.locator("#input").press("Enter");
  let reviewed = false;
  await poll(async () => {
    const allow = chat.locator('.permission:not(.answered) button[data-kind="allow_once"]').first();
    if (await allow.isVisible().catch(() => false)) {
      await allow.click();
      return false;
    }
    if (!reviewed && (await diffTab(page).count()) > 0) {
      reviewed = true;
      await review(page);
      return false;
    }
    const status = await chat.locator("#statusline").innerText();
    return status.includes("Idle") && (await chat.locator(".message.agent").count()) > agents;
  }, `the turn "${text}" to end`, 180_000);
  return reviewed;
}

/** The text of the diff editor's right side (the proposal), as shown. */
async function proposalText(page) {
  const lines = page.locator(".monaco-diff-editor .editor.modified .view-lines").first();
  return (await lines.innerText()).replace(/\u00a0/g, " ");
}

/** The notification of the proposal, with its Accept and Reject buttons: a toast, or in the
 * notification center (where VS Code puts it when it does not show toasts). */
async function notification(page) {
  const toast = page.locator(".notifications-toasts .notification-toast", { hasText: "proposes a change to greet.py" });
  const shown = await poll(async () => ((await toast.count()) > 0 ? toast.first().innerText() : null), "the proposal's notification", 5_000).catch(() => "");
  if (shown) {
    return shown;
  }
  await page.locator('.statusbar-item[id="status.notifications"], .statusbar-item .codicon-bell, .statusbar-item .codicon-bell-dot, .statusbar-item .codicon-bell-slash').first().click();
  const center = page.locator(".notifications-center .notifications-list-container .monaco-list-row", { hasText: "proposes a change to greet.py" });
  const text = await poll(async () => ((await center.count()) > 0 ? center.first().innerText() : null), "the proposal in the notification center", 5_000).catch(async () => `not in the center either: ${await page.locator(".notifications-center").innerText().catch((e) => String(e))}`);
  await page.keyboard.press("Escape");
  return text;
}

let page;

async function main() {
  mkdirSync(artifacts, { recursive: true });
  page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
  await page.goto(`${base}/?folder=${encodeURIComponent(workspace)}`);
  await page.waitForSelector(".monaco-workbench", { timeout: 60_000 });
  // Opening a Python file activates the test extension: ruff and jedi start.
  await quickPick(page, "Control+P", "main.py", '[aria-label*="main.py"]', log);
  await poll(async () => (await editorText(page)).includes("import os"), "main.py in an editor");
  await poll(() => existsSync(ready), "ruff server and jedi-language-server to run", 60_000);
  const squiggle = await poll(async () => (await page.locator(".monaco-editor .squiggly-warning, .monaco-editor .squiggly-error").count()) > 0, "ruff's squiggle in main.py", 30_000).catch(() => false);
  check("the user sees ruff's diagnostic in main.py (a squiggle)", squiggle);

  await runCommand(page, "ACP: Open Chat", log);
  const chat = await chatFrame(page);
  await poll(async () => (await chat.locator("#agent").inputValue()) === "claude", "claude in the agent picker", 30_000);
  // The user selects `helper` on line 5 (the selection tool reads it); after the
  // command palette, whose Escape would clear it.
  await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+Home");
  for (let i = 0; i < 4; i++) {
    await page.keyboard.press("ArrowDown");
  }
  for (let i = 0; i < 6; i++) {
    await page.keyboard.press("ArrowRight");
  }
  await page.keyboard.press("Shift+Control+ArrowRight");

  // -- turn 1: the read-only tools ----------------------------------------------------------
  await turn(chat, page, "What is wrong in main.py, and where is helper defined?");
  const titles = await chat.locator("details.tool .tool-title").allInnerTexts();
  const first = ["diagnostics", "definition", "references", "hover", "documentSymbols", "workspaceSymbols", "openEditors", "selection"];
  check(
    "the chat shows the editor tool calls",
    first.every((tool) => titles.some((t) => t.includes(`mcp__editor__${tool}`))),
    titles.join(" | "),
  );
  await shot(page, "editor-tools-diagnostics.png");

  // -- turn 2: openDiff, the user edits the proposal and accepts it ----------------------------
  const before = readFileSync(greet, "utf8");
  let shown = "";
  let toast = "";
  const reviewed = await turn(chat, page, "Make the greeting friendlier", async (p) => {
    shown = await poll(async () => {
      const text = await proposalText(p);
      return text.includes("Howdy") ? text : null;
    }, "the proposal in the diff editor", 15_000).catch(async () => proposalText(p));
    toast = await notification(p);
    await shot(p, "editor-tools-open-diff.png");
    await p.locator(".monaco-diff-editor .editor.modified .view-lines").first().click();
    await p.keyboard.press("Control+End");
    await p.keyboard.type(kept);
    await p.keyboard.press("Enter");
    await poll(async () => (await proposalText(p)).includes(kept), "the user's line in the proposal");
    await p.locator('.editor-actions [aria-label^="Accept the Agent"]').first().click();
  });
  check("the diff editor shows the agent's proposal beside the file", reviewed && shown.includes("Howdy"), shown);
  check("a notification offers Accept and Reject", /Accept/.test(toast) && /Reject/.test(toast), toast);
  const closed = await poll(async () => (await diffTab(page).count()) === 0, "the diff to close", 10_000).catch(() => false);
  check("accepting closes the diff", closed);
  check("openDiff leaves the file on disk alone", readFileSync(greet, "utf8") === before, readFileSync(greet, "utf8"));

  // -- turn 3: openDiff, the user closes the diff (a reject) -----------------------------------
  const rejected = await turn(chat, page, "Try another greeting", async (p) => {
    await poll(async () => (await proposalText(p)).includes("Hi there"), "the second proposal", 15_000);
    await diffTab(p).first().hover();
    await diffTab(p).first().locator(".tab-actions .codicon-close, .tab-actions [aria-label^='Close']").first().click();
  });
  const gone = await poll(async () => (await diffTab(page).count()) === 0, "the diff to close", 10_000).catch(() => false);
  check("closing the diff tab ends the review", rejected && gone);
  await shot(page, "editor-tools-rejected.png");

  // -- turn 4: openDiff, the user changes the proposal and saves it (Ctrl+S keeps it) ----------
  const saved = await turn(chat, page, "Keep it short", async (p) => {
    await poll(async () => (await proposalText(p)).includes("Hi there"), "the proposal to save", 15_000);
    await p.locator(".monaco-diff-editor .editor.modified .view-lines").first().click();
    await p.keyboard.press("Control+Home");
    await p.keyboard.press("ArrowDown");
    await p.keyboard.press("End");
    // after `"Hi there`: the cursor ends the line `    return "Hi there, " + name`
    for (let i = 0; i < ', " + name'.length; i++) {
      await p.keyboard.press("ArrowLeft");
    }
    await p.keyboard.type(" and welcome");
    await poll(async () => (await proposalText(p)).includes("Hi there and welcome"), "the user's words in the proposal");
    await p.keyboard.press("Control+S");
  });
  const savedGone = await poll(async () => (await diffTab(page).count()) === 0, "the diff to close", 10_000).catch(() => false);
  check("saving the proposal (Ctrl+S) keeps it and closes the diff with no question", saved && savedGone, await page.locator(".monaco-dialog-box").allInnerTexts().then((t) => t.join(" ")).catch(() => ""));

  // -- turn 5: openDiff, the user edits it, closes the diff, and does not save: a reject ------
  let question = "";
  const dropped = await turn(chat, page, "Or this", async (p) => {
    await poll(async () => (await proposalText(p)).includes("Howdy"), "the proposal to drop", 15_000);
    await p.locator(".monaco-diff-editor .editor.modified .view-lines").first().click();
    await p.keyboard.press("Control+End");
    await p.keyboard.type("# not this after all");
    await diffTab(p).first().hover();
    await diffTab(p).first().locator(".tab-actions .codicon-close, .tab-actions [aria-label^='Close']").first().click();
    const dialog = p.locator(".monaco-dialog-box");
    question = await poll(async () => ((await dialog.count()) > 0 ? dialog.first().innerText() : null), "VS Code's save question", 10_000);
    await dialog.locator("a.monaco-button, button", { hasText: /^Don't Save$/ }).first().click();
  });
  const droppedGone = await poll(async () => (await diffTab(page).count()) === 0, "the diff to close", 10_000).catch(() => false);
  check("closing an edited proposal asks to save; Don't Save closes it", dropped && droppedGone && /save/i.test(question), question);

  // -- turn 6: openDiff, the user stops the turn: the review is withdrawn ---------------------
  await chat.locator("#input").fill("And once more");
  await chat.locator("#input").press("Enter");
  await poll(async () => {
    const allow = chat.locator('.permission:not(.answered) button[data-kind="allow_once"]').first();
    if (await allow.isVisible().catch(() => false)) {
      await allow.click();
    }
    return (await diffTab(page).count()) > 0;
  }, "the third proposal", 120_000);
  await chat.locator("#cancel").click();
  const withdrawn = await poll(async () => (await diffTab(page).count()) === 0, "the diff to close", 20_000).catch(() => false);
  const idle = await poll(async () => (await chat.locator("#statusline").innerText()).includes("Idle"), "the turn to end", 30_000).catch(() => false);
  check("stopping the turn closes the open review", withdrawn && idle, await chat.locator("#statusline").innerText());
}

let code = 0;
try {
  await main();
} catch (error) {
  log(`failed: ${error?.stack ?? error}`);
  check("flow", false, error?.message ?? String(error));
  if (page) {
    await shot(page, "editor-tools-failure.png").catch(() => undefined);
  }
  code = 1;
} finally {
  await browser.close().catch(() => undefined);
}
process.exit(code);
