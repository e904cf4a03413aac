import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { PendingPermission } from "../../model/messages";
import { fromSnapshot } from "../../model/sessionModel";
import type { ToolCallState } from "../../model/types";
import { applyCompletion, moveSelection, slashCompletions } from "../../webview/completion";
import { diffStats, lineDiff } from "../../webview/lineDiff";
import { PIECE_CHARS, escapeHtml, renderMarkdown, renderMarkdownBlocks } from "../../webview/markdown";
import {
  displayPath,
  formatTokens,
  kindIcon,
  renderAgentOptions,
  categoryLabel,
  renderConfigOption,
  renderConfigOptions,
  renderContextLine,
  renderEntry,
  renderEntryView,
  renderMessage,
  renderModeOptions,
  renderPermission,
  renderPlan,
  renderSessionRows,
  renderStatusLine,
  renderToolCall,
  renderTurnReview,
  renderUsage,
  timelineKeys,
  toolCallsShowingTerminal,
  type RenderContext,
} from "../../webview/render";

const ctx = (extra: Partial<RenderContext> = {}): RenderContext => ({
  cwd: "/work",
  terminals: {},
  permissionFor: () => undefined,
  ...extra,
});

function call(extra: Partial<ToolCallState> = {}): ToolCallState {
  return { toolCallId: "t1", title: "Edit src/app.py", kind: "edit", status: "completed", content: [], locations: [], ...extra };
}

const diff = { type: "diff", path: "/work/src/app.py", oldText: "a\nb\nc\n", newText: "a\nB\nc\n" };

describe("markdown", () => {
  test("a very long paragraph renders in pieces that stay the same as it grows", () => {
    const words = (n: number): string => Array.from({ length: n }, (_, i) => `word${i}`).join(" ");
    const short = renderMarkdownBlocks(words(100));
    assert.deepEqual(short.length, 1);
    assert.ok(short[0]?.startsWith("<p>"));
    const text = words(Math.ceil((PIECE_CHARS * 3) / 6));
    const blocks = renderMarkdownBlocks(text);
    assert.ok(blocks.length >= 3, `${blocks.length} pieces`);
    assert.ok(blocks[0]?.startsWith('<p class="piece first">'));
    assert.ok(blocks.at(-1)?.startsWith('<p class="piece last">'));
    // Nothing lost or doubled: the pieces hold the paragraph's text, cut after spaces.
    assert.equal(blocks.map((b) => b.replace(/<[^>]+>/g, "")).join(""), text);
    const grown = renderMarkdownBlocks(`${text} more words **at the end**`);
    assert.deepEqual(grown.slice(0, blocks.length - 1), blocks.slice(0, -1));
    assert.ok(grown.at(-1)?.includes("<strong>at the end</strong>"));
  });

  test("agent text is escaped: no HTML from the agent reaches the page", () => {
    const html = renderMarkdown('<img src=x onerror="alert(1)"> & <script>alert(2)</script>');
    assert.ok(!html.includes("<img"));
    assert.ok(!html.includes("<script"));
    assert.ok(html.includes("&lt;script&gt;"));
    assert.ok(html.includes("&amp;"));
  });

  test("fences, inline code, emphasis, headings, lists and quotes", () => {
    const html = renderMarkdown("# Title\n\nSome **bold** and *it* with `x<y`.\n\n- one\n- two\n\n1. first\n\n> quoted\n\n```py\nif a < b:\n    pass\n```");
    assert.ok(html.includes("<h1>Title</h1>"));
    assert.ok(html.includes("<strong>bold</strong>"));
    assert.ok(html.includes("<em>it</em>"));
    assert.ok(html.includes("<code>x&lt;y</code>"));
    assert.ok(html.includes("<ul><li>one</li><li>two</li></ul>"));
    assert.ok(html.includes("<ol><li>first</li></ol>"));
    assert.ok(html.includes("<blockquote>quoted</blockquote>"));
    assert.ok(html.includes('<pre class="code" data-lang="py"><code>if a &lt; b:\n    pass</code></pre>'));
  });

  test("an unclosed fence (a streaming answer) renders as code to the end", () => {
    const html = renderMarkdown("Here:\n```\nline 1\nline 2");
    assert.ok(html.includes("<pre"));
    assert.ok(html.includes("line 1\nline 2</code></pre>"));
  });

  test("links: safe ones are kept for the host to open, javascript: is dropped", () => {
    assert.ok(renderMarkdown("[file](src/app.py)").includes('data-link="src/app.py"'));
    assert.ok(renderMarkdown("[site](https://example.org)").includes('href="https://example.org"'));
    const bad = renderMarkdown("[x](javascript:alert(1))");
    assert.ok(!bad.includes("href"));
  });

  test("escapeHtml escapes quotes for attributes", () => {
    assert.equal(escapeHtml(`"'<>&`), "&quot;&#39;&lt;&gt;&amp;");
  });
});

describe("messages", () => {
  test("thoughts render collapsed", () => {
    const html = renderMessage({ role: "thought", content: [{ type: "text", text: "pondering" }] }, 3);
    assert.match(html, /^<details class="entry thought" data-key="m:3">/);
    assert.ok(!html.includes(" open"));
    assert.ok(html.includes("pondering"));
  });

  test("user and agent messages are labelled; non-text blocks render as chips", () => {
    const user = renderMessage(
      { role: "user", content: [{ type: "text", text: "hi" }, { type: "resource_link", uri: "file:///w/a.py", name: "a.py" }] },
      0,
    );
    assert.ok(user.includes('class="entry message user"') && user.includes("You") && user.includes("a.py"));
    const agent = renderMessage({ role: "agent", content: [{ type: "image", data: "", mimeType: "image/png" }, { type: "_weird" }] }, 1);
    assert.ok(agent.includes("Agent") && agent.includes("image") && agent.includes("_weird"));
  });
});

describe("tool calls", () => {
  test("kind icon, title and status; unknown kinds get the generic icon", () => {
    const html = renderToolCall(call({ kind: "read", title: "Read a.py", status: "in_progress" }), ctx());
    assert.ok(html.includes(`codicon-${kindIcon("read")}`));
    assert.ok(html.includes("Read a.py"));
    assert.ok(html.includes("Running"));
    assert.ok(html.includes("status-in_progress"));
    assert.equal(kindIcon("_vendor_thing"), "tools");
    assert.ok(renderToolCall(call({ status: "_queued" }), ctx()).includes("queued"));
  });

  test("a diff shows path, stats, lines and its buttons; review buttons while pending", () => {
    const html = renderToolCall(call({ content: [diff] }), ctx());
    assert.ok(html.includes("src/app.py"));
    assert.ok(html.includes("+1") && html.includes("−1"));
    assert.ok(html.includes('class="dl del"') && html.includes('class="dl add"'));
    assert.ok(html.includes('data-action="openDiff" data-tool="t1" data-index="0"'));
    assert.ok(html.includes('data-review="accept" data-tool="t1"'));
    assert.ok(html.includes('data-review="reject" data-tool="t1" data-path="/work/src/app.py"'));
    const reviewed = renderToolCall(call({ content: [diff], review: { status: "rejected" } }), ctx());
    assert.ok(!reviewed.includes('data-review="reject"'));
    assert.ok(reviewed.includes("Rejected"));
  });

  test("per-file review states: a kept file loses its buttons, a failed undo shows why and may be retried", () => {
    const other = { ...diff, path: "/work/b.py" };
    const html = renderToolCall(
      call({
        content: [diff, other],
        review: {
          status: "failed",
          files: [
            { path: "/work/src/app.py", status: "accepted" },
            { path: "/work/b.py", status: "failed", message: "b.py changed since <edit>" },
          ],
        },
      }),
      ctx(),
    );
    assert.ok(!html.includes('data-review="reject" data-tool="t1" data-path="/work/src/app.py"'));
    assert.ok(html.includes('data-review="reject" data-tool="t1" data-path="/work/b.py"'));
    assert.ok(html.includes("b.py changed since &lt;edit&gt;"));
    assert.ok(html.includes("Kept"));
    // The call as a whole still awaits a decision.
    assert.ok(html.includes('class="review-bar"'));
  });

  test("a file changed on disk with no reported diff (a shell command's) is listed with its review", () => {
    const shell = call({
      kind: "execute",
      title: "sed -i s/a/b/ src/app.py",
      review: { status: "pending", files: [{ path: "/work/src/app.py", status: "pending", change: "modified" }, { path: "/work/old.py", status: "rejected", change: "deleted" }] },
    });
    const html = renderToolCall(shell, ctx());
    assert.ok(html.includes('class="diff disk-change" data-path="/work/src/app.py"'));
    assert.ok(html.includes('<span class="tag">modified</span>') && html.includes('<span class="tag">deleted</span>'));
    assert.ok(html.includes('data-review="reject" data-tool="t1" data-path="/work/src/app.py"'));
    assert.ok(!html.includes('data-review="reject" data-tool="t1" data-path="/work/old.py"'));
    assert.ok(html.includes('<span class="path gone">old.py</span>'), "a deleted file is no link");
    assert.ok(html.includes("2 files changed"));
    assert.ok(html.includes(" open"), "a call that changed files is shown open");
    // reported diffs are not listed twice
    const both = renderToolCall(call({ content: [diff], review: { status: "pending", files: [{ path: "/work/src/app.py", status: "pending", change: "modified" }] } }), ctx());
    assert.ok(!both.includes("disk-change"));
    assert.ok(both.includes("1 file changed"));
  });

  test("no review buttons before the edit is done", () => {
    const html = renderToolCall(call({ content: [diff], status: "pending" }), ctx());
    assert.ok(!html.includes('data-action="review"'));
  });

  test("a pending permission marks the tool call", () => {
    const permission: PendingPermission = { requestId: "p1", sessionId: "s", toolCall: call(), options: [] };
    const html = renderToolCall(call({ status: "pending" }), ctx({ permissionFor: () => permission }));
    assert.ok(html.includes("Needs permission"));
    assert.ok(html.includes("status-awaiting"));
  });

  test("terminal content shows the live output and exit code; command from rawInput", () => {
    const html = renderToolCall(
      call({ kind: "execute", title: "Run tests", rawInput: { command: "pytest", args: ["-q"] }, content: [{ type: "terminal", terminalId: "term1" }] }),
      ctx({ terminals: { term1: { output: "1 passed <ok>\n", truncated: true, exitStatus: { exitCode: 0 } } } }),
    );
    assert.ok(html.includes("1 passed &lt;ok&gt;"));
    assert.ok(html.includes("exit code 0"));
    assert.ok(html.includes("earlier output dropped"));
    assert.ok(html.includes("$ pytest -q"));
  });

  test("locations are links to the file and line, shown relative to the cwd", () => {
    const html = renderToolCall(call({ kind: "read", locations: [{ path: "/work/src/a.py", line: 3 }] }), ctx());
    assert.ok(html.includes('data-action="openLocation" data-path="/work/src/a.py" data-line="3"'));
    assert.ok(html.includes(">src/a.py:3<"));
    assert.equal(displayPath("/elsewhere/x", "/work"), "/elsewhere/x");
  });

  test("text content is rendered as markdown and escaped", () => {
    const html = renderToolCall(call({ content: [{ type: "content", content: { type: "text", text: "<b>12 lines</b>" } }] }), ctx());
    assert.ok(html.includes("&lt;b&gt;12 lines&lt;/b&gt;"));
  });
});

describe("permission prompt", () => {
  const permission: PendingPermission = {
    requestId: "p1",
    sessionId: "s",
    toolCall: call({ status: "pending", content: [diff] }),
    options: [
      { optionId: "allow", name: "Allow", kind: "allow_once" },
      { optionId: "always", name: "Always allow", kind: "allow_always" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ],
  };

  test("options become buttons in order, with the diff and a reason field", () => {
    const html = renderPermission(permission, "/work");
    const buttons = [...html.matchAll(/data-option="([^"]+)" data-kind="([^"]+)">([^<]+)</g)].map((m) => [m[1], m[2], m[3]]);
    assert.deepEqual(buttons, [
      ["allow", "allow_once", "Allow"],
      ["always", "allow_always", "Always allow"],
      ["reject", "reject_once", "Reject"],
    ]);
    assert.ok(html.includes('class="dl add"'));
    assert.ok(html.includes('class="reason"'));
    assert.ok(html.includes("Edit src/app.py"));
  });

  test("a prompt of a background session names it and offers to show it", () => {
    const mine = renderPermission(permission, "/work", "s");
    assert.ok(!mine.includes("perm-session"));
    const other = renderPermission({ ...permission, sessionLabel: "Fix <the> parser" }, "/work", "t");
    assert.ok(other.includes("From the background session <strong>Fix &lt;the&gt; parser</strong>"));
    assert.ok(other.includes('data-action="switchSession" data-session="s"'));
  });

  test("a command is shown for execute calls; no reason field without a reject option", () => {
    const html = renderPermission(
      { ...permission, toolCall: call({ kind: "execute", title: "Run", rawInput: { command: "rm -rf build" } }), options: [permission.options[0]!] },
      "/work",
    );
    assert.ok(html.includes("$ rm -rf build"));
    assert.ok(!html.includes('class="reason"'));
  });
});

describe("plan, usage, status and pickers", () => {
  test("plan entries with status and progress count", () => {
    const html = renderPlan([
      { content: "Read", status: "completed", priority: "high" },
      { content: "Edit <it>", status: "in_progress" },
    ]);
    assert.ok(html.includes("1/2"));
    assert.ok(html.includes('class="plan-completed prio-high"'));
    assert.ok(html.includes("Edit &lt;it&gt;"));
    assert.equal(renderPlan([]), "");
  });

  test("usage shows tokens, share of the window and cost", () => {
    const html = renderUsage({ used: 2700, size: 200000, cost: { amount: 0.004, currency: "USD" } });
    assert.ok(html.includes("2.7k / 200k tokens"));
    assert.ok(html.includes('<progress class="meter" max="100" value="1"></progress> 1%'));
    assert.ok(!html.includes("style="), "no inline styles: the webview's CSP forbids them");
    assert.ok(html.includes("0.00 USD"));
    assert.equal(renderUsage(null), "");
    assert.equal(formatTokens(1_500_000), "1.5M");
  });

  test("status line: busy spinner, stop reason and error", () => {
    const session = fromSnapshot({ sessionId: "s", agent: "demo", cwd: "/w", status: "running", seq: 0, messages: [], toolCalls: [], timeline: [] });
    assert.ok(renderStatusLine(session).includes("Working"));
    session.status = "idle";
    session.stopReason = "cancelled";
    assert.ok(renderStatusLine(session).includes("(cancelled)"));
    session.error = { message: "agent <crashed>" };
    assert.ok(renderStatusLine(session).includes("agent &lt;crashed&gt;"));
    assert.ok(renderStatusLine(null).includes("No session"));
  });

  test("mode and config pickers select the current values", () => {
    const modes = renderModeOptions({ currentModeId: "code", availableModes: [{ id: "ask", name: "Ask" }, { id: "code", name: "Code" }] });
    assert.ok(modes.includes('<option value="code" selected>Code</option>'));
    const select = renderConfigOption({ id: "model", name: "Model", type: "select", currentValue: "b", options: [{ value: "a", name: "A" }, { value: "b", name: "B" }] });
    assert.ok(select.includes('<option value="b" selected>B</option>'));
    const check = renderConfigOption({ id: "run", name: "Run checks", type: "boolean", currentValue: true });
    assert.ok(check.includes('type="checkbox" data-config="run" checked'));
  });

  test("config options are grouped by category, model first, with grouped values", () => {
    const html = renderConfigOptions([
      { id: "effort", name: "Effort", type: "select", category: "thought_level", currentValue: "high", options: [{ value: "high", name: "High" }] },
      { id: "verbosity", name: "Verbosity", type: "select", currentValue: "terse", options: [{ value: "terse", name: "Terse" }] },
      { id: "model", name: "Model", type: "select", category: "model", currentValue: "b", options: [{ group: "fast", name: "Fast", options: [{ value: "b", name: "B" }] }] },
    ]);
    const order = ["model", "effort", "verbosity"].map((id) => html.indexOf(`data-config="${id}"`));
    assert.deepStrictEqual([...order].sort((a, b) => a - b), order);
    assert.ok(html.includes('title="Thinking: Effort"'));
    assert.ok(html.includes('<optgroup label="Fast"><option value="b" selected>B</option></optgroup>'));
    assert.strictEqual(categoryLabel("_custom_thing"), "Custom thing");
  });

  test("the turn's files-changed summary: each file, its change and state, Keep / Reject while open", () => {
    assert.equal(renderTurnReview([], "/work"), "");
    const html = renderTurnReview(
      [
        { path: "/work/src/app.py", change: "modified", status: "pending", diff: { toolCallId: "t<1>", index: 0 } },
        { path: "/work/new.py", change: "created", status: "accepted" },
        { path: "/work/old.py", change: "deleted", status: "failed", message: "old.py was created again since" },
        { path: "/elsewhere/x.py", change: "modified", status: "rejected" },
      ],
      "/work",
    );
    assert.ok(html.includes("4 files changed"));
    assert.ok(html.includes('data-action="openDiff" data-tool="t&lt;1&gt;" data-index="0"'), "a reported diff opens");
    assert.ok(html.includes('data-action="openLocation" data-path="/work/new.py"'), "else the file opens");
    assert.ok(html.includes('<span class="path gone">old.py</span>'));
    assert.ok(html.includes(">src/app.py<") && html.includes(">/elsewhere/x.py<"), "paths relative to the session's folder");
    assert.ok(html.includes("codicon-diff-added") && html.includes("created") && html.includes("deleted"));
    // per file: no toolCallId (every change of the turn to that file)
    assert.ok(html.includes('data-action="review" data-review="accept" data-path="/work/src/app.py"'));
    assert.ok(html.includes('data-action="review" data-review="reject" data-path="/work/old.py"'), "a failed undo may be retried");
    assert.ok(!html.includes('data-review="reject" data-path="/work/new.py"'));
    assert.ok(html.includes("Kept") && html.includes("Rejected") && html.includes("old.py was created again since"));
    assert.ok(html.includes('<button data-action="review" data-review="accept">') && html.includes("Reject all"));
    const decided = renderTurnReview([{ path: "/work/new.py", change: "created", status: "accepted" }], "/work");
    assert.ok(decided.includes("1 file changed") && !decided.includes("Keep all"), "all decided: the list stays, the buttons go");
  });
});

describe("toolbar, context line and session list", () => {
  test("the agent picker selects the chosen agent and explains a broken one", () => {
    const html = renderAgentOptions(
      [
        { name: "demo", title: "Demo", protocol: "acp", default: true, running: false },
        { name: "bad", title: "Bad <one>", protocol: "acp", default: false, running: false, error: "no command" },
      ],
      "bad",
    );
    assert.ok(html.includes('<option value="demo">Demo</option>'));
    assert.ok(html.includes('<option value="bad" selected title="no command">Bad &lt;one&gt;</option>'));
  });

  test("the context line names the selection, else the file, with the attach box", () => {
    assert.equal(renderContextLine({}, true), "");
    const file = renderContextLine({ file: "src/app.py" }, false);
    assert.ok(file.includes("codicon-file") && file.includes("src/app.py") && !file.includes("checked"));
    const selection = renderContextLine({ file: "src/app.py", selection: "src/app.py:3-4" }, true);
    assert.ok(selection.includes("codicon-selection") && selection.includes("src/app.py:3-4") && selection.includes("checked"));
  });

  test("session rows carry what loading needs and show title, agent, liveness and time", () => {
    const html = renderSessionRows([
      { sessionId: "s1", agent: "demo", title: "Fix <bug>", updatedAt: "2026-01-02T03:04:05Z", live: true },
      { sessionId: "s2", agent: "claude", live: false },
    ]);
    assert.ok(html.includes('data-action="loadSession" data-agent="demo" data-session="s1" data-live="true"'));
    assert.ok(html.includes("Fix &lt;bug&gt;"));
    assert.ok(html.includes("demo · open · 2026-01-02 03:04"));
    assert.ok(html.includes('data-session="s2" data-live="false"') && html.includes(">s2<"));
    assert.ok(renderSessionRows([]).includes("No sessions yet"));
  });
});

describe("timeline", () => {
  test("keys follow the timeline; entries render by key; terminals map to their tool calls", () => {
    const session = fromSnapshot({
      sessionId: "s",
      agent: "demo",
      cwd: "/w",
      status: "idle",
      seq: 0,
      messages: [{ role: "agent", content: [{ type: "text", text: "hi" }] }],
      toolCalls: [call({ toolCallId: "run", kind: "execute", content: [{ type: "terminal", terminalId: "T" }] })],
      timeline: [{ message: 0 }, { toolCall: "run" }],
    });
    assert.deepEqual(timelineKeys(session), ["m:0", "t:run"]);
    assert.ok(renderEntry(session, "m:0", ctx()).includes("hi"));
    assert.ok(renderEntry(session, "t:run", ctx()).includes('data-key="t:run"'));
    assert.equal(renderEntry(session, "t:missing", ctx()), "");
    assert.deepEqual(toolCallsShowingTerminal(session, "T"), ["run"]);
    // What the chat patches: a message's body blocks, a tool call's parts; the same HTML.
    const message = renderEntryView(session, "m:0", ctx());
    assert.deepEqual(message?.blocks, ["<p>hi</p>"]);
    assert.equal(message?.html(), renderEntry(session, "m:0", ctx()));
    const tool = renderEntryView(session, "t:run", ctx());
    assert.equal(tool?.html(), renderEntry(session, "t:run", ctx()));
    assert.equal(tool?.parts?.className, "entry tool status-completed");
    assert.equal(renderEntryView(session, "t:missing", ctx()), null);
  });

  test("a tool call's parts change only where the call did", () => {
    const running = renderEntryView(
      fromSnapshot({ sessionId: "s", agent: "a", cwd: "/w", status: "running", seq: 0, messages: [], timeline: [{ toolCall: "t1" }], toolCalls: [call({ status: "in_progress" })] }),
      "t:t1",
      ctx(),
    )?.parts;
    const done = renderEntryView(
      fromSnapshot({ sessionId: "s", agent: "a", cwd: "/w", status: "running", seq: 0, messages: [], timeline: [{ toolCall: "t1" }], toolCalls: [call()] }),
      "t:t1",
      ctx(),
    )?.parts;
    assert.ok(running && done);
    assert.equal(running.body, done.body);
    assert.notEqual(running.summary, done.summary);
    assert.deepEqual([running.open, done.open], [true, false]);
    assert.equal(done.className, "entry tool status-completed");
  });
});

describe("line diff", () => {
  test("changed lines between unchanged context; far context collapses", () => {
    const old = Array.from({ length: 20 }, (_, i) => `line ${i}`).join("\n") + "\n";
    const next = old.replace("line 10\n", "line ten\n");
    const lines = lineDiff(old, next);
    assert.deepEqual(diffStats(lines), { added: 1, removed: 1 });
    assert.deepEqual(lines[0], { op: "…", count: 8 });
    assert.deepEqual(lines.filter((l) => l.op === "-" || l.op === "+"), [
      { op: "-", text: "line 10" },
      { op: "+", text: "line ten" },
    ]);
    assert.deepEqual(lines[lines.length - 1], { op: "…", count: 7 });
  });

  test("a new file is all additions; an insertion keeps its neighbours", () => {
    assert.deepEqual(lineDiff(null, "a\nb\n"), [
      { op: "+", text: "a" },
      { op: "+", text: "b" },
    ]);
    const inserted = lineDiff("first\nsecond\n", "first\nnote\nsecond\n");
    assert.deepEqual(inserted, [
      { op: " ", text: "first" },
      { op: "+", text: "note" },
      { op: " ", text: "second" },
    ]);
  });
});

describe("slash completion", () => {
  const commands = [{ name: "explain" }, { name: "edit" }, { name: "help" }, { name: "plan-ex" }];

  test("offers commands while a command word is typed, prefix matches first", () => {
    assert.deepEqual(slashCompletions("/", commands).map((c) => c.name), ["explain", "edit", "help", "plan-ex"]);
    assert.deepEqual(slashCompletions("/ex", commands).map((c) => c.name), ["explain", "plan-ex"]);
    assert.deepEqual(slashCompletions("/EX", commands).map((c) => c.name), ["explain", "plan-ex"]);
    assert.deepEqual(slashCompletions("/explain now", commands), []);
    assert.deepEqual(slashCompletions("explain", commands), []);
  });

  test("applying a completion leaves room for the argument; selection wraps", () => {
    assert.equal(applyCompletion({ name: "edit" }), "/edit ");
    assert.equal(moveSelection(0, -1, 3), 2);
    assert.equal(moveSelection(2, 1, 3), 0);
    assert.equal(moveSelection(0, 1, 0), 0);
  });
});
