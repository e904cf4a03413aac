// End to end in real VS Code: agents that change files on disk themselves (Claude Code's own
// tools, shell commands). The scripted test agent (tests/agents/scripted_acp.py) runs a
// "shell command" tool call that rewrites a file on disk and reports nothing else, as
// tests/e2e/test_disk_sync.py does against the bare server. What a user must see: the open
// editor shows the agent's change with their unsaved text kept, saving writes both without
// the "file is newer" question, and the turn's files can be kept or rejected from the chat.

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import type { SyncEvent } from "../../diskSync";
import { turnChanges } from "../../model/queries";
import { assert, assertEqual, test, waitFor } from "./harness";
import { api, closeAllEditors, current, documentFor, openEditor, writeFile } from "./helpers";

const APP = `"""A tiny greeting application."""


def greet(name: str) -> str:
    return f"Hello, {name}!"


if __name__ == "__main__":
    print(greet("world"))
`;
const NOTE = "# my unsaved note\n";

type Step = Record<string, unknown>;

/** A command the agent runs itself: a tool call, the disk changes, completed. First a model
 * round trip's pause: the server snapshots the folder before the turn, waiting for it only a
 * quarter of a second (acp_lsp/editor/disk_sync.py BASELINE_WAIT_S). */
function shell(callId: string, title: string, ...changes: Step[]): Step[] {
  return [
    { sleep: 0.5 },
    { update: { sessionUpdate: "tool_call", toolCallId: callId, title, kind: "execute", status: "in_progress" } },
    ...changes,
    { update: { sessionUpdate: "tool_call_update", toolCallId: callId, status: "completed" } },
  ];
}

function say(text: string): Step {
  return { update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } };
}

/** Configure the scripted agent `name` running `steps` for every prompt; run `fn` in a new
 * session of it (the chat's). */
async function withAgent(name: string, steps: Step[], fn: (sessionId: string) => Promise<void>): Promise<void> {
  const a = await api();
  const python = process.env.ACP_LSP_PYTHON;
  assert(python, "ACP_LSP_PYTHON is set");
  const script = path.resolve(__dirname, "../../../../tests/agents/scripted_acp.py");
  await a.server.ready();
  const settings = vscode.workspace.getConfiguration("acpLsp");
  const agents = { [name]: { command: python, args: [script, "-c", JSON.stringify({ on: { "session/prompt": steps } })], title: `${name} (test)` } };
  await settings.update("agents", agents, vscode.ConfigurationTarget.Global);
  try {
    await waitFor(async () => (await a.store.listAgents()).some((agent) => agent.name === name), `the ${name} agent listed`, 30_000);
    await vscode.commands.executeCommand("acpLsp.openChat");
    const session = await a.chat.newSession(name);
    await fn(session.sessionId);
  } finally {
    await settings.update("agents", undefined, vscode.ConfigurationTarget.Global);
  }
}

/** Set files.autoSave; returns what puts it back. The web workbench saves a second after
 * typing by default ("afterDelay"): the unsaved text most of these tests are about would not
 * stay unsaved. */
async function setAutoSave(value: string): Promise<() => Promise<void>> {
  const files = vscode.workspace.getConfiguration("files");
  const before = files.inspect<string>("autoSave")?.globalValue;
  await files.update("autoSave", value, vscode.ConfigurationTarget.Global);
  return async () => files.update("autoSave", before, vscode.ConfigurationTarget.Global);
}

/** Record the sync outcomes of the extension from now on. */
async function recordSyncs(): Promise<{ events: SyncEvent[]; dispose(): void }> {
  const a = await api();
  const events: SyncEvent[] = [];
  const sub = a.documents.onDidSync((event) => events.push(event));
  return { events, dispose: () => sub.dispose() };
}

function syncOf(events: SyncEvent[], file: string): SyncEvent | undefined {
  const uri = vscode.Uri.file(file).toString();
  return [...events].reverse().find((e) => e.uri === uri);
}

/** Type at the end of a document, as the user would (unsaved). */
async function typeAtEnd(editor: vscode.TextEditor, text: string): Promise<void> {
  const end = editor.document.positionAt(editor.document.getText().length);
  assert(await editor.edit((b) => b.insert(end, text)), "typed into the editor");
}

/** Save as the user does; VS Code answers false (and shows its "file is newer" error) when the
 * document's disk state is stale. */
async function save(document: vscode.TextDocument): Promise<void> {
  assert(await document.save(), `${path.basename(document.fileName)} saved without the "content of the file is newer" conflict`);
  assert(!document.isDirty, "clean after saving");
}

test("disk sync: an agent's shell change on disk reaches the open editor with the unsaved line kept; undo works; Save writes both without asking", async () => {
  const a = await api();
  await closeAllEditors();
  const restoreAutoSave = await setAutoSave("off");
  const file = writeFile("sync/merge.py", APP);
  const changed = APP.replace("Hello, ", "Hi there, ");
  const editor = await openEditor(file);
  await typeAtEnd(editor, NOTE);
  const syncs = await recordSyncs();
  try {
    await withAgent("disk-merge", [...shell("sed1", "sed -i s/Hello/Hi there/ sync/merge.py", { write_file: { path: "sync/merge.py", content: changed } }), say("Done.")], async (sessionId) => {
      const result = await a.chat.sendPrompt("greet differently");
      assertEqual(result?.stopReason, "end_turn", "stop reason");
      const event = await waitFor(() => syncOf(syncs.events, file), "the document synced");
      assertEqual(event.outcome, "merged", "the sync outcome");
      const document = editor.document;
      assertEqual(document.getText(), changed + NOTE, "the editor shows the agent's change and the unsaved line");
      assert(document.isDirty, "the unsaved line is still unsaved");
      assertEqual(fs.readFileSync(file, "utf8"), changed, "the disk holds the agent's change only");
      assertEqual(vscode.window.activeTextEditor?.document.uri.toString(), document.uri.toString(), "the editor is still the active one");
      // Undo goes back through it: first to the disk's text (clean), redo brings the line back.
      await vscode.window.showTextDocument(document);
      await vscode.commands.executeCommand("undo");
      await waitFor(() => document.getText() === changed, "undo: the disk's text");
      assert(!document.isDirty, "the disk's text is the saved state");
      await vscode.commands.executeCommand("redo");
      await waitFor(() => document.getText() === changed + NOTE, "redo: the unsaved line again");
      await save(document);
      assertEqual(fs.readFileSync(file, "utf8"), changed + NOTE, "the disk has both");
      const files = turnChanges(current(a, sessionId));
      assertEqual(files, [{ path: file, change: "modified", status: "pending" }], "the turn's changed files");
    });
  } finally {
    syncs.dispose();
    await restoreAutoSave();
    await closeAllEditors();
  }
}, 60_000);

test("disk sync: documents in background tabs are synced too (one VS Code opened itself for its unsaved text); the active editor stays", async () => {
  const a = await api();
  await closeAllEditors();
  const restoreAutoSave = await setAutoSave("off");
  const back = writeFile("sync/back.py", APP);
  const hidden = writeFile("sync/hidden.py", APP);
  const front = writeFile("sync/front.py", "front = 1\n");
  const backEditor = await openEditor(back);
  await typeAtEnd(backEditor, NOTE);
  // open (the language server has it) and edited, in no editor: VS Code opens a tab for an
  // unsaved document itself (in the background), a moment later
  const hiddenDoc = await documentFor(hidden);
  const edit = new vscode.WorkspaceEdit();
  edit.insert(hiddenDoc.uri, hiddenDoc.positionAt(APP.length), NOTE);
  assert(await vscode.workspace.applyEdit(edit), "the hidden document edited");
  const frontEditor = await openEditor(front);
  const labels = (): string[] => vscode.window.tabGroups.all.flatMap((g) => g.tabs.map((t) => t.label)).sort();
  await waitFor(() => labels().includes("hidden.py"), "VS Code's tab of the unsaved document");
  const tabsBefore = labels();
  const changed = APP.replace("world", "everyone");
  const syncs = await recordSyncs();
  try {
    await withAgent(
      "disk-back",
      [
        ...shell(
          "sed2",
          "sed -i s/world/everyone/ sync/back.py sync/hidden.py",
          { write_file: { path: "sync/back.py", content: changed } },
          { write_file: { path: "sync/hidden.py", content: changed } },
        ),
      ],
      async () => {
        await a.chat.sendPrompt("greet everyone");
        await waitFor(() => syncOf(syncs.events, back) && syncOf(syncs.events, hidden), "both documents synced");
        assertEqual(syncOf(syncs.events, back)?.outcome, "merged", "the background tab's outcome");
        assertEqual(syncOf(syncs.events, hidden)?.outcome, "merged", "the hidden document's outcome");
        assertEqual(backEditor.document.getText(), changed + NOTE, "the background tab's text");
        assertEqual(hiddenDoc.getText(), changed + NOTE, "the hidden document's text");
        assertEqual(vscode.window.activeTextEditor?.document.uri.toString(), frontEditor.document.uri.toString(), "the active editor stays");
        assertEqual(labels(), tabsBefore, "no tab opened or closed");
        await save(backEditor.document);
        await save(hiddenDoc);
        assertEqual(fs.readFileSync(back, "utf8"), changed + NOTE, "back.py on disk");
        assertEqual(fs.readFileSync(hidden, "utf8"), changed + NOTE, "hidden.py on disk");
      },
    );
  } finally {
    syncs.dispose();
    await restoreAutoSave();
    await closeAllEditors();
  }
}, 60_000);

test("disk sync: a clean open document takes the agent's disk text and stays clean; the next save asks nothing", async () => {
  const a = await api();
  await closeAllEditors();
  const restoreAutoSave = await setAutoSave("off");
  const file = writeFile("sync/clean.py", APP);
  const changed = APP.replace("tiny", "small");
  const editor = await openEditor(file);
  const syncs = await recordSyncs();
  try {
    await withAgent("disk-clean", shell("sed3", "sed -i s/tiny/small/ sync/clean.py", { write_file: { path: "sync/clean.py", content: changed } }), async () => {
      await a.chat.sendPrompt("smaller");
      await waitFor(() => syncOf(syncs.events, file), "the document synced");
      await waitFor(() => editor.document.getText() === changed, "the editor shows the disk's text");
      assert(!editor.document.isDirty, `clean (outcome ${syncOf(syncs.events, file)?.outcome})`);
      await typeAtEnd(editor, NOTE);
      await save(editor.document);
      assertEqual(fs.readFileSync(file, "utf8"), changed + NOTE, "saved over the agent's text");
    });
  } finally {
    syncs.dispose();
    await restoreAutoSave();
    await closeAllEditors();
  }
}, 60_000);

test("disk sync: the turn's changed files: Reject restores the disk byte for byte and the editor follows with the unsaved line; Keep keeps; Reject all", async () => {
  const a = await api();
  await closeAllEditors();
  const restoreAutoSave = await setAutoSave("off");
  const app = writeFile("sync/review.py", APP);
  const kept = writeFile("sync/kept.py", "kept = 1\n");
  const made = path.join(path.dirname(app), "made.py");
  const gone = writeFile("sync/gone.py", "gone = 1\n");
  fs.rmSync(made, { force: true });
  const changed = APP.replace("Hello", "Howdy");
  const editor = await openEditor(app);
  await typeAtEnd(editor, NOTE);
  const syncs = await recordSyncs();
  try {
    await withAgent(
      "disk-review",
      shell(
        "sh4",
        "./refactor.sh",
        { write_file: { path: "sync/review.py", content: changed } },
        { write_file: { path: "sync/kept.py", content: "kept = 2\n" } },
        { write_file: { path: "sync/made.py", content: "made = 1\n" } },
        { delete_file: "sync/gone.py" },
      ),
      async (sessionId) => {
        await a.chat.sendPrompt("refactor");
        await waitFor(() => syncOf(syncs.events, app)?.outcome === "merged", "review.py synced");
        const files = (): Record<string, string> =>
          Object.fromEntries(
            turnChanges(current(a, sessionId))
              .map((f): [string, string] => [path.basename(f.path), `${f.change} ${f.status}`])
              .sort(([x], [y]) => x.localeCompare(y)),
          );
        await waitFor(() => Object.keys(files()).length === 4, "four files in the summary");
        assertEqual(
          files(),
          { "gone.py": "deleted pending", "kept.py": "modified pending", "made.py": "created pending", "review.py": "modified pending" },
          "the summary",
        );
        // Reject one file, through the chat's message path (the summary's Reject button)
        syncs.events.length = 0;
        await a.chat.handle({ type: "review", action: "reject", path: app });
        assertEqual(fs.readFileSync(app, "utf8"), APP, "review.py restored on disk byte for byte");
        await waitFor(() => syncOf(syncs.events, app), "the editor followed the undo");
        assertEqual(editor.document.getText(), APP + NOTE, "the editor: the old text and the unsaved line");
        assert(editor.document.isDirty, "the line is still unsaved");
        await save(editor.document);
        assertEqual(fs.readFileSync(app, "utf8"), APP + NOTE, "saved without a question");
        // Keep one
        await a.chat.handle({ type: "review", action: "accept", path: kept });
        assertEqual(fs.readFileSync(kept, "utf8"), "kept = 2\n", "kept.py keeps the agent's text");
        await waitFor(() => files()["kept.py"] === "modified accepted" && files()["review.py"] === "modified rejected", "statuses updated");
        // Reject all: the rest
        await a.chat.handle({ type: "review", action: "reject" });
        assert(!fs.existsSync(made), "the created file is gone");
        assertEqual(fs.readFileSync(gone, "utf8"), "gone = 1\n", "the deleted file is back");
        await waitFor(() => files()["made.py"] === "created rejected" && files()["gone.py"] === "deleted rejected", "all decided");
        assertEqual(files()["kept.py"], "modified accepted", "Reject all leaves a kept file alone");
      },
    );
  } finally {
    syncs.dispose();
    await restoreAutoSave();
    await closeAllEditors();
  }
}, 60_000);

test("disk sync: an agent's change that conflicts with unsaved edits leaves the editor as the user had it and warns naming the file", async () => {
  const a = await api();
  await closeAllEditors();
  const restoreAutoSave = await setAutoSave("off");
  const file = writeFile("sync/conflict.py", APP);
  const theirs = APP.replace("Hello", "Bonjour");
  const editor = await openEditor(file);
  const line = editor.document.lineAt(4);
  assert(await editor.edit((b) => b.replace(line.range, '    return f"Hallo, {name}!"')), "the user's edit");
  const mine = editor.document.getText();
  const syncs = await recordSyncs();
  try {
    await withAgent("disk-conflict", shell("sed5", "sed -i s/Hello/Bonjour/ sync/conflict.py", { write_file: { path: "sync/conflict.py", content: theirs } }), async () => {
      await a.chat.sendPrompt("french");
      const event = await waitFor(() => syncOf(syncs.events, file), "the conflict reported");
      assertEqual(event.outcome, "conflict", "the outcome");
      assert(event.message?.includes("sync/conflict.py"), `the warning names the file: ${event.message}`);
      // the server's own warning (window/showMessage) was taken into this one: its lines
      assert(event.message?.includes("(lines 5)"), `the warning names the lines: ${event.message}`);
      assertEqual(editor.document.getText(), mine, "the user's text is kept");
      assertEqual(fs.readFileSync(file, "utf8"), theirs, "the disk has the agent's");
    });
  } finally {
    syncs.dispose();
    await restoreAutoSave();
    await vscode.commands.executeCommand("workbench.action.files.revert");
    await closeAllEditors();
  }
}, 60_000);

test("disk sync: with the chat in the active editor tab, a document in another tab is synced and the chat tab stays in front", async () => {
  const a = await api();
  await closeAllEditors();
  const restoreAutoSave = await setAutoSave("off");
  const file = writeFile("sync/behind.py", APP);
  const changed = APP.replace("tiny", "little");
  const editor = await openEditor(file);
  await typeAtEnd(editor, NOTE);
  const syncs = await recordSyncs();
  try {
    await withAgent("disk-tab", shell("sed6", "sed -i s/tiny/little/ sync/behind.py", { write_file: { path: "sync/behind.py", content: changed } }), async (sessionId) => {
      // the chat of the session in an editor tab of the same group, in front
      const tab = a.panels.open(sessionId, vscode.ViewColumn.Active);
      await waitFor(() => tab.panel.active, "the chat tab in front");
      await tab.controller.sendPrompt("littler");
      await waitFor(() => syncOf(syncs.events, file), "the document synced");
      assertEqual(syncOf(syncs.events, file)?.outcome, "merged", "the outcome");
      assertEqual(editor.document.getText(), changed + NOTE, "the document's text");
      const front = vscode.window.tabGroups.activeTabGroup.activeTab;
      assert(front?.input instanceof vscode.TabInputWebview && tab.panel.active, `the chat tab is in front again: ${front?.label}`);
      await save(editor.document);
      assertEqual(fs.readFileSync(file, "utf8"), changed + NOTE, "saved");
    });
  } finally {
    syncs.dispose();
    await restoreAutoSave();
    await closeAllEditors();
  }
}, 60_000);

test("disk sync: with files.autoSave afterDelay (code-server's default) the merged document saves itself, no conflict", async () => {
  const a = await api();
  await closeAllEditors();
  // long enough for the turn to change the disk before the unsaved line is saved
  const files = vscode.workspace.getConfiguration("files");
  const delay = files.inspect<number>("autoSaveDelay")?.globalValue;
  await files.update("autoSaveDelay", 5000, vscode.ConfigurationTarget.Global);
  const restoreAutoSave = await setAutoSave("afterDelay");
  const file = writeFile("sync/auto.py", APP);
  const changed = APP.replace("greeting", "salutation");
  const syncs = await recordSyncs();
  try {
    await withAgent("disk-auto", shell("sed7", "sed -i s/greeting/salutation/ sync/auto.py", { write_file: { path: "sync/auto.py", content: changed } }), async () => {
      const editor = await openEditor(file);
      await typeAtEnd(editor, NOTE);
      await a.chat.sendPrompt("salute");
      await waitFor(() => syncOf(syncs.events, file), "the document synced");
      assertEqual(syncOf(syncs.events, file)?.outcome, "merged", "the outcome (the line still unsaved)");
      await waitFor(() => !editor.document.isDirty, "the auto save", 15_000);
      assertEqual(fs.readFileSync(file, "utf8"), changed + NOTE, "auto-saved: the agent's change and the line");
    });
  } finally {
    syncs.dispose();
    await restoreAutoSave();
    await files.update("autoSaveDelay", delay, vscode.ConfigurationTarget.Global);
    await closeAllEditors();
  }
}, 60_000);
