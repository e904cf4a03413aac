// acp/documentsSynced (DESIGN §3, "Disk and buffers never diverge"): an agent changed files on
// disk itself (its own tools, a shell command), and the server brought each open document to
// the file's new text, the user's unsaved edits merged on top, through a workspace/applyEdit.
//
// VS Code still holds the document's *old* disk state then: it does not reload a dirty
// document when its file changes, so saving would fail with "the content of the file is
// newer". Here each such document takes the new disk state as its base:
// - one equal to the file is reverted: same text, clean, the disk's fresh stat;
// - one with the user's unsaved edits is reverted (the disk's text and stat), then its text
//   is put back as one edit: still unsaved, nothing lost, undo goes back through all of it.
// VS Code reverts only the active editor (`workbench.action.files.revert` takes no URI and no
// API reverts a document), so the document is shown in the active group for the revert without
// taking focus, and the group's previous tab is shown again afterwards.
// A conflict (the user's edits and the agent's change touch the same lines) leaves the
// document as the user had it: a warning names the file and offers the comparison.

import * as path from "node:path";
import * as vscode from "vscode";
import { parseDiskConflict } from "./model/serverMessages";
import { middleReplacement } from "./model/textChange";
import type * as protocol from "./protocol";

const REVERT_COMMAND = "workbench.action.files.revert";
const COMPARE_COMMAND = "workbench.files.action.compareWithSaved";
/** How long a notification may wait for the server's edit to reach the document. */
const VERSION_WAIT_MS = 2000;
/** How long the reverted text may take to reach the extension host (a loaded machine took
 * over 2 s, and the user's unsaved text was then not put back). */
const REVERT_WAIT_MS = 10_000;
/** How long a tab shown again may take to be in front. */
const REVEAL_WAIT_MS = 1000;
/** How long the server's conflict warning waits for its acp/documentsSynced before it is shown
 * as the server wrote it. */
const CONFLICT_WAIT_MS = 3000;

export type SyncOutcome =
  /** The document equals the file and is clean. */
  | "clean"
  /** The document holds the file's text plus the user's unsaved edits, on the file's new state. */
  | "merged"
  /** The user's edits conflict with the change: left as it was, the user was told. */
  | "conflict"
  /** Not open, or nothing to do (already clean). */
  | "unchanged"
  /** VS Code did not revert it (the reason is logged). */
  | "failed";

export interface SyncEvent {
  uri: string;
  outcome: SyncOutcome;
  /** The warning shown to the user (a conflict). */
  message?: string;
}

async function waitUntil(done: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) {
      return false;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

/** The file's text as VS Code loads it (UTF-8, a BOM dropped), or null when unreadable. */
async function readText(uri: vscode.Uri): Promise<string | null> {
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    return null;
  }
}

function sameUri(a: vscode.Uri, b: vscode.Uri): boolean {
  return a.toString() === b.toString();
}

function tabShows(tab: vscode.Tab, uri: vscode.Uri): boolean {
  return tab.input instanceof vscode.TabInputText && sameUri(tab.input.uri, uri);
}

export class DocumentSync implements vscode.Disposable {
  /** One document at a time: each revert borrows the active editor. */
  private queue: Promise<void> = Promise.resolve();
  private readonly emitter = new vscode.EventEmitter<SyncEvent>();
  /** The server's conflict warnings (file name -> its lines), until their notification comes. */
  private readonly conflictLines = new Map<string, { lines: string; timer: NodeJS.Timeout }>();
  /** Fires once per document of each notification, when it was handled. */
  readonly onDidSync = this.emitter.event;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    /** The agent of a session, for messages ("claude changed …"). */
    private readonly agentOf: (sessionId: string) => string | undefined,
    /** Shows a tab of the extension's own (a chat tab) again; false for any other tab. */
    private readonly revealOwn: (tab: vscode.Tab, column: vscode.ViewColumn) => boolean = () => false,
  ) {}

  /** A warning the server showed (window/showMessage): true when it is the server's news of a
   * conflict, which the conflict's acp/documentsSynced entry shows instead (with its lines and
   * an action). Shown as it is should that notification not come. */
  takeServerWarning(message: string, show: (message: string) => void): boolean {
    const conflict = parseDiskConflict(message);
    if (!conflict) {
      return false;
    }
    clearTimeout(this.conflictLines.get(conflict.file)?.timer);
    const timer = setTimeout(() => {
      this.conflictLines.delete(conflict.file);
      show(message);
    }, CONFLICT_WAIT_MS);
    this.conflictLines.set(conflict.file, { lines: conflict.lines, timer });
    return true;
  }

  /** Handle one acp/documentsSynced notification; resolves when its documents are done. */
  handle(params: protocol.DocumentsSyncedParams): Promise<void> {
    const agent = this.agentOf(params.sessionId) ?? "the agent";
    const documents = Array.isArray(params.documents) ? params.documents : [];
    const run = async (): Promise<void> => {
      for (const entry of documents) {
        let event: SyncEvent;
        try {
          event = await this.syncOne(entry, agent);
        } catch (error) {
          this.log.warn(`acp/documentsSynced: ${entry.uri}: ${String(error)}`);
          event = { uri: entry.uri, outcome: "failed" };
        }
        this.log.info(`acp/documentsSynced: ${entry.uri} v${entry.version}: ${event.outcome}`);
        this.emitter.fire(event);
      }
    };
    this.queue = this.queue.then(run, run);
    return this.queue;
  }

  private async syncOne(entry: protocol.SyncedDocument, agent: string): Promise<SyncEvent> {
    const uri = vscode.Uri.parse(entry.uri, true);
    const document = vscode.workspace.textDocuments.find((d) => sameUri(d.uri, uri));
    if (document && entry.conflict) {
      return { uri: entry.uri, outcome: "conflict", message: this.warnConflict(document, agent) };
    }
    return { uri: entry.uri, outcome: document ? await this.bringToDisk(document, entry) : "unchanged" };
  }

  private async bringToDisk(document: vscode.TextDocument, entry: protocol.SyncedDocument): Promise<SyncOutcome> {
    await this.waitForVersion(document, entry.version);
    if (!document.isDirty) {
      return "unchanged"; // VS Code reloaded it itself (it was clean): the disk's state already
    }
    return this.reload(document);
  }

  /** The server's edit reaches the extension host before its notification, normally; a late
   * one is waited for a little. */
  private async waitForVersion(document: vscode.TextDocument, version: number): Promise<void> {
    await waitUntil(() => document.version >= version, VERSION_WAIT_MS);
  }

  /** Revert the document and put its text back. VS Code reverts the active group's active
   * editor only: the document is shown there without focus for it, and the group's previous
   * tab is shown again afterwards (a tab opened only for this is closed if the document ends
   * clean; VS Code keeps a tab open for an unsaved document anyway). */
  private async reload(document: vscode.TextDocument): Promise<SyncOutcome> {
    const uri = document.uri.toString();
    const group = vscode.window.tabGroups.activeTabGroup;
    const previous = group.activeTab;
    const existing = group.tabs.find((tab) => tabShows(tab, document.uri));
    await vscode.window.showTextDocument(document, {
      viewColumn: group.viewColumn,
      preserveFocus: true,
      preview: existing ? existing.isPreview : false,
    });
    const shown = vscode.window.tabGroups.activeTabGroup.activeTab;
    if (!shown || !tabShows(shown, document.uri)) {
      this.log.warn(`acp/documentsSynced: could not make ${uri} the active editor; saving it may ask about the newer file`);
      return "failed";
    }
    const disk = await readText(document.uri);
    // Whatever the document holds right before the revert (the user may have typed since the
    // server's edit) is what it keeps.
    const text = document.getText();
    const version = document.version;
    await vscode.commands.executeCommand(REVERT_COMMAND);
    // The revert's dirty state and its text reach the extension host separately, after the
    // command answered.
    const reverted = await waitUntil(
      () => !document.isDirty && (document.getText() === disk || document.version !== version),
      REVERT_WAIT_MS,
    );
    let outcome: SyncOutcome = "failed";
    if (!reverted) {
      this.log.warn(`acp/documentsSynced: VS Code did not revert ${uri}; saving it may ask about the newer file`);
      // The revert may still have landed: whatever it did, the user's text stays.
      await this.replaceAll(document, text);
    } else {
      outcome = (await this.putBack(document, text)) ? (document.isDirty ? "merged" : "clean") : "failed";
    }
    if (previous && previous !== existing && !tabShows(previous, document.uri)) {
      await this.reshow(previous, group);
    }
    if (!existing && !document.isDirty) {
      const opened = this.tabIn(group.viewColumn, document.uri);
      if (opened) {
        await vscode.window.tabGroups.close(opened, true);
      }
    }
    return outcome;
  }

  /** Put `text` back into the reverted document as one edit of what differs. */
  private async putBack(document: vscode.TextDocument, text: string): Promise<boolean> {
    const change = middleReplacement(document.getText(), text);
    if (change === null) {
      return true;
    }
    const edit = new vscode.WorkspaceEdit();
    edit.replace(
      document.uri,
      new vscode.Range(document.positionAt(change.start), document.positionAt(change.end)),
      change.text,
    );
    if (!(await vscode.workspace.applyEdit(edit)) || document.getText() !== text) {
      this.log.error(`acp/documentsSynced: could not put the unsaved text of ${document.uri.toString()} back`);
      return false;
    }
    return true;
  }

  /** Make the document read `text` whatever the extension host has seen of it: one edit of
   * the whole document (a range past its end is clamped to it). */
  private async replaceAll(document: vscode.TextDocument, text: string): Promise<void> {
    const edit = new vscode.WorkspaceEdit();
    edit.replace(document.uri, new vscode.Range(0, 0, 1_000_000_000, 0), text);
    if (!(await vscode.workspace.applyEdit(edit))) {
      this.log.error(`acp/documentsSynced: could not put the unsaved text of ${document.uri.toString()} back`);
    }
  }

  private tabIn(column: vscode.ViewColumn, uri: vscode.Uri): vscode.Tab | undefined {
    const group = vscode.window.tabGroups.all.find((g) => g.viewColumn === column);
    return group?.tabs.find((tab) => tabShows(tab, uri));
  }

  /** Show a tab again in its group without taking focus. */
  private async reshow(tab: vscode.Tab, group: vscode.TabGroup): Promise<void> {
    const input = tab.input;
    const options = { viewColumn: group.viewColumn, preserveFocus: true, preview: tab.isPreview };
    try {
      if (input instanceof vscode.TabInputText) {
        await vscode.window.showTextDocument(input.uri, options);
      } else if (input instanceof vscode.TabInputTextDiff) {
        await vscode.commands.executeCommand("vscode.diff", input.original, input.modified, tab.label, options);
      } else if (input instanceof vscode.TabInputCustom) {
        await vscode.commands.executeCommand("vscode.openWith", input.uri, input.viewType, options);
      } else if (input instanceof vscode.TabInputNotebook) {
        await vscode.commands.executeCommand("vscode.openWith", input.uri, input.notebookType, options);
      } else if (!this.revealOwn(tab, group.viewColumn)) {
        const index = group.tabs.indexOf(tab);
        if (index >= 0) {
          await vscode.commands.executeCommand("workbench.action.openEditorAtIndex", index);
        }
      }
      // a webview panel's reveal answers before the tab is in front
      await waitUntil(() => vscode.window.tabGroups.activeTabGroup.activeTab?.label === tab.label, REVEAL_WAIT_MS);
    } catch (error) {
      this.log.warn(`acp/documentsSynced: could not show ${tab.label} again: ${String(error)}`);
    }
  }

  /** Tell the user; returns what was shown. */
  private warnConflict(document: vscode.TextDocument, agent: string): string {
    const name = vscode.workspace.asRelativePath(document.uri, false) || path.basename(document.uri.fsPath);
    const server = this.conflictLines.get(path.basename(document.uri.fsPath));
    if (server) {
      clearTimeout(server.timer);
      this.conflictLines.delete(path.basename(document.uri.fsPath));
    }
    const lines = server ? ` (lines ${server.lines})` : "";
    const message =
      `ACP: ${agent} changed ${name} on disk where you have unsaved edits${lines}; your text was kept. ` +
      "Saving it will ask whether to overwrite the agent's change.";
    void vscode.window.showWarningMessage(message, "Compare with Disk").then((choice) => {
      if (choice === "Compare with Disk") {
        void vscode.commands.executeCommand(COMPARE_COMMAND, document.uri);
      }
    });
    return message;
  }

  dispose(): void {
    for (const { timer } of this.conflictLines.values()) {
      clearTimeout(timer);
    }
    this.emitter.dispose();
  }
}
