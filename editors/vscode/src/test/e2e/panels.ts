// End-to-end tests of chats in editor tabs (ACP: Open Chat in Editor): several sessions side by
// side, each tab pinned to its own session while the side bar follows the active one. What a
// tab's webview is sent is recorded on its way (the webview still gets all of it).

import * as path from "node:path";
import * as vscode from "vscode";
import type { ChatController } from "../../chat/controller";
import type { ChatPanel } from "../../chat/panel";
import type { AcpLspApi } from "../../extension";
import type { HostToWebview } from "../../model/messages";
import { isOpen, sessionLabel } from "../../model/sessionList";
import { messageText } from "../../model/queries";
import type { ChatSession } from "../../model/sessionModel";
import { assert, assertEqual, test, waitFor } from "./harness";
import { agentText, answerPermissions, api, closeAllEditors, current, freshSession, openEditor, runAnswering, writeFile } from "./helpers";

/** Everything the tab's webview is sent from now on. */
function record(panel: ChatPanel): HostToWebview[] {
  const seen: HostToWebview[] = [];
  panel.controller.attach((message) => {
    seen.push(message);
    panel.post(message);
  });
  return seen;
}

/** The sessions the messages are about. */
function sessionsIn(messages: HostToWebview[]): Set<string> {
  const ids = new Set<string>();
  for (const m of messages) {
    switch (m.type) {
      case "init":
      case "session":
        if (m.session) {
          ids.add(m.session.sessionId);
        }
        break;
      case "update":
      case "status":
      case "terminal":
        ids.add(m.params.sessionId);
        break;
      case "permission":
        ids.add(m.permission.sessionId);
        break;
    }
  }
  return ids;
}

/** The user's words in the updates the webview was sent. */
function userTextIn(messages: HostToWebview[]): string {
  return messages
    .flatMap((m) => (m.type === "update" ? m.params.updates : []))
    .filter((u) => u.sessionUpdate === "user_message_chunk")
    .map((u) => JSON.stringify(u))
    .join("\n");
}

function userText(session: ChatSession): string {
  return session.messages
    .filter((m) => m.role === "user")
    .map(messageText)
    .join("\n");
}

async function openTab(sessionId: string): Promise<ChatPanel> {
  const a = await api();
  const opened = await vscode.commands.executeCommand<string | undefined>("acpLsp.openChatInEditor", sessionId);
  assertEqual(opened, sessionId, "the command opened the session");
  const panel = a.panels.find(sessionId);
  assert(panel, `a tab shows session ${sessionId}`);
  return panel;
}

/** A tab opened for the session, what its webview is sent recorded from before its chat loads. */
async function openRecorded(sessionId: string): Promise<{ tab: ChatPanel; seen: HostToWebview[] }> {
  const tab = await openTab(sessionId);
  const seen = record(tab);
  // The webview loads the chat script and asks for its state: it gets its own session.
  await waitFor(() => seen.some((m) => m.type === "init"), `the chat in the tab of ${sessionId} to load`);
  return { tab, seen };
}

/** Focus moved (a tab opened, a switch revealed the side bar): let the real webviews' own
 * "focused" reports land before the test clicks into a chat, or a late one takes "last used"
 * from the chat clicked. A report comes a moment after the focus moves, seconds later under
 * load: wait until `focused` (the chat that took the focus) has reported, at most 10 s, then
 * for half a second without another report. */
async function focusSettled(a: AcpLspApi, focused: ChatController): Promise<void> {
  let quietSince = Date.now();
  const sub = a.lastUsed.onDidChange(() => (quietSince = Date.now()));
  const start = Date.now();
  try {
    await waitFor(
      () => (a.lastUsed.current === focused || Date.now() - start > 10_000) && Date.now() - quietSince >= 500,
      "the chats' focus reports to settle",
      20_000,
    );
  } finally {
    sub.dispose();
  }
}

async function named(title: string): Promise<ChatSession> {
  const a = await api();
  const session = await freshSession(a);
  await vscode.commands.executeCommand("acpLsp.renameSession", session.sessionId, title);
  await waitFor(() => current(a, session.sessionId).title === title, `the session named "${title}"`);
  return session;
}

// -----------------------------------------------------------------------------------------------

test("Open Chat in Editor: two tabs side by side, each prompted from itself, show only their own session", async () => {
  const a = await api();
  await closeAllEditors();
  const first = await freshSession(a);
  const second = await freshSession(a);
  const { tab: left, seen: leftSeen } = await openRecorded(first.sessionId);
  const { tab: right, seen: rightSeen } = await openRecorded(second.sessionId);
  assert(left.panel.viewColumn !== right.panel.viewColumn, `side by side: columns ${left.panel.viewColumn} and ${right.panel.viewColumn}`);
  assert(left.panel.visible && right.panel.visible, "both tabs are on screen");
  assertEqual([left.panel.title, right.panel.title], [sessionLabel(first), sessionLabel(second)], "the tabs' titles");

  // Both prompted from their own tab (the webview's message), at the same time.
  await Promise.all([
    left.controller.handle({ type: "prompt", text: "/explain the alpha side", includeContext: false }),
    right.controller.handle({ type: "prompt", text: "/explain the beta side", includeContext: false }),
  ]);
  const s1 = current(a, first.sessionId);
  const s2 = current(a, second.sessionId);
  assert(userText(s1).includes("alpha side") && !userText(s1).includes("beta side"), `the left session got its prompt: ${userText(s1)}`);
  assert(userText(s2).includes("beta side") && !userText(s2).includes("alpha side"), `the right session got its prompt: ${userText(s2)}`);
  assert(agentText(s1).length > 0 && agentText(s2).length > 0, "both agents answered");
  // The agent names each session after its first prompt: the tabs' titles follow.
  await waitFor(() => left.panel.title === "/explain the alpha side", `the left tab's title (${left.panel.title})`);
  await waitFor(() => right.panel.title === "/explain the beta side", `the right tab's title (${right.panel.title})`);
  assertEqual([...sessionsIn(leftSeen)], [first.sessionId], "the sessions the left tab was sent");
  assertEqual([...sessionsIn(rightSeen)], [second.sessionId], "the sessions the right tab was sent");
  assert(userTextIn(leftSeen).includes("alpha side") && !userTextIn(leftSeen).includes("beta side"), "the left transcript");
  assert(userTextIn(rightSeen).includes("beta side") && !userTextIn(rightSeen).includes("alpha side"), "the right transcript");

  // The side bar follows the active session; the tabs stay on theirs.
  assertEqual(a.store.activeId, second.sessionId, "the last new session is active");
  assertEqual(a.chat.session()?.sessionId, second.sessionId, "the side bar shows the active session");
  assertEqual(a.view.description, "/explain the beta side", "the side bar's title bar names it");
  await vscode.commands.executeCommand("acpLsp.switchSession", first.sessionId);
  assertEqual(a.chat.session()?.sessionId, first.sessionId, "the side bar follows a switch");
  assertEqual(right.sessionId, second.sessionId, "the right tab stays on its session");
  assertEqual([...sessionsIn(rightSeen)], [second.sessionId], "… and was sent nothing of the other");

  // Opening a session that has a tab reveals that tab.
  await vscode.commands.executeCommand("acpLsp.openChatInEditor", second.sessionId);
  assertEqual(a.panels.list().filter((p) => p.sessionId === second.sessionId).length, 1, "still one tab for the session");
  await waitFor(() => right.panel.active, "the right tab revealed");
  await closeAllEditors();
  await waitFor(() => a.panels.list().length === 0, "closed tabs are forgotten");
}, 60_000);

test("Rename Session renames a chat tab's session and the tab's title; closing the tab keeps the session", async () => {
  const a = await api();
  await closeAllEditors();
  const pinned = await named("Before rename");
  const active = await freshSession(a);
  const tab = await openTab(pinned.sessionId);
  assertEqual(tab.panel.title, "Before rename", "the tab's title");
  // Commands act on the active session (the side bar's) unless given a session: the tab's here.
  await vscode.commands.executeCommand("acpLsp.renameSession", pinned.sessionId, "Renamed in its tab");
  await waitFor(() => current(a, pinned.sessionId).title === "Renamed in its tab", "the tab's session renamed");
  assert(current(a, active.sessionId).title !== "Renamed in its tab", "the active session keeps its name");
  await waitFor(() => tab.panel.title === "Renamed in its tab", `the tab's title follows (${tab.panel.title})`);

  tab.panel.dispose();
  await waitFor(() => a.panels.find(pinned.sessionId) === undefined, "the closed tab is forgotten");
  assert(isOpen(current(a, pinned.sessionId)), "its session is still open");
  const result = await a.store.prompt(pinned.sessionId, "/help");
  assertEqual(result.stopReason, "end_turn", "the session still answers");
  const again = await openTab(pinned.sessionId);
  assert(again !== tab, "opening it again makes a new tab");
  assert(/\/explain/.test(agentText(current(a, pinned.sessionId))), "the session's answer is in the store");
  await closeAllEditors();
}, 60_000);

test("a chat tab gets its own session's permission prompts and cancel; its session closed shows in the tab", async () => {
  const a = await api();
  await closeAllEditors();
  const file = writeFile("tabs/edit.py", "x = 1\n");
  await openEditor(file);
  const other = await named("Other tab");
  const pinned = await freshSession(a);
  const { tab: otherTab, seen: otherSeen } = await openRecorded(other.sessionId);
  const { tab, seen } = await openRecorded(pinned.sessionId);
  await vscode.commands.executeCommand("acpLsp.switchSession", other.sessionId);

  const answers = answerPermissions(a, () => "leave");
  try {
    const turn = tab.controller.sendPrompt("Edit this file");
    const request = await waitFor(
      () => seen.find((m): m is Extract<HostToWebview, { type: "permission" }> => m.type === "permission"),
      "the permission prompt in the tab",
      20_000,
    );
    assertEqual(request.permission.sessionId, pinned.sessionId, "the prompt is the tab's session's");
    assert(!otherSeen.some((m) => m.type === "permission"), "the other tab does not show it");
    await tab.controller.handle({ type: "permission", requestId: request.permission.requestId, optionId: "allow" });
    assertEqual((await turn)?.stopReason, "end_turn", "the turn ended after the answer from the tab");
    await waitFor(() => seen.some((m) => m.type === "permissionDone"), "the prompt leaves the tab");

    const slow = tab.controller.sendPrompt("Go slow please");
    await waitFor(() => current(a, pinned.sessionId).status === "running", "the slow turn to start");
    await tab.controller.handle({ type: "cancel" });
    assertEqual((await slow)?.stopReason, "cancelled", "Stop in the tab cancelled its turn");
    assertEqual(a.store.activeId, other.sessionId, "the active session did not change");
  } finally {
    answers.dispose();
  }

  const label = sessionLabel(current(a, pinned.sessionId)); // the agent names it after the first prompt
  await vscode.commands.executeCommand("acpLsp.closeSession", pinned.sessionId);
  await waitFor(() => tab.panel.title === `${label} (closed)`, `the tab says its session is closed (${tab.panel.title})`);
  const last = [...seen].reverse().find((m) => m.type === "session");
  assertEqual(last?.type === "session" ? [last.session?.sessionId, last.session?.status] : null, [pinned.sessionId, "closed"], "the tab shows its session closed");
  assertEqual(otherTab.sessionId, other.sessionId, "the other tab is unaffected");
  await closeAllEditors();
}, 60_000);

test("palette commands act on the chat last used: a focused tab's session, then the side bar's active one", async () => {
  const a = await api();
  await closeAllEditors();
  const active = await named("Side bar session");
  const pinned = await named("Tab session");
  const first = await openTab(active.sessionId);
  const tab = await openTab(pinned.sessionId);
  await vscode.commands.executeCommand("acpLsp.switchSession", active.sessionId);
  await focusSettled(a, a.chat);
  const reports: string[] = []; // which chat took "last used" from here on, for a failure
  const who = (chat: ChatController): string => (chat === a.chat ? "side bar" : chat === tab.controller ? "tab" : chat === first.controller ? "first tab" : "other");
  const watching = a.lastUsed.onDidChange((chat) => reports.push(who(chat)));

  // The user clicks into the second tab (its webview says so).
  await tab.controller.handle({ type: "focused" });
  assertEqual(a.lastUsed.current === tab.controller, true, "the tab is the chat last used");
  const slow = tab.controller.sendPrompt("Go slow please");
  await waitFor(() => current(a, pinned.sessionId).status === "running", "the slow turn in the tab to start");
  await vscode.commands.executeCommand("acpLsp.cancel");
  assertEqual((await slow)?.stopReason, "cancelled", "ACP: Cancel stopped the tab's turn");
  await vscode.commands.executeCommand("acpLsp.renameSession", undefined, "Renamed from the palette");
  // failed once in seven runs (run 7, docs/testing.md): say which session took the name
  await waitFor(() => current(a, pinned.sessionId).title === "Renamed from the palette", "the tab's session renamed").catch((error: Error) => {
    const lastUsed = a.lastUsed.current === tab.controller ? "the tab" : "another chat";
    throw new Error(`${error.message}: tab "${current(a, pinned.sessionId).title}", side bar "${current(a, active.sessionId).title}", last used ${lastUsed}; reports ${reports.join(", ")}`);
  });
  watching.dispose();
  assertEqual(current(a, active.sessionId).title, "Side bar session", "the active session keeps its name");
  assertEqual(a.store.activeId, active.sessionId, "the active session did not change");
  // The side bar's title bar acts on its own session, whichever chat was used last.
  await vscode.commands.executeCommand("acpLsp.renameActiveSession", undefined, "Renamed from the side bar");
  await waitFor(() => current(a, active.sessionId).title === "Renamed from the side bar", "the active session renamed");

  // Back in the side bar: the commands act on the active session again.
  await a.chat.handle({ type: "focused" });
  assertEqual(a.lastUsed.current === a.chat, true, "the side bar is the chat last used");
  await vscode.commands.executeCommand("acpLsp.renameSession", undefined, "Active again");
  await waitFor(() => current(a, active.sessionId).title === "Active again", "the active session renamed");
  assertEqual(current(a, pinned.sessionId).title, "Renamed from the palette", "the tab's session keeps its name");

  // A closed tab that was last used hands the commands back to the side bar.
  await first.controller.handle({ type: "focused" });
  first.panel.dispose();
  await waitFor(() => a.panels.find(active.sessionId) === undefined, "the closed tab is forgotten");
  assertEqual(a.lastUsed.current === a.chat, true, "the side bar is the chat last used again");
  await closeAllEditors();
}, 60_000);

test("Switch Session offers Open in Editor Tab on each session: it opens the session in a tab, the side bar stays", async () => {
  const a = await api();
  await closeAllEditors();
  const other = await named("Open me in a tab");
  const active = await freshSession(a);
  const [asked] = await runAnswering(
    a,
    {
      pickWithButtons: async <T extends vscode.QuickPickItem>(items: T[]) => {
        const item = items.find((i) => i.label === "Open me in a tab");
        const button = item?.buttons?.[0];
        assert(item && button, `the switcher offers the session with a button: ${JSON.stringify(items.map((i) => i.label))}`);
        return { item, button }; // the user presses the session's button
      },
    },
    "acpLsp.switchSession",
  );
  assert(asked?.kind === "pick", "the switcher was shown");
  const tooltips = asked.items.map((i) => i.buttons?.map((b) => b.tooltip).join());
  assertEqual(tooltips, asked.items.map(() => "Open in Editor Tab"), "every session's button");
  const tab = await waitFor(() => a.panels.find(other.sessionId), "a tab of the session");
  assertEqual(tab.panel.title, "Open me in a tab", "the tab's title");
  assertEqual(a.store.activeId, active.sessionId, "the side bar stays on its session");
  await closeAllEditors();
}, 60_000);

/** Configure the scripted test agent (tests/agents) as `forker`, which can fork sessions. */
async function withForker(fn: () => Promise<void>): Promise<void> {
  const a = await api();
  const python = process.env.ACP_LSP_PYTHON;
  assert(python, "ACP_LSP_PYTHON is set");
  const script = path.resolve(__dirname, "../../../../tests/agents/scripted_acp.py");
  const initialize = {
    protocolVersion: 1,
    agentInfo: { name: "forker", version: "1.0.0" },
    authMethods: [],
    agentCapabilities: { loadSession: true, sessionCapabilities: { fork: {}, close: {} } },
  };
  const settings = vscode.workspace.getConfiguration("acpLsp");
  const agents = { forker: { command: python, args: [script, "-c", JSON.stringify({ initialize })], title: "Forker (test)" } };
  await settings.update("agents", agents, vscode.ConfigurationTarget.Global);
  try {
    await waitFor(async () => (await a.store.listAgents()).some((agent) => agent.name === "forker"), "the forker agent listed");
    await fn();
  } finally {
    await settings.update("agents", undefined, vscode.ConfigurationTarget.Global);
  }
}

test("New Session and Fork Session started from a chat tab land in that tab; the side bar stays on its session", async () => {
  const a = await api();
  await closeAllEditors();
  await withForker(async () => {
    const sideBar = await named("Side bar stays");
    const pinned = await a.chat.newSession("forker");
    await vscode.commands.executeCommand("acpLsp.switchSession", sideBar.sessionId);
    const { tab, seen } = await openRecorded(pinned.sessionId);
    await focusSettled(a, tab.controller);
    const sessionShown = (): string | undefined => {
      const last = [...seen].reverse().find((m) => m.type === "session");
      return last?.type === "session" ? last.session?.sessionId : undefined;
    };

    // The "+" in the tab (its webview's message).
    await tab.controller.handle({ type: "newSession" });
    const fresh = tab.sessionId;
    assert(fresh !== pinned.sessionId, "the tab shows a new session");
    assertEqual(sessionShown(), fresh, "the tab's chat was sent the new session");
    await waitFor(() => tab.panel.title === sessionLabel(current(a, fresh)), `the tab's title names it (${tab.panel.title})`);
    assertEqual([a.store.activeId, a.chat.session()?.sessionId], [sideBar.sessionId, sideBar.sessionId], "the side bar stays on its session");
    assert(isOpen(current(a, pinned.sessionId)), "the tab's earlier session is still open");

    // Back to the first session in the tab (its session list), then the palette's commands
    // after a click into the tab: ACP: Fork Session, ACP: New Session.
    await tab.controller.handle({ type: "switchSession", sessionId: pinned.sessionId });
    await tab.controller.handle({ type: "prompt", text: "Remember the forked part", includeContext: false });
    await tab.controller.handle({ type: "focused" });
    const forked = await vscode.commands.executeCommand<ChatSession | undefined>("acpLsp.forkSession");
    assert(forked, "the session was forked");
    assertEqual([tab.sessionId, sessionShown()], [forked.sessionId, forked.sessionId], "the tab shows the fork");
    assert(userText(current(a, forked.sessionId)).includes("forked part"), "the fork has the tab's conversation");
    assertEqual(a.store.activeId, sideBar.sessionId, "the side bar still stays on its session");
    const made = await vscode.commands.executeCommand<ChatSession | undefined>("acpLsp.newSession", "demo");
    assert(made, "a new session was started");
    assertEqual([tab.sessionId, sessionShown()], [made.sessionId, made.sessionId], "the tab shows the new session");
    assertEqual(a.store.activeId, sideBar.sessionId, "the side bar still stays on its session");

    // From the side bar, New Session lands there, as before.
    await a.chat.handle({ type: "focused" });
    const inSideBar = await vscode.commands.executeCommand<ChatSession | undefined>("acpLsp.newSession", "demo");
    assertEqual(a.store.activeId, inSideBar?.sessionId, "a new session from the side bar is its active one");
    assertEqual(tab.sessionId, made.sessionId, "the tab stays on its session");
  });
  await closeAllEditors();
}, 60_000);

test("the status bar shows the session of the chat last used: a focused tab's, then the side bar's", async () => {
  const a = await api();
  await closeAllEditors();
  const inTab = await named("Status in the tab");
  const active = await named("Status in the side bar");
  const tab = await openTab(inTab.sessionId);
  await focusSettled(a, tab.controller);
  await a.chat.handle({ type: "focused" });
  assert(a.statusBar.text.includes("Status in the side bar"), `the side bar's session: ${a.statusBar.text}`);
  await tab.controller.handle({ type: "focused" });
  assert(a.statusBar.text.includes("Status in the tab"), `the tab's session: ${a.statusBar.text}`);
  assertEqual(a.store.activeId, active.sessionId, "the active session did not change");
  // The tab shows another session: the status bar follows it.
  await tab.controller.handle({ type: "newSession" });
  const fresh = current(a, tab.sessionId);
  assert(a.statusBar.text.includes(sessionLabel(fresh)), `the tab's new session: ${a.statusBar.text}`);
  // Closing the tab hands the status bar back to the side bar's session.
  tab.panel.dispose();
  await waitFor(() => a.statusBar.text.includes("Status in the side bar"), `the side bar's session again (${a.statusBar.text})`);
  await closeAllEditors();
}, 60_000);

test("a prompt sent while the chat's new session is starting goes to the new session, in the side bar and in a tab", async () => {
  const a = await api();
  await closeAllEditors();
  const words = "/help sent while starting";
  const before = await freshSession(a);
  const tab = await openTab((await a.chat.newSession()).sessionId);
  const tabBefore = tab.sessionId;
  for (const chat of [a.chat, tab.controller]) {
    // The "+" then Enter at once: the webview's two messages, neither waiting for the other.
    await Promise.all([chat.handle({ type: "newSession" }), chat.handle({ type: "prompt", text: words, includeContext: false })]);
  }
  const sideBarNow = a.chat.session();
  assert(sideBarNow && sideBarNow.sessionId !== before.sessionId, "the side bar shows its new session");
  assert(tab.sessionId !== tabBefore, "the tab shows its new session");
  for (const [label, sessionId] of [["side bar", sideBarNow.sessionId], ["tab", tab.sessionId]] as const) {
    assert(userText(current(a, sessionId)).includes("sent while starting"), `the ${label}'s new session got the prompt`);
  }
  for (const [label, sessionId] of [["side bar", before.sessionId], ["tab", tabBefore]] as const) {
    assert(!userText(current(a, sessionId)).includes("sent while starting"), `the ${label}'s session before did not get it`);
  }

  // A new session that cannot start: the prompt is not sent anywhere, its text is given back.
  const shownBefore = tab.sessionId;
  const seen = record(tab);
  const lost = "kept when no session starts";
  await Promise.all([
    tab.controller.handle({ type: "newSession", agent: "no-such-agent" }),
    tab.controller.handle({ type: "prompt", text: lost, includeContext: false }),
  ]);
  assertEqual(tab.sessionId, shownBefore, "the tab still shows its session");
  assert(!userText(current(a, shownBefore)).includes(lost), "the session shown before did not get the prompt");
  assert(
    seen.some((m) => m.type === "focusInput" && m.text === lost),
    "the prompt's text is back in the tab's input",
  );
  await closeAllEditors();
}, 60_000);
