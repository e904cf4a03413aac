// Drives a running code-server with Debian's Chromium through playwright-core
// (reference/real-editor-testing.md §2.4, §2.5). Two modes:
//
//   node driver.mjs harness   runs the extension's e2e suite in VS Code's own extension-test
//                             harness (smoke-test-driver `payload` URL); exit code = verdict
//   node driver.mjs ui        uses the chat view like a person: types, clicks, reads the DOM,
//                             saves screenshots; prints one JSON line per check
//
// Configuration comes from the environment (set by tests/vscode/test_vscode.py):
//   ACP_LSP_VSCODE_TOOLS   .cache/vscode (where playwright-core is installed)
//   CODE_SERVER_URL        http://127.0.0.1:PORT
//   ACP_LSP_WORKSPACE      the folder code-server opens
//   ACP_LSP_EXTENSION_DIR  editors/vscode (harness mode)
//   ACP_LSP_ARTIFACTS      where screenshots go (ui mode)
//   CHROMIUM               the browser (default /usr/bin/chromium)

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chatFrame, editorText, launchBrowser, poll, quickPick as pick, runCommand as run } from "./workbench.mjs";

const base = process.env.CODE_SERVER_URL;
const workspace = process.env.ACP_LSP_WORKSPACE;
const mode = process.argv[2];

const browser = await launchBrowser();

function log(message) {
  process.stderr.write(`[driver ${mode}] ${message}\n`);
}

async function harness() {
  const extensionDir = process.env.ACP_LSP_EXTENSION_DIR;
  const auth = new URL(base).host;
  const payload = JSON.stringify([
    ["extensionDevelopmentPath", `vscode-remote://${auth}${extensionDir}`],
    ["extensionTestsPath", `vscode-remote://${auth}${extensionDir}/out/test/index.js`],
  ]);
  const page = await browser.newPage();
  const timeoutMs = Number(process.env.ACP_LSP_HARNESS_TIMEOUT_MS || 180_000);
  const code = await new Promise((resolve) => {
    const timer = setTimeout(() => {
      log(`no result after ${timeoutMs} ms`);
      resolve(124);
    }, timeoutMs);
    page
      .exposeFunction("codeAutomationExit", (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      })
      .then(() =>
        page.goto(`${base}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(payload)}`),
      )
      .catch((error) => {
        log(`navigation failed: ${error}`);
        clearTimeout(timer);
        resolve(125);
      });
  });
  return code;
}

// -- UI checks -------------------------------------------------------------------------------

const checks = [];
function check(name, ok, detail = "") {
  checks.push({ name, ok: Boolean(ok), detail: String(detail).slice(0, 2000) });
  process.stdout.write(`${JSON.stringify({ name, ok: Boolean(ok), detail: String(detail).slice(0, 2000) })}\n`);
}

function quickPick(page, key, text, row) {
  return pick(page, key, text, row, log);
}

function runCommand(page, title) {
  return run(page, title, log);
}

let uiPage;
const artifacts = process.env.ACP_LSP_ARTIFACTS;

async function shot(page, name) {
  const path = join(artifacts, name);
  await page.screenshot({ path });
  log(`screenshot ${path}`);
}

async function ui() {
  mkdirSync(artifacts, { recursive: true });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  uiPage = page;
  // Errors of the chat webview: CSP violations and exceptions thrown by its script.
  const webviewErrors = [];
  page.on("console", (msg) => {
    const where = msg.location()?.url ?? "";
    if (msg.type() === "error" && (/Content Security Policy/.test(msg.text()) || where.includes("webview.js"))) {
      webviewErrors.push(`${msg.text()} (${where})`);
    }
  });
  await page.goto(`${base}/?folder=${encodeURIComponent(workspace)}`);
  await page.waitForSelector(".monaco-workbench", { timeout: 60_000 });
  log("workbench ready");

  // Open the file the demo agent will edit, so the edit lands in a visible editor.
  await quickPick(page, "Control+P", "app.py", '[aria-label*="app.py"]');
  await poll(async () => (await editorText(page)).includes("def greet"), "src/app.py in an editor");

  await runCommand(page, "ACP: Open Chat");
  const chat = await chatFrame(page);
  // A wider side bar, as a person would drag it, for readable screenshots.
  const box = await page.locator(".part.sidebar").boundingBox().catch(() => null);
  if (box) {
    const y = box.y + box.height / 2;
    await page.mouse.move(box.x + box.width + 1, y);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width + 260, y, { steps: 5 });
    await page.mouse.up();
  }
  await poll(async () => (await chat.locator("#agent option").count()) > 0, "the agent picker filled");
  check("the chat view opens with the agent picker filled", true, await chat.locator("#agent").innerText());
  check(
    "the chat shows the active file as context",
    (await chat.locator("#context").innerText()).includes("app.py"),
    await chat.locator("#context").innerText(),
  );

  // Slash-command completion (commands arrive with the session, created on the first prompt:
  // start one through the "new session" button).
  await chat.locator("#new").click();
  await poll(async () => (await chat.locator("#mode option").count()) > 0, "the mode picker filled");
  check("the mode picker lists the agent's modes", true, await chat.locator("#mode").innerText());
  await chat.locator("#input").click();
  await chat.locator("#input").type("/ex");
  await poll(async () => chat.locator("#completions").isVisible(), "the completion list");
  const completions = await chat.locator("#completions").innerText();
  check("typing / offers the agent's slash commands", completions.includes("/explain"), completions);
  await shot(page, "chat-slash-completion.png");
  await chat.locator("#input").press("Tab");
  check("Tab completes the command", (await chat.locator("#input").inputValue()) === "/explain ", await chat.locator("#input").inputValue());
  await chat.locator("#input").fill("");

  // Context: `@` offers workspace files; the choice becomes a chip with a × that removes it.
  await chat.locator("#input").type("Look at @src/ap");
  await poll(async () => (await chat.locator("#mentions").isVisible()) && (await chat.locator("#mentions").innerText()).includes("src/app.py"), "the @ list");
  check("typing @ offers workspace files", true, await chat.locator("#mentions").innerText());
  await chat.locator("#input").press("Tab");
  await poll(async () => (await chat.locator("#attachments .chip").count()) === 1, "the chip under the input");
  const chipText = await chat.locator("#attachments").innerText();
  check(
    "the chosen file shows as a chip under the input",
    chipText.includes("src/app.py") && (await chat.locator("#input").inputValue()) === "Look at @src/app.py ",
    `${chipText} | ${await chat.locator("#input").inputValue()}`,
  );
  await shot(page, "chat-attachments.png");
  await chat.locator("#attachments .chip-remove").first().click();
  await poll(async () => (await chat.locator("#attachments .chip").count()) === 0, "the chip removed");
  check("× removes the chip", await chat.locator("#attachments").isHidden());
  // A pasted image, for the demo agent which does not take images: the chat says why.
  await chat.locator("#input").evaluate((el, b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], "shot.png", { type: "image/png" }));
    el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==");
  const refusal = await poll(async () => {
    const text = (await chat.locator("#error").isVisible()) ? await chat.locator("#error").innerText() : "";
    return text.includes("image") ? text : null;
  }, "the refusal", 10_000).catch(() => "no message shown");
  check(
    "a pasted image for an agent without image support is refused with the reason",
    refusal.includes("does not accept images") && (await chat.locator("#attachments .chip").count()) === 0,
    refusal,
  );
  await chat.locator("#input").fill("");

  // A full turn: stream, permission prompt, edit, terminal, usage.
  await chat.locator("#input").type("Please review this file");
  await chat.locator("#input").press("Enter");
  await poll(async () => chat.locator(".permission").isVisible(), "the permission prompt", 30_000);
  const buttons = await chat.locator(".permission button").allInnerTexts();
  check("the permission prompt offers the agent's options as buttons", buttons.join("|") === "Allow|Always allow|Reject", buttons.join("|"));
  check("the permission prompt shows the diff", (await chat.locator(".permission .dl.add").count()) > 0);
  const streamed = await chat.locator(".message.agent").first().innerText();
  check("the answer streamed in before the turn ended", streamed.length > 0, streamed);
  await shot(page, "chat-permission.png");
  await chat.locator('.permission button[data-option="allow"]').click();
  await poll(async () => (await chat.locator("#statusline").innerText()).includes("Idle"), "the turn to end", 30_000);
  const answers = await chat.locator(".message.agent").allInnerTexts();
  check("the agent's answer is shown", answers.join("\n").includes("I added a review note"), answers.join("\n"));
  check("the thought is collapsed", (await chat.locator("details.thought[open]").count()) === 0 && (await chat.locator("details.thought").count()) > 0);
  const tools = await chat.locator("details.tool .tool-title").allInnerTexts();
  check("tool calls are shown with titles", tools.some((t) => t.startsWith("Read")) && tools.some((t) => t.startsWith("Edit")), tools.join("|"));
  check("completed tool calls carry their status", (await chat.locator("details.tool.status-completed").count()) >= 3);
  check("the read tool call shows its location", (await chat.locator(".loc").count()) > 0);
  const terminal = await poll(async () => {
    const text = await chat.locator(".term-output").first().innerText();
    return text.includes("app.py") ? text : null;
  }, "the terminal output", 5_000).catch(async () => `missing: ${await chat.locator(".terminal").first().innerHTML()}`);
  check("the terminal output is shown", terminal.includes("src/app.py"), terminal);
  check("the plan is shown and complete", (await chat.locator(".plan li.plan-completed").count()) >= 3);
  check("usage is shown", (await chat.locator(".usage").innerText()).includes("tokens"), await chat.locator(".usage").innerText());
  await poll(async () => (await editorText(page)).includes("acp-lsp demo: reviewed"), "the edit in the open editor");
  check("the edit landed in the open editor", true);
  const statusbar = await page.locator(".statusbar").innerText();
  check("the status bar shows the session's state", /idle/.test(statusbar), statusbar.replace(/\s+/g, " "));
  await shot(page, "chat-after-turn.png");

  const summary = await chat.locator(".turn-review").innerText().catch(() => "");
  check(
    "the turn's summary lists the changed file with Keep and Reject",
    /1 file changed/.test(summary) && /src\/app\.py/.test(summary) && /modified/.test(summary) && /Keep all/.test(summary) && /Reject/.test(summary),
    summary,
  );

  // Review: Undo the edit from the tool call's review bar.
  await chat.locator('.review-bar button[data-review="reject"]').first().click();
  await poll(async () => (await chat.locator(".review-bar.done").count()) > 0, "the review done");
  await poll(async () => !(await editorText(page)).includes("acp-lsp demo: reviewed"), "the edit undone in the editor");
  check("Undo on a tool call restores the file", true);
  const decided = await poll(async () => {
    const text = await chat.locator(".turn-review").innerText();
    return text.includes("Rejected") ? text : null;
  }, "the summary updated", 5_000).catch(async () => chat.locator(".turn-review").innerText());
  check("the turn's summary follows the tool call's review (Rejected, no Keep all)", decided.includes("Rejected") && !decided.includes("Keep all"), decided);

  // Cancel a slow turn from the Stop button.
  await chat.locator("#input").type("Take it slow");
  await chat.locator("#input").press("Enter");
  await poll(async () => chat.locator("#cancel").isVisible(), "the Stop button");
  await poll(async () => (await chat.locator(".message.agent").count()) >= 2 || chat.locator(".permission").isVisible(), "the slow turn to stream");
  await chat.locator("#cancel").click();
  await poll(async () => (await chat.locator("#statusline").innerText()).includes("cancelled"), "the turn cancelled", 20_000);
  check("Stop cancels the turn", true, await chat.locator("#statusline").innerText());
  await shot(page, "chat-cancelled.png");
  await queuedPrompts(page, chat);

  // Session list: start a new session, then load the first one back from the list.
  await chat.locator("#new").click();
  await poll(async () => (await chat.locator("#timeline .entry").count()) === 0, "an empty new session");
  await chat.locator("#history").click();
  await poll(async () => (await chat.locator(".session-row").count()) >= 2, "the session list");
  const rows = await chat.locator(".session-row").allInnerTexts();
  check("the session list shows the sessions", rows.some((r) => r.includes("Please review")), rows.join(" | "));
  await shot(page, "chat-sessions.png");
  await chat.locator(".session-row", { hasText: "Please review" }).first().click();
  await poll(
    async () => (await chat.locator(".message.agent").allInnerTexts()).join("\n").includes("I added a review note"),
    "the loaded session's history",
  );
  check("a listed session loads into the chat", true);
  await restoreCheckpoint(page, chat);
  await editAndResend(page, chat, "Please review this file again");
  await sessionManagement(page, chat);
  const tab = await chatTabs(page, chat);
  await longTurn(page, chat);
  await tabsAfterReload(page, tab);
  check("the chat webview logged no CSP violation or script error", webviewErrors.length === 0, webviewErrors.join("\n"));
  return checks.every((c) => c.ok) ? 0 : 1;
}

/** A turn longer than the chat keeps in its DOM (the flood agent: 300 messages, 300 tool
 * calls): its end is shown, and scrolling up brings back every entry, the first ones too. */
async function longTurn(page, chat) {
  const entries = "601"; // the prompt, then 600 items
  await chat.locator("#agent").selectOption("flood");
  await chat.locator("#new").click();
  // The chat before may be empty too: wait for the new session itself (the status bar names
  // the session of the chat last used, this one), or the prompt goes to the one before.
  await poll(
    async () => (await statusbarText(page)).includes("(flood)") && (await chat.locator("#timeline .entry").count()) === 0,
    "an empty flood session",
  );
  await chat.locator("#input").fill("history 600");
  await chat.locator("#input").press("Enter");
  await poll(
    async () => (await chat.locator("#timeline").getAttribute("data-entries")) === entries && (await chat.locator("#statusline").innerText()).includes("Idle"),
    "the long turn to end",
    60_000,
  );
  const shown = await chat.locator("#timeline .entry").count();
  // textContent: an entry off screen is not laid out (content-visibility), its innerText "".
  const last = await chat.locator("#timeline .entry").last().textContent();
  check("a long turn keeps only its end in the chat's DOM, up to its last entry", shown < 601 && last.includes("src/module_599.py"), `${shown} entries in the DOM; last: ${last}`);
  await poll(
    async () => {
      await chat.evaluate(() => window.scrollTo(0, 0));
      return (await chat.locator('#timeline [data-key="m:0"]').count()) > 0;
    },
    "the first entries after scrolling up",
    30_000,
  );
  const first = await chat.locator("#timeline .entry").nth(1).textContent();
  const all = await chat.locator("#timeline .entry").count();
  check("scrolling to the top of a long turn shows its first entries", first.includes("Message 0, part 0") && all === 601, `${all} entries; second: ${first}`);
  await chat.evaluate(() => window.scrollTo(0, 0));
  await shot(chat.page(), "chat-long-turn-top.png");
}

/** Prompts typed while a slow turn runs wait above the input: one taken back to edit, one
 * removed, one sent now (the slow turn stops, that prompt is answered). */
async function queuedPrompts(page, chat) {
  await chat.locator("#input").fill("Take it slow, once more");
  await chat.locator("#input").press("Enter");
  await poll(async () => chat.locator("#cancel").isVisible(), "the slow turn to start");
  for (const text of ["/help queued first", "/help queued second", "/help queued third"]) {
    await chat.locator("#input").fill(text);
    await chat.locator("#input").press("Enter");
  }
  const texts = async () => chat.locator("#queue .queued-text").allInnerTexts();
  const listed = await poll(async () => ((await texts()).length === 3 ? await texts() : null), "three queued prompts", 10_000).catch(texts);
  check(
    "prompts typed while a turn runs wait in a list above the input, in order",
    listed.join("|") === "/help queued first|/help queued second|/help queued third" && (await chat.locator("#send").innerText()) === "Queue",
    listed.join("|"),
  );
  await shot(page, "chat-queue.png");
  await chat.locator('#queue [data-queued="edit"]').nth(2).click();
  const edited = await poll(async () => ((await chat.locator("#input").inputValue()) === "/help queued third" && (await texts()).length === 2 ? "edited" : null), "the third back in the input").catch(
    async () => `input: ${await chat.locator("#input").inputValue()}; queue: ${(await texts()).join("|")}`,
  );
  check("Edit takes a queued prompt back into the input", edited === "edited", edited);
  await chat.locator("#input").fill("");
  await chat.locator('#queue [data-queued="remove"]').nth(1).click();
  const removed = await poll(async () => ((await texts()).join("|") === "/help queued first" ? "removed" : null), "the second removed").catch(async () => (await texts()).join("|"));
  check("Remove withdraws a queued prompt", removed === "removed", removed);
  const agents = await chat.locator(".message.agent").count();
  await chat.locator('#queue [data-queued="sendNow"]').first().click();
  const sent = await poll(async () => {
    const users = await chat.locator(".message.user").allInnerTexts();
    const idle = (await chat.locator("#statusline").innerText()).includes("Idle");
    return idle && users.some((u) => u.includes("/help queued first")) && (await chat.locator(".message.agent").count()) > agents ? users : null;
  }, "the queued prompt answered", 30_000).catch(async () => `missing: ${await chat.locator("#statusline").innerText()}`);
  const never = (await chat.locator(".message.user").allInnerTexts()).filter((u) => u.includes("queued second") || u.includes("queued third"));
  check(
    "Send now stops the running turn and sends the queued prompt; removed ones never reach the agent",
    Array.isArray(sent) && never.length === 0 && (await chat.locator("#queue").isHidden()),
    Array.isArray(sent) ? sent.join(" | ") : sent,
  );
}

/** Another edit, then "Restore checkpoint" on its message: a modal lists the file first, and
 * the file goes back in the open editor. */
async function restoreCheckpoint(page, chat) {
  await chat.locator("#input").fill("Please review this file again");
  await chat.locator("#input").press("Enter");
  await poll(async () => chat.locator(".permission").isVisible(), "the permission prompt", 30_000);
  await chat.locator('.permission button[data-option="allow"]').click();
  await poll(async () => (await chat.locator("#statusline").innerText()).includes("Idle"), "the turn to end", 30_000);
  await poll(async () => (await editorText(page)).includes("acp-lsp demo: reviewed"), "the edit in the open editor");
  // the change in the editor itself: its lines marked, Keep | Reject above them
  const lenses = page.locator(".monaco-editor .codelens-decoration");
  const lensText = await poll(async () => {
    const text = (await lenses.allInnerTexts()).join(" ");
    return text.includes("Keep") && text.includes("Reject") ? text : null;
  }, "the Keep | Reject lens in the editor", 15_000).catch(async () => `missing: ${(await lenses.allInnerTexts()).join(" ")}`);
  check("an agent's change shows Keep | Reject in the editor, over its lines", !lensText.startsWith("missing"), lensText);
  await shot(page, "editor-hunk-lens.png");
  await lenses.locator("a", { hasText: "Keep" }).first().click();
  const kept = await poll(async () => ((await lenses.allInnerTexts()).join(" ").includes("Keep") ? null : "kept"), "the lens gone once kept", 10_000).catch(
    async () => `still: ${(await lenses.allInnerTexts()).join(" ")}`,
  );
  check("Keep on the lens keeps the change and the lens goes", kept === "kept" && (await editorText(page)).includes("acp-lsp demo: reviewed"), kept);
  const message = chat.locator(".message.user", { hasText: "Please review this file again" }).last();
  await message.hover();
  await message.locator('[data-action="restoreCheckpoint"]').click();
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor({ state: "visible", timeout: 10_000 });
  const question = (await dialog.innerText()).replace(/\s+/g, " ");
  check(
    "Restore checkpoint lists the files in a modal before it changes them",
    question.includes("Restore 1 file to before this message?") && question.includes("restore src/app.py") && (await editorText(page)).includes("acp-lsp demo: reviewed"),
    question,
  );
  await shot(page, "chat-restore-checkpoint.png");
  await dialog.getByRole("button", { name: "Restore", exact: true }).click();
  const back = await poll(async () => (!(await editorText(page)).includes("acp-lsp demo: reviewed") ? "restored" : null), "the file back in the editor", 10_000).catch(
    async () => `still: ${(await editorText(page)).slice(0, 300)}`,
  );
  check("Restore checkpoint puts the file back in the open editor", back === "restored", back);
}

/** "Edit and resend" on the last message: the chat moves to a session from before it, the
 * message's text in the input; sent again, it is answered there. The rewound session is then
 * closed and the first one shown again (the session checks below count the open ones). */
async function editAndResend(page, chat, text) {
  const message = chat.locator(".message.user", { hasText: text }).last();
  await message.hover();
  await message.locator('[data-action="editResend"]').click();
  const input = await poll(async () => {
    const value = await chat.locator("#input").inputValue();
    return value === text ? value : null;
  }, "the message's text in the input", 20_000).catch(async () => `missing: ${await chat.locator("#input").inputValue()}`);
  const users = await chat.locator(".message.user", { hasText: text }).count();
  const earlier = await chat.locator(".message.user", { hasText: "Please review this file" }).count();
  check(
    "Edit and resend opens a session from before the message, its text in the input",
    input === text && users === 0 && earlier > 0,
    `input: ${input}; messages with the text: ${users}; earlier messages: ${earlier}`,
  );
  await shot(page, "chat-edit-resend.png");
  await chat.locator("#input").fill(`${text}, edited`);
  await chat.locator("#input").press("Enter");
  const answered = await poll(async () => {
    if (await chat.locator(".permission").first().isVisible()) {
      await chat.locator('.permission button[data-option="reject"]').first().click();
    }
    const shown = await chat.locator(".message.user").allInnerTexts();
    return shown.some((t) => t.includes(`${text}, edited`)) && (await chat.locator("#statusline").innerText()).includes("Idle") ? "answered" : null;
  }, "the edited prompt answered", 30_000).catch(async () => `missing: ${await chat.locator("#statusline").innerText()}`);
  check("the edited prompt is sent in the rewound session", answered === "answered", answered);
  await runCommand(page, "ACP: Close Session");
  await poll(async () => !(await page.locator(".quick-input-widget").isVisible()), "the palette closed");
  await page.locator('.part.sidebar [aria-label^="Switch Session"]').first().click();
  const row = page.locator(".quick-input-widget .quick-input-list .monaco-list-row", { hasText: "Please review" }).first();
  await row.click();
  await poll(async () => (await chat.locator(".message.user", { hasText: text }).count()) > 0, "the first session back in the chat");
}

/** The agent's messages shown in a chat's frame. */
async function agentText(frame) {
  return (await frame.locator(".message.agent").allInnerTexts()).join("\n");
}

async function statusbarText(page) {
  return (await page.locator(".statusbar").innerText()).replace(/\s+/g, " ");
}

// Several sessions side by side: switch from the chat view's title bar, a turn running in the
// background counted in the status bar, rename and delete from the command palette.
async function sessionManagement(page, chat) {
  const switchButton = page.locator('.part.sidebar [aria-label^="Switch Session"]').first();
  check("the chat view's title bar offers Switch Session", await switchButton.isVisible().catch(() => false));
  const rows = page.locator(".quick-input-widget .quick-input-list .monaco-list-row");
  // The rows of the switcher (the list may still hold the last command palette's rows).
  const widget = page.locator(".quick-input-widget");
  const switcher = async () => {
    await poll(async () => !(await widget.isVisible()), "no quick input open");
    await switchButton.click();
    return poll(async () => {
      if (!(await widget.isVisible())) {
        return null;
      }
      const texts = (await rows.allInnerTexts()).map((r) => r.replace(/\s+/g, " "));
      return texts.some((t) => t.includes("· active")) ? texts : null;
    }, "the session switcher");
  };
  const offered = await switcher();
  check(
    "Switch Session lists the open sessions, the active one first, with agent and state",
    offered.length === 2 && /Please review.*demo · idle · active/.test(offered[0]) && /demo · idle/.test(offered[1]),
    offered.join(" | "),
  );
  await shot(page, "session-switcher.png");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  await poll(async () => (await chat.locator("#timeline .entry").count()) === 0, "the other, empty session in the chat");
  check("picking a session in the switcher shows it in the chat", true);

  // A slow turn here, then back to the first session: it runs on in the background.
  await chat.locator("#input").fill("Take it slow in the background");
  await chat.locator("#input").press("Enter");
  await poll(async () => chat.locator("#cancel").isVisible(), "the turn to start");
  await switcher();
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  await poll(async () => (await chat.locator(".message.agent").allInnerTexts()).join("\n").includes("I added a review note"), "the first session back");
  const running = await poll(async () => {
    const text = await statusbarText(page);
    return text.includes("1 more running") ? text : null;
  }, "the background count").catch(async () => `missing: ${await statusbarText(page)}`);
  check("the status bar counts the session running in the background", running.includes("· 1 more running"), running);
  const waiting = await poll(async () => {
    const text = await statusbarText(page);
    return text.includes("1 needs permission") ? text : null;
  }, "the background permission", 30_000).catch(async () => `missing: ${await statusbarText(page)}`);
  check("the status bar shows that the background session needs permission", waiting.includes("1 more running, 1 needs permission"), waiting);
  const from = await chat.locator(".permission .perm-session").first().innerText().catch(() => "missing");
  check("the background session's permission prompt in the chat says whose it is", from.includes("Take it slow in the background"), from);
  await shot(page, "session-background.png");
  // Reject the background prompt (shown in the chat too): the turn ends, the count goes away.
  await chat.locator('.permission button[data-option="reject"]').first().click();
  const idle = await poll(async () => {
    const text = await statusbarText(page);
    return text.includes("more running") ? null : text;
  }, "the background turn to end", 30_000).catch(async () => `still: ${await statusbarText(page)}`);
  check("the background count goes away when the turn ends", !idle.includes("more running") && !idle.startsWith("still"), idle);

  // Rename the active session through the palette's input box.
  await runCommand(page, "ACP: Rename Session");
  const input = page.locator(".quick-input-widget .quick-input-box input");
  await input.waitFor({ state: "visible", timeout: 5_000 });
  await input.fill("Renamed in the UI");
  await page.keyboard.press("Enter");
  const renamed = await poll(async () => {
    const text = await statusbarText(page);
    return text.includes("Renamed in the UI") ? text : null;
  }, "the new name in the status bar").catch(async () => `missing: ${await statusbarText(page)}`);
  check("Rename Session: the status bar names the session by its new name", renamed.includes("Renamed in the UI"), renamed);
  check("Rename Session: the chat shows the new title", (await chat.locator("#title").innerText()) === "Renamed in the UI", await chat.locator("#title").innerText());
  await shot(page, "session-renamed.png");

  // Delete it: a modal asks first.
  await runCommand(page, "ACP: Delete Session");
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor({ state: "visible", timeout: 5_000 });
  const question = (await dialog.innerText()).replace(/\s+/g, " ");
  check("Delete Session asks in a modal dialog naming the session", question.includes('Delete the session "Renamed in the UI"?'), question);
  await shot(page, "session-delete.png");
  await dialog.getByRole("button", { name: "Delete", exact: true }).click();
  const after = await poll(async () => {
    const text = await statusbarText(page);
    return text.includes("Renamed in the UI") ? null : text;
  }, "the deleted session gone from the status bar").catch(async () => `still: ${await statusbarText(page)}`);
  check("after Delete Session the chat moves to the remaining session", !after.startsWith("still") && (await chat.locator("#timeline .entry").count()) > 0, after);
}

// Chats in editor tabs: the remaining session and a new one, each in a tab of its own, side by
// side; each tab is prompted and answered on its own.
async function chatTabs(page, chat) {
  await page.keyboard.press("Escape");
  const openButton = page.locator('.part.sidebar [aria-label^="Open This Session in an Editor Tab"]').first();
  check("the chat view's title bar offers Open This Session in an Editor Tab", await openButton.isVisible().catch(() => false));
  const tabChats = (count) =>
    poll(async () => {
      const frames = [];
      for (const frame of page.frames()) {
        if (frame !== chat && (await frame.$("#input").catch(() => null))) {
          frames.push(frame);
        }
      }
      return frames.length >= count ? frames : null;
    }, `${count} chat tab(s)`);
  const name = await chat.locator("#title").innerText();
  const answered = await agentText(chat);
  await openButton.click();
  const [first] = await tabChats(1);
  await poll(
    async () => (await first.locator("#title").innerText()) === name && (await agentText(first)) === answered,
    "the session's transcript in its tab",
  );
  check("Open Chat in Editor shows the session's transcript in an editor tab", answered.length > 0, name);

  // A new session in the side bar, then in a tab of its own beside the first.
  await chat.locator("#new").click();
  await poll(async () => (await chat.locator("#timeline .entry").count()) === 0, "an empty new session");
  await openButton.click();
  const second = (await tabChats(2)).find((frame) => frame !== first);
  await second.locator("#input").fill("/help with the commands"); // past the command: Enter sends
  await second.locator("#input").press("Enter");
  const help = await poll(async () => {
    const text = await agentText(second);
    return text.includes("I am the acp-lsp demo agent") ? text : null;
  }, "the answer in the second tab", 20_000).catch(async () => `missing: ${await agentText(second)}`);
  check("a chat tab's prompt is answered in that tab", !help.startsWith("missing"), help);
  const firstText = await agentText(first);
  check(
    "each chat tab shows only its own session",
    firstText === answered && !help.includes("src/app.py"),
    `first: ${firstText.slice(0, 200)} | second: ${help.slice(0, 200)}`,
  );
  const titles = (await page.locator(".tabs-container .tab").allInnerTexts()).map((t) => t.replace(/\s+/g, " "));
  check(
    "the chat tabs are titled by their sessions' names",
    // The new session's name: the agent's title for it, or the end of its id until it has one.
    titles.some((t) => t.trim() === name) && titles.some((t) => /^(\/help with the commands|Session …\w{6})$/.test(t.trim())),
    titles.join(" | "),
  );
  // Without the side bar, for a readable screenshot of the two tabs.
  await runCommand(page, "View: Toggle Primary Side Bar Visibility");
  await poll(async () => !(await page.locator(".part.sidebar").isVisible()), "the side bar hidden");
  await poll(async () => !(await page.locator(".quick-input-widget").isVisible()), "the command palette gone");
  await shot(page, "chat-tabs.png");
  // The side bar back for what follows in it.
  await runCommand(page, "View: Toggle Primary Side Bar Visibility");
  await poll(async () => await page.locator(".part.sidebar").isVisible(), "the side bar shown again");
  await poll(async () => !(await page.locator(".quick-input-widget").isVisible()), "the command palette gone");

  // The palette's commands act on the chat last clicked into: the first tab, then the side bar.
  // A webview may take the focus a moment late under load (the side bar's, shown again just
  // above): that closes the palette's input box, and that chat is then the last used. So, as a
  // user would, click into the chat meant, see the focus settle there, and ask again, at most
  // three times.
  const focusedFor = (frame, ms) =>
    poll(async () => {
      const held = async () => frame.evaluate(() => document.hasFocus() && document.activeElement?.id === "input").catch(() => false);
      if (!(await held())) return null;
      await new Promise((r) => setTimeout(r, ms));
      return (await held()) || null;
    }, "the focus in the chat clicked into", 10_000);
  const renameFromPalette = async (frame, title) => {
    for (let attempt = 1; ; attempt++) {
      await frame.locator("#input").click();
      await focusedFor(frame, 500).catch(() => null);
      await runCommand(page, "ACP: Rename Session");
      const input = page.locator(".quick-input-widget .quick-input-box input");
      try {
        await input.waitFor({ state: "visible", timeout: 5_000 });
        await input.fill(title, { timeout: 5_000 });
        await page.keyboard.press("Enter");
        return;
      } catch (error) {
        if (attempt === 3) throw error;
        await page.keyboard.press("Escape");
      }
    }
  };
  const titleOf = (frame, title) =>
    poll(async () => ((await frame.locator("#title").innerText()) === title ? title : null), `"${title}" in a chat`).catch(
      async () => `missing: ${await frame.locator("#title").innerText()}`,
    );
  const sideBarTitle = await chat.locator("#title").innerText();
  await renameFromPalette(first, "Renamed in its tab");
  const inTab = await titleOf(first, "Renamed in its tab");
  const sideBarKept = await chat.locator("#title").innerText();
  check(
    "after a click into a chat tab, Rename Session renames the tab's session, not the side bar's",
    inTab === "Renamed in its tab" && sideBarKept === sideBarTitle,
    `tab: ${inTab} | side bar: ${sideBarKept}`,
  );
  await renameFromPalette(chat, "Renamed in the side bar");
  const inSideBar = await titleOf(chat, "Renamed in the side bar");
  check("after a click into the side bar, Rename Session renames its session again", inSideBar === "Renamed in the side bar", inSideBar);

  // Switch Session's "Open in Editor Tab" button on a session: a new one, in a third tab.
  await chat.locator("#new").click();
  await poll(async () => (await chat.locator("#timeline .entry").count()) === 0, "an empty new session");
  await page.locator('.part.sidebar [aria-label^="Switch Session"]').first().click();
  const row = page.locator(".quick-input-widget .quick-input-list .monaco-list-row", { hasText: "active" }).first();
  await row.hover();
  await row.locator('[aria-label="Open in Editor Tab"]').click();
  const third = await tabChats(3).catch(() => []);
  const sideBarAfter = await chat.locator("#timeline .entry").count();
  check(
    "Switch Session's Open in Editor Tab button opens the session in a tab, the side bar stays on it",
    third.length === 3 && sideBarAfter === 0,
    `${third.length} chat tabs; side bar entries: ${sideBarAfter}`,
  );
  return { frame: first, title: "Renamed in its tab", text: answered };
}

// A window reload: the chat tabs come back, each with its session's title and transcript (the
// server restarts with the window: a session no longer running shows its stored transcript
// until a prompt resumes it).
async function tabsAfterReload(page, tab) {
  await runCommand(page, "Developer: Reload Window");
  await poll(async () => tab.frame.isDetached(), "the window to reload", 30_000);
  await page.waitForSelector(".monaco-workbench", { timeout: 60_000 });
  const restored = await poll(async () => {
    for (const frame of page.frames()) {
      if ((await frame.$("#input").catch(() => null)) && (await frame.locator("#title").innerText().catch(() => "")) === tab.title) {
        return frame;
      }
    }
    return null;
  }, "the chat tab back after the reload", 60_000).catch(() => null);
  const firstLine = tab.text.split("\n")[0];
  const text = restored
    ? await poll(async () => {
        const shown = await agentText(restored);
        return shown.includes(firstLine) ? shown : null;
      }, "the restored tab's transcript").catch(() => "no transcript")
    : "no restored tab";
  const titles = (await page.locator(".tabs-container .tab").allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
  check(
    "after a window reload, a chat tab is back with its session's title and transcript",
    restored && firstLine.length > 0 && !text.startsWith("no ") && titles.some((t) => t.startsWith(tab.title)),
    `tabs: ${titles.join(" | ")}; transcript: ${text.slice(0, 300)}`,
  );
  if (!restored) {
    return;
  }
  const status = await restored.locator("#statusline").innerText();
  await shot(page, "chat-tabs-reloaded.png");
  // A prompt in the restored tab: its session answers there (resumed if it had stopped). The
  // demo agent may ask for permission to edit first: that is an answer in the tab too.
  const agentCount = await restored.locator(".message.agent").count();
  await restored.locator("#input").fill("/help after the reload");
  await restored.locator("#input").press("Enter");
  const help = await poll(async () => {
    if (await restored.locator(".permission").first().isVisible()) {
      await restored.locator('.permission button[data-option="reject"]').first().click();
      return "asked for permission";
    }
    const shown = await restored.locator(".message.agent").allInnerTexts();
    return shown.length > agentCount ? shown.join("\n") : null;
  }, "the answer in the restored tab", 30_000).catch(async () => `missing: ${await restored.locator("#statusline").innerText()}`);
  check("a chat tab restored after a reload answers a prompt in its session", !help.startsWith("missing"), `status before: ${status} | ${help.slice(-300)}`);
}

let code;
try {
  code = mode === "harness" ? await harness() : await ui();
} catch (error) {
  log(`failed: ${error?.stack ?? error}`);
  if (mode === "ui") {
    check("ui flow", false, error?.message ?? String(error));
    if (uiPage) {
      await shot(uiPage, "failure.png").catch(() => undefined);
    }
  }
  code = 1;
} finally {
  await browser.close().catch(() => undefined);
}
process.exit(code);
