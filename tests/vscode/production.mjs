// A production agent (ACP_LSP_AGENT: claude or codex, against the scripted model) in
// code-server, used as a person would: an unsaved line in the open editor while the agent edits
// the file on disk, the chat's tool calls, diff and "files changed" summary, Ctrl+S, Keep and
// Reject. One JSON line per check on stdout (tests/vscode/test_vscode_production.py reads
// them). Environment as for driver.mjs, plus ACP_LSP_AGENT and ACP_LSP_MODE (a mode to pick
// before the first prompt).

import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chatFrame, editorText, launchBrowser, poll, quickPick, runCommand } from "./workbench.mjs";

const base = process.env.CODE_SERVER_URL;
const workspace = process.env.ACP_LSP_WORKSPACE;
const artifacts = process.env.ACP_LSP_ARTIFACTS;
const file = join(workspace, "greet.py");
const NOTE = "# my unsaved note";
const NOTE2 = "# another unsaved note";
const agent = process.env.ACP_LSP_AGENT || "claude";
const mode = process.env.ACP_LSP_MODE || "";

const browser = await launchBrowser();

function log(message) {
  process.stderr.write(`[${agent}] ${message}\n`);
}

function check(name, ok, detail = "") {
  process.stdout.write(`${JSON.stringify({ name, ok: Boolean(ok), detail: String(detail).slice(0, 3000) })}\n`);
}

async function shot(page, name) {
  await page.screenshot({ path: join(artifacts, name) });
  log(`screenshot ${name}`);
}

const disk = () => readFileSync(file, "utf8");

/** The editor tab of greet.py shows unsaved changes. */
async function dirty(page) {
  return (await page.locator(".tabs-container .tab.dirty", { hasText: "greet.py" }).count()) > 0;
}

/** Click at the end of the editor's text and type a line there (unsaved). */
async function typeLineAtEnd(page, text) {
  await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type(text);
  await page.keyboard.press("Enter");
  await poll(async () => (await editorText(page)).includes(text) && (await dirty(page)), `"${text}" typed, unsaved`);
}

/** What VS Code says in notifications and dialogs (a save conflict shows up there). */
async function questions(page) {
  const toasts = await page.locator(".notifications-toasts").innerText().catch(() => "");
  const dialogs = await page.locator(".monaco-dialog-box").allInnerTexts().catch(() => []);
  return `${toasts} ${dialogs.join(" ")}`.replace(/\s+/g, " ").trim();
}

/** Ctrl+S in the editor; true when it saved without a question (no "newer" conflict). */
async function saveAsking(page) {
  await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+S");
  const saved = await poll(async () => !(await dirty(page)), "the editor saved", 5_000).catch(() => false);
  await new Promise((r) => setTimeout(r, 800)); // a conflict's notification comes a moment later
  const said = await questions(page);
  return { saved: Boolean(saved) && !/newer|Failed to save|changed on disk/i.test(said), said };
}

/** Send a prompt and let the turn run, allowing every permission the agent asks for. */
async function turn(chat, text, timeoutMs = 180_000) {
  const agents = await chat.locator(".message.agent").count();
  await chat.locator("#input").fill(text);
  await chat.locator("#input").press("Enter");
  let allowed = 0;
  await poll(async () => {
    const allow = chat.locator('.permission:not(.answered) button[data-kind="allow_once"]').first();
    if (await allow.isVisible().catch(() => false)) {
      await allow.click();
      allowed++;
      return false;
    }
    const status = await chat.locator("#statusline").innerText();
    return status.includes("Idle") && (await chat.locator(".message.agent").count()) > agents;
  }, `the turn "${text}" to end`, timeoutMs);
  return allowed;
}

let page;

async function main() {
  mkdirSync(artifacts, { recursive: true });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`${base}/?folder=${encodeURIComponent(workspace)}`);
  await page.waitForSelector(".monaco-workbench", { timeout: 60_000 });
  await quickPick(page, "Control+P", "greet.py", '[aria-label*="greet.py"]', log);
  await poll(async () => (await editorText(page)).includes("def greet"), "greet.py in an editor");
  await typeLineAtEnd(page, NOTE);

  await runCommand(page, "ACP: Open Chat", log);
  const chat = await chatFrame(page);
  const box = await page.locator(".part.sidebar").boundingBox().catch(() => null);
  if (box) {
    const y = box.y + box.height / 2;
    await page.mouse.move(box.x + box.width + 1, y);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width + 260, y, { steps: 5 });
    await page.mouse.up();
  }
  await poll(async () => (await chat.locator("#agent").inputValue()) === agent, `${agent} in the agent picker`, 30_000);
  if (mode) {
    await chat.locator("#new").click();
    await poll(async () => (await chat.locator(`#mode option[value="${mode}"]`).count()) > 0, `the ${mode} mode offered`, 180_000);
    await chat.locator("#mode").selectOption(mode);
    await poll(async () => (await chat.locator("#mode").inputValue()) === mode, `the ${mode} mode set`);
  }

  // -- turn 1: the agent reads and edits greet.py on disk ------------------------------------
  const allowed = await turn(chat, "Change the greeting to Howdy");
  const titles = await chat.locator("details.tool .tool-title").allInnerTexts();
  const editTitle = agent === "claude" ? /^Edit/ : /greet\.py/;
  check("the chat shows the agent's tool calls", titles.length >= 2 && titles.some((t) => editTitle.test(t)), `${titles.join(" | ")} (allowed ${allowed})`);
  const diffText = await chat.locator("details.tool .diff").first().innerText().catch(() => "");
  check("the chat shows the edit's diff", diffText.includes("greet.py") && (await chat.locator("details.tool .dl.add").count()) > 0, diffText);
  const summary = await poll(async () => {
    const text = await chat.locator(".turn-review").innerText();
    return text.includes("greet.py") ? text : null;
  }, "the files-changed summary", 10_000).catch(() => "no summary");
  check("the chat sums the turn up: 1 file changed, greet.py modified, Keep / Reject", /1 file changed/.test(summary) && /modified/.test(summary) && /Keep/.test(summary) && /Reject/.test(summary), summary);
  const shown = await poll(async () => {
    // the sync reverts the document, then puts the user's text back: the end state counts
    const text = await editorText(page);
    return text.includes("Howdy") && text.includes(NOTE) && (await dirty(page)) ? text : null;
  }, "the change in the editor", 15_000).catch(async () => editorText(page));
  check("the open editor shows the agent's change with the unsaved line kept", shown.includes('f"Howdy, {name}!"') && shown.includes(NOTE), shown);
  check("the unsaved line is still unsaved; the disk has the agent's change only", (await dirty(page)) && disk().includes("Howdy") && !disk().includes(NOTE), disk());
  await shot(page, `files-changed-${agent}.png`);
  const first = await saveAsking(page);
  check("Ctrl+S saves with no question (no 'content of the file is newer')", first.saved, first.said);
  check("the disk has the agent's change and the user's line", disk().includes("Howdy") && disk().includes(NOTE), disk());
  await chat.locator('.turn-review button[data-review="accept"][data-path]').first().click();
  const kept = await poll(async () => {
    const text = await chat.locator(".turn-review").innerText();
    return text.includes("Kept") ? text : null;
  }, "Kept in the summary", 10_000).catch(() => "not kept");
  check("Keep in the summary keeps the file and shows Kept", kept.includes("Kept") && disk().includes("Howdy"), kept);

  // -- turn 2: the agent runs sed (a shell command); Reject from the summary ----------------
  const saved = disk();
  await typeLineAtEnd(page, NOTE2);
  await turn(chat, "Greet everyone");
  const afterSed = await poll(async () => {
    const text = await editorText(page);
    return text.includes("everyone") && text.includes(NOTE2) && (await dirty(page)) ? text : null;
  }, "the sed change in the editor", 15_000).catch(async () => editorText(page));
  check("a shell command's change reaches the editor with the unsaved line kept", afterSed.includes("everyone") && afterSed.includes(NOTE2), afterSed);
  const summary2 = await poll(async () => {
    const text = await chat.locator(".turn-review").innerText();
    return text.includes("greet.py") && !text.includes("Kept") ? text : null;
  }, "the second turn's summary", 10_000).catch(() => "no summary");
  check("the second turn's summary lists greet.py, pending", /1 file changed/.test(summary2) && /modified/.test(summary2), summary2);
  await chat.locator('.turn-review button[data-review="reject"][data-path]').first().click();
  const rejected = await poll(async () => {
    const text = await chat.locator(".turn-review").innerText();
    return text.includes("Rejected") ? text : null;
  }, "Rejected in the summary", 15_000).catch(() => "not rejected");
  check("Reject in the summary shows Rejected", rejected.includes("Rejected"), rejected);
  check("Reject restores the disk byte for byte", disk() === saved, JSON.stringify({ disk: disk(), expected: saved }));
  const followed = await poll(async () => {
    const text = await editorText(page);
    return !text.includes("everyone") && text.includes(NOTE2) ? text : null;
  }, "the editor to follow the reject", 10_000).catch(async () => editorText(page));
  check("the editor follows the reject and keeps the unsaved line", !followed.includes("everyone") && followed.includes(NOTE2) && followed.includes(NOTE), followed);
  await shot(page, `files-changed-${agent}-rejected.png`);
  const second = await saveAsking(page);
  check("Ctrl+S after the reject asks nothing either", second.saved, second.said);
  check("the disk has both of the user's lines and no sed change", disk().includes(NOTE) && disk().includes(NOTE2) && !disk().includes("everyone"), disk());
}

let code = 0;
try {
  await main();
} catch (error) {
  log(`failed: ${error?.stack ?? error}`);
  check("flow", false, error?.message ?? String(error));
  if (page) {
    await shot(page, `${agent}-failure.png`).catch(() => undefined);
  }
  code = 1;
} finally {
  await browser.close().catch(() => undefined);
}
process.exit(code);
