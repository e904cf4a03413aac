// Drives one benchmarked VS Code (code-server + Chromium, bench/vscode_bench.py): opens a
// normal text editor and the chat, then either runs one turn (BENCH_MODE=turn) or only types
// (BENCH_MODE=idle, the measurement's floor). Talks to the Python side in lines: prints
// {"phase":"ready"} and waits for a line on stdin before sending the prompt (the bench reads
// CPU times then), prints {"phase":"measured", ...} and waits for a line again before closing
// the browser (the bench reads the processes' memory then).
//
// Times: every instant is wall-clock milliseconds (performance.timeOrigin + performance.now())
// in the page that observed it; the driver's own clock is mapped onto the page's by the
// round trip with the smallest delay (offset = page - midpoint of the round trip).
//
//   t0            the chat's prompt input gets the Enter keydown (the prompt is sent)
//   dom           the last text is in the chat webview's DOM (a MutationObserver: the last
//                 chunk's marker at the end of the last agent message; for a tool turn, the
//                 status line back to Idle after the turn ran, the last tool call shown
//                 completed)
//   visible       the next animation frame after that: the frame holding the text was painted
//   key latency   from when a key was due (a fixed 20 ms schedule in the driver) to when the
//                 text editor's rendered lines (Monaco's .view-lines DOM) hold it: mostly the
//                 driver's own delays (CDP round trips; presses are serialised)
//   key → DOM     from the key's keydown (event.timeStamp: when the input was received) to
//                 when the rendered lines hold it (Monaco writes them in an animation frame,
//                 painted right after: this is the page's side of the key, without the paint)
//   key event     the browser's Event Timing duration of the key (keydown, keypress,
//                 beforeinput, input; the longest): from the input to the next paint after
//                 its handlers, as INP measures it. Only durations of 16 ms or more are
//                 reported; a key without an entry counts as 0 ("<16")
//
// Environment: ACP_LSP_VSCODE_TOOLS, CODE_SERVER_URL, ACP_LSP_WORKSPACE, CHROMIUM,
// BENCH_MODE, BENCH_PROMPT, BENCH_MARKER ("" = end of turn), BENCH_TAIL, BENCH_KEY_MS (0: no keys),
// BENCH_IDLE_MS, BENCH_TIMEOUT_MS, BENCH_SHOT (a screenshot after the turn), BENCH_PROFILE,
// BENCH_TRACE (a Chrome trace of the turn, devtools.timeline: what each task of the renderer's
// main thread did, style, layout and paint per frame),
// BENCH_SETTLE_MS (a pause once the session is ready, before anything is timed; 3000).
// BENCH_MODE=marathon (issue 35): BENCH_SESSION, a stored session of BENCH_ITEMS items, is
// resumed from the chat's history list, then `x` is typed into the chat's prompt input for
// BENCH_TYPE_MS on the same 20 ms schedule (per key: due → its input event; keydown → the
// next animation frame after it; Event Timing) and the chat is scrolled to the top and the
// bottom, 5 times (each: the scroll → the second animation frame after it).

import { writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { chatFrame, launchBrowser, poll, quickPick, runCommand } from "../../tests/vscode/workbench.mjs";

const env = process.env;
const mode = env.BENCH_MODE || "turn";
const keyEvery = Number(env.BENCH_KEY_MS || 20);
const timeoutMs = Number(env.BENCH_TIMEOUT_MS || 600_000);
const EDITOR_LINES = ".editor-instance .monaco-editor .view-lines";

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const log = (message) => process.stderr.write(`[vscode bench] ${message}\n`);
const say = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Offset to add to the driver's clock to get `frame`'s. */
async function clockOffset(frame) {
  let best = { rtt: Infinity, offset: 0 };
  for (let i = 0; i < 15; i++) {
    const a = now();
    const b = await frame.evaluate(() => performance.timeOrigin + performance.now());
    const c = now();
    if (c - a < best.rtt) {
      best = { rtt: c - a, offset: b - (a + c) / 2 };
    }
  }
  return best.offset;
}

/** Watch the text editor: when its rendered lines gain `x`s, and how many; the keydowns of
 * the typed keys (their event.timeStamp: when the input was received) and the browser's Event
 * Timing entries (duration: from the input to the next paint after its handlers, INP's). */
function watchEditor(selector) {
  const view = document.querySelector(selector);
  const r = { seen: [], count: 0, downs: [], events: [], origin: performance.timeOrigin };
  window.__keys = r;
  const count = () => (view.textContent.match(/x/g) || []).length;
  r.count = count();
  new MutationObserver(() => {
    const c = count();
    if (c > r.count) {
      r.seen.push([c, performance.timeOrigin + performance.now()]);
      r.count = c;
    }
  }).observe(view, { childList: true, subtree: true, characterData: true });
  const editor = view.closest(".editor-instance");
  window.addEventListener(
    "keydown",
    (e) => {
      if (e.key === "x" && editor.contains(e.target)) {
        r.downs.push(e.timeStamp);
      }
    },
    true,
  );
  const NAMES = new Set(["keydown", "keypress", "beforeinput", "input"]);
  const keep = (list) => {
    for (const e of list.getEntries ? list.getEntries() : list) {
      if (NAMES.has(e.name)) {
        r.events.push({ name: e.name, start: e.startTime, duration: e.duration, id: e.interactionId });
      }
    }
  };
  // 16 ms is the smallest threshold the API allows: shorter events are not reported.
  r.observer = new PerformanceObserver(keep);
  r.observer.observe({ type: "event", durationThreshold: 16, buffered: true });
  r.flush = () => keep(r.observer.takeRecords());
  return r.count;
}

/** Watch the chat: the prompt's Enter, then the last text in the DOM, then painted. */
function watchChat({ marker, tail }) {
  const t = () => performance.timeOrigin + performance.now();
  const r = { t0: null, dom: null, visible: null, sawBusy: false };
  window.__bench = r;
  const timeline = document.getElementById("timeline");
  const status = document.getElementById("statusline");
  document.getElementById("input").addEventListener(
    "keydown",
    (e) => {
      if (e.key === "Enter" && r.t0 === null) {
        r.t0 = t();
      }
    },
    true,
  );
  const lastText = (el) => {
    let n = el;
    while (n && n.nodeType !== Node.TEXT_NODE) {
      n = n.lastChild;
    }
    return n ? n.data : "";
  };
  const arrived = () => {
    if (r.t0 === null) {
      return false;
    }
    if (marker) {
      const last = timeline.lastElementChild;
      return Boolean(last?.matches(".message.agent")) && lastText(last).slice(-tail).includes(marker);
    }
    const idle = status.textContent.includes("Idle");
    r.sawBusy ||= !idle;
    return r.sawBusy && idle && Boolean(timeline.lastElementChild?.matches("details.tool.status-completed"));
  };
  const observer = new MutationObserver(() => {
    if (r.dom === null && arrived()) {
      r.dom = t();
      observer.disconnect();
      requestAnimationFrame(() => {
        r.visible = t();
      });
    }
  });
  observer.observe(document.body, { childList: true, subtree: true, characterData: true });
}

/** What the chat shows. A long timeline has only its end in the DOM: the counts of the whole
 * come from the webview's model (data-* on #timeline), the DOM's own beside them; a build
 * without them (before the window) has the whole timeline in the DOM. */
function chatFigures() {
  const timeline = document.getElementById("timeline");
  const body = timeline.lastElementChild?.querySelector(".body");
  const model = timeline.dataset;
  const domTools = timeline.querySelectorAll("details.tool").length;
  const domCompleted = timeline.querySelectorAll("details.tool.status-completed").length;
  return {
    chat_last_chars: body ? body.textContent.length : 0,
    chat_entries: model.entries !== undefined ? Number(model.entries) : timeline.children.length,
    chat_dom_entries: timeline.children.length,
    chat_tools: model.tools !== undefined ? Number(model.tools) : domTools,
    chat_tools_completed: model.toolsCompleted !== undefined ? Number(model.toolsCompleted) : domCompleted,
    chat_dom_tools: domTools,
    chat_dom_tools_completed: domCompleted,
    chat_last_tool_completed: Boolean(timeline.lastElementChild?.matches("details.tool.status-completed")),
    chat_dom_nodes: document.getElementsByTagName("*").length,
    chat_heap_mb: performance.memory ? performance.memory.usedJSHeapSize / 2 ** 20 : null,
  };
}

function percentile(sorted, q) {
  return sorted.length ? sorted[Math.max(0, Math.ceil((q / 100) * sorted.length) - 1)] : 0;
}

/** Type `x` on a fixed schedule until stop() says so; keys due while a press was still
 * pending are typed as soon as it returns (late, as a user's would be). */
async function typeKeys(page, stop) {
  const due = [];
  const start = now();
  if (keyEvery === 0) {
    while (!stop()) {
      await sleep(20);
    }
    return due;
  }
  for (let k = 0; !stop(); k++) {
    const at = start + k * keyEvery;
    const wait = at - now();
    if (wait > 0) {
      await sleep(wait);
    }
    due.push(at);
    await page.keyboard.press("x");
  }
  return due;
}

/** p50 / p99 / max of `latencies` under `prefix`. */
function stats(prefix, latencies) {
  latencies.sort((a, b) => a - b);
  return {
    [`${prefix}_p50`]: percentile(latencies, 50),
    [`${prefix}_p99`]: percentile(latencies, 99),
    [`${prefix}_max`]: latencies.at(-1) ?? 0,
  };
}

/** Each typed key's Event Timing duration: the longest of its keydown, keypress,
 * beforeinput and input entries (same timeStamp or interaction as its keydown). A key with no
 * entry took under 16 ms (the API reports nothing shorter): counted as 0, shown as "<16". */
function eventTimings(downs, events) {
  const byStart = new Map();
  const byId = new Map();
  const ids = new Map();
  for (const e of events) {
    const start = Math.round(e.start * 10);
    byStart.set(start, Math.max(byStart.get(start) ?? 0, e.duration));
    if (e.id) {
      ids.set(e.id, Math.max(ids.get(e.id) ?? 0, e.duration));
      if (e.name === "keydown") {
        byId.set(start, e.id);
      }
    }
  }
  return downs.map((t) => {
    const start = Math.round(t * 10);
    return Math.max(byStart.get(start) ?? 0, ids.get(byId.get(start)) ?? 0);
  });
}

async function keyFigures(page, due, offset, before) {
  // Wait until the editor shows every key typed (or 5 s), and for the last paints' entries.
  await poll(async () => (await page.evaluate(() => window.__keys.count)) >= before + due.length, "the typed keys", 5_000).catch(() => undefined);
  await sleep(500);
  const { seen, downs, events, origin } = await page.evaluate(() => {
    const r = window.__keys;
    r.flush();
    return { seen: r.seen, downs: r.downs, events: r.events, origin: r.origin };
  });
  // When the rendered lines first held each key typed (seen: [keys shown, time] pairs).
  const held = [];
  const typed = Math.max(due.length, downs.length);
  for (const [count, at] of seen) {
    while (held.length < typed && before + held.length + 1 <= count) {
      held.push(at);
    }
  }
  const latencies = held.slice(0, due.length).map((at, i) => at - (due[i] + offset));
  // keydown -> the rendered lines hold the key (Monaco writes them in the animation frame
  // that paints them).
  const toDom = held.slice(0, downs.length).map((at, k) => at - (origin + downs[k]));
  const timings = eventTimings(downs, events);
  return {
    keys: latencies.length,
    keys_typed: due.length,
    ...stats("key", latencies),
    key_downs: downs.length,
    ...stats("key_dom", toDom),
    key_events_reported: timings.filter((d) => d > 0).length,
    ...stats("key_event", timings),
  };
}

/** In the chat frame: each key typed into the prompt input, its keydown's timeStamp, when its
 * `input` event ran and the next animation frame after that (the frame that shows it), and
 * the Event Timing entries of the keys (as in watchEditor). */
function watchInput() {
  const input = document.getElementById("input");
  const r = { downs: [], inputs: [], frames: [], events: [], origin: performance.timeOrigin };
  window.__input = r;
  input.addEventListener("keydown", (e) => {
    if (e.key === "x") {
      r.downs.push(e.timeStamp);
    }
  }, true);
  input.addEventListener("input", () => {
    r.inputs.push(performance.now());
    requestAnimationFrame(() => r.frames.push(performance.now()));
  });
  const NAMES = new Set(["keydown", "keypress", "beforeinput", "input"]);
  const keep = (list) => {
    for (const e of list.getEntries ? list.getEntries() : list) {
      if (NAMES.has(e.name)) {
        r.events.push({ name: e.name, start: e.startTime, duration: e.duration, id: e.interactionId });
      }
    }
  };
  r.observer = new PerformanceObserver(keep);
  r.observer.observe({ type: "event", durationThreshold: 16, buffered: false });
  r.flush = () => keep(r.observer.takeRecords());
}

/** In the chat frame: scroll the chat to the top and back to the bottom `times` times; each
 * from the scroll to the second animation frame after it (the scrolled frame painted). */
async function scrollChat(times) {
  const el = document.scrollingElement ?? document.documentElement;
  const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
  const out = { top: [], bottom: [] };
  for (let i = 0; i < times; i++) {
    for (const [name, to] of [["top", () => 0], ["bottom", () => el.scrollHeight]]) {
      const t = performance.now();
      el.scrollTop = to();
      await frame();
      await frame();
      out[name].push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  out.dom_entries = document.getElementById("timeline").children.length;
  return out;
}

/** BENCH_MODE=marathon: resume the stored session BENCH_SESSION from the chat's history list,
 * type into its prompt input for BENCH_TYPE_MS, then scroll its chat. */
async function marathon(page, chat) {
  const sid = env.BENCH_SESSION;
  const items = Number(env.BENCH_ITEMS);
  await sleep(Number(env.BENCH_SETTLE_MS || 3000));
  say({ phase: "ready" });
  await lines.next();
  await chat.locator("#history").click();
  const row = chat.locator(`.session-row[data-session="${sid}"]`);
  await row.waitFor({ state: "visible", timeout: 30_000 });
  // When the session's message reaches the webview (before its handler runs): splits the
  // open into the way there (server, extension host, relay) and the chat's own drawing.
  await chat.evaluate(() => {
    window.__sessionAt = null;
    window.addEventListener("message", (e) => {
      const batch = e.data?.type === "batch" ? e.data.messages : [e.data];
      if (window.__sessionAt === null && batch?.some((m) => m?.type === "session" && m.session)) {
        window.__sessionAt = performance.now();
      }
    }, true);
  });
  const t0 = await chat.evaluate(() => performance.now());
  await row.click();
  await poll(
    async () => chat.evaluate((n) => Number(document.getElementById("timeline").dataset.entries ?? 0) >= n, items),
    "the resumed session's entries",
    120_000,
  ).catch(async (error) => {
    const seen = await chat.evaluate(() => ({
      entries: document.getElementById("timeline").dataset.entries,
      dom: document.getElementById("timeline").children.length,
      status: document.getElementById("statusline").innerText,
      text: document.body.innerText.slice(0, 600),
    }));
    if (env.BENCH_SHOT) {
      await page.screenshot({ path: env.BENCH_SHOT });
    }
    throw new Error(`${error.message}: the chat shows ${JSON.stringify(seen)}`);
  });
  const opened = await chat.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(performance.now()))));
  await poll(async () => (await chat.locator("#statusline").innerText()).includes("Idle"), "the resumed session idle", 60_000);
  await sleep(1000);
  await chat.locator("#input").click();
  await chat.evaluate(watchInput);
  const offset = await clockOffset(chat);
  const cdp = env.BENCH_PROFILE ? await page.context().newCDPSession(page) : null;
  if (cdp) {
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: 250 });
    await cdp.send("Profiler.start");
  }
  const end = now() + Number(env.BENCH_TYPE_MS || 3000);
  const due = await typeKeys(page, () => now() >= end);
  if (cdp) {
    const { profile } = await cdp.send("Profiler.stop");
    writeFileSync(env.BENCH_PROFILE, JSON.stringify(profile));
  }
  await sleep(800);
  const k = await chat.evaluate(() => {
    const r = window.__input;
    r.flush();
    return { downs: r.downs, inputs: r.inputs, frames: r.frames, events: r.events, origin: r.origin };
  });
  const typed = await chat.locator("#input").inputValue();
  // due -> the input event handled (driver's clock mapped onto the chat frame's)
  const handled = k.inputs.slice(0, due.length).map((at, i) => k.origin + at - (due[i] + offset));
  const toFrame = k.frames.slice(0, k.downs.length).map((at, i) => at - k.downs[i]);
  const timings = eventTimings(k.downs, k.events);
  const scroll = await chat.evaluate(scrollChat, 5);
  const med = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? 0;
  say({
    phase: "measured",
    open_ms: opened - t0,
    open_message_ms: (await chat.evaluate(() => window.__sessionAt)) - t0,
    keys: due.length,
    key_downs: k.downs.length,
    typed_chars: (typed.match(/x/g) || []).length,
    ...stats("key", handled),
    ...stats("key_frame", toFrame),
    key_events_reported: timings.filter((d) => d > 0).length,
    ...stats("key_event", timings),
    top_ms: med(scroll.top),
    top_max_ms: Math.max(...scroll.top),
    bottom_ms: med(scroll.bottom),
    bottom_max_ms: Math.max(...scroll.bottom),
    ...(await chat.evaluate(chatFigures)),
    workbench_heap_mb: await page.evaluate(() => performance.memory.usedJSHeapSize / 2 ** 20),
  });
  await lines.next();
  return 0;
}

async function main() {
  const browser = await launchBrowser(["--enable-precise-memory-info"]);
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${env.CODE_SERVER_URL}/?folder=${encodeURIComponent(env.ACP_LSP_WORKSPACE)}`);
    await page.waitForSelector(".monaco-workbench", { timeout: 60_000 });
    log("workbench ready");
    await quickPick(page, "Control+P", "notes.txt", '[aria-label*="notes.txt"]', log);
    await page.waitForSelector(EDITOR_LINES, { timeout: 20_000 });
    await runCommand(page, "ACP: Open Chat", log);
    const chat = await chatFrame(page);
    log("chat open");
    await poll(async () => (await chat.locator("#agent option").count()) > 0, "the agent picker filled");
    // The flood agent (the bench's settings make it the default; picked here to be sure).
    await poll(async () => (await chat.locator('#agent option[value="flood"]').count()) > 0, "the flood agent listed", 60_000).catch(async (error) => {
      throw new Error(`${error.message}; the picker lists: ${await chat.locator("#agent").innerHTML()}`);
    });
    await chat.locator("#agent").selectOption("flood");
    if (mode === "marathon") {
      return await marathon(page, chat);
    }
    await chat.locator("#new").click();
    await poll(async () => (await chat.locator("#statusline").innerText()).includes("Idle"), "the new session", 60_000);
    log("session ready");
    // Let the workbench settle (start-up work after the window opened made keys 200 ms late
    // in some runs with nothing else going on).
    await sleep(Number(env.BENCH_SETTLE_MS || 3000));
    const before = await page.evaluate(watchEditor, EDITOR_LINES);
    const offset = await clockOffset(page);
    if (mode === "idle") {
      await page.locator(EDITOR_LINES).click();
      const end = now() + Number(env.BENCH_IDLE_MS || 2000);
      const due = await typeKeys(page, () => now() >= end);
      say({ phase: "measured", ...(await keyFigures(page, due, offset, before)) });
      await lines.next();
      return 0;
    }
    const marker = env.BENCH_MARKER || null;
    await chat.evaluate(watchChat, { marker, tail: Number(env.BENCH_TAIL || 200) });
    const chatOffset = await clockOffset(chat);
    await chat.locator("#input").fill(env.BENCH_PROMPT);
    say({ phase: "ready" });
    await lines.next();
    // BENCH_PROFILE=FILE: a V8 CPU profile of the renderer (workbench and webview) in the turn.
    const cdp = env.BENCH_PROFILE ? await page.context().newCDPSession(page) : null;
    if (cdp) {
      await cdp.send("Profiler.enable");
      await cdp.send("Profiler.setSamplingInterval", { interval: 250 });
      await cdp.send("Profiler.start");
    }
    if (env.BENCH_TRACE) {
      const categories = ["devtools.timeline", "disabled-by-default-devtools.timeline", "blink.user_timing"];
      await browser.startTracing(page, { path: env.BENCH_TRACE, categories });
    }
    await chat.locator("#input").press("Enter");
    await page.locator(EDITOR_LINES).click();
    let done = false;
    const deadline = now() + timeoutMs;
    const watcher = (async () => {
      while (!done) {
        await sleep(100);
        done = (await chat.evaluate(() => window.__bench.visible !== null)) || now() > deadline;
      }
    })();
    const due = await typeKeys(page, () => done);
    await watcher;
    if (cdp) {
      const { profile } = await cdp.send("Profiler.stop");
      writeFileSync(env.BENCH_PROFILE, JSON.stringify(profile));
    }
    if (env.BENCH_TRACE) {
      await browser.stopTracing();
    }
    const r = await chat.evaluate(() => window.__bench);
    const keys = await keyFigures(page, due, offset, before);
    const figures = await chat.evaluate(chatFigures);
    if (env.BENCH_SHOT) {
      await page.screenshot({ path: env.BENCH_SHOT });
    }
    const workbenchHeap = await page.evaluate(() => performance.memory.usedJSHeapSize / 2 ** 20);
    say({
      phase: "measured",
      ...(r.visible === null ? { error: "timed out" } : {}),
      dom_ms: r.dom - r.t0,
      visible_ms: r.visible - r.t0,
      key_offset_ms: offset - chatOffset,
      ...keys,
      ...figures,
      workbench_heap_mb: workbenchHeap,
    });
    await lines.next();
    return 0;
  } finally {
    await browser.close().catch(() => undefined);
  }
}

let code = 1;
try {
  code = await main();
} catch (error) {
  log(`failed: ${error?.stack ?? error}`);
  say({ phase: "measured", error: String(error?.message ?? error).slice(0, 500) });
}
process.exit(code);
