// The openDiff editor tool {uri, newText, title?} -> {answer, text?}: the agent's proposed text
// beside the file in VS Code's diff editor. The right side is an editable document of this
// extension's own file system (not on disk): the user may change it, then keeps it (the ✓ in the
// editor title, Ctrl+S, or Accept in the notification) or rejects it (the ✕, Reject, or
// closing the diff). The answer goes back to the agent with the text the user kept; the file itself is
// not changed here (the agent writes it). A withdrawn request (the agent gave up, the turn was
// cancelled: $/cancelRequest) closes the diff.

import * as path from "node:path";
import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient/node";
import { ErrorCodes, type EditorToolResult } from "./protocol";

export const PROPOSAL_SCHEME = "acp-lsp-proposal";
export const ACCEPT_COMMAND = "acpLsp.acceptProposal";
export const REJECT_COMMAND = "acpLsp.rejectProposal";

interface Pending {
  uri: vscode.Uri;
  text: string;
  mtime: number;
  done(result: EditorToolResult): void;
  answered?: boolean;
}

export class EditorDiffs implements vscode.FileSystemProvider, vscode.Disposable {
  private readonly pending = new Map<string, Pending>();
  private counter = 0;
  private readonly changeEmitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changeEmitter.event;
  private readonly disposables: vscode.Disposable[];

  constructor() {
    this.disposables = [
      this.changeEmitter,
      vscode.workspace.registerFileSystemProvider(PROPOSAL_SCHEME, this, { isCaseSensitive: true }),
      vscode.commands.registerCommand(ACCEPT_COMMAND, (uri?: vscode.Uri) => this.answerFor(uri, "accept")),
      vscode.commands.registerCommand(REJECT_COMMAND, (uri?: vscode.Uri) => this.answerFor(uri, "reject")),
      // Closing the diff is a reject (a dirty proposal asks to save first: saving keeps it).
      vscode.window.tabGroups.onDidChangeTabs((event) => {
        for (const tab of event.closed) {
          const uri = proposalOf(tab);
          const entry = uri && this.pending.get(uri.toString());
          if (entry) {
            void this.finish(entry, "reject");
          }
        }
      }),
    ];
  }

  async open(args: Record<string, unknown>, token: vscode.CancellationToken): Promise<EditorToolResult> {
    if (typeof args.uri !== "string" || typeof args.newText !== "string") {
      throw new ResponseError(ErrorCodes.invalidParams, "openDiff needs uri and newText");
    }
    if (token.isCancellationRequested) {
      return { answer: "reject" }; // withdrawn before it was shown
    }
    const file = vscode.Uri.parse(args.uri);
    const name = path.basename(file.path);
    // A folder per proposal keeps the file's name (and so its language) on the right side.
    const uri = vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: `/${++this.counter}/${name}` });
    const label = typeof args.title === "string" && args.title ? `${name} (${args.title})` : name;
    const answer = new Promise<EditorToolResult>((resolve) => {
      this.pending.set(uri.toString(), { uri, text: args.newText as string, mtime: Date.now(), done: resolve });
    });
    const entry = this.pending.get(uri.toString()) as Pending;
    const cancelled = token.onCancellationRequested(() => void this.finish(entry, "reject"));
    try {
      // A file that does not exist yet is compared with an empty side.
      const left = await vscode.workspace.fs.stat(file).then(
        () => file,
        () => uri.with({ path: `${uri.path}.empty` }),
      );
      try {
        await vscode.commands.executeCommand("vscode.diff", left, uri, `${label}: yours ↔ the agent's proposal`, {
          preview: false,
        });
      } catch (error) {
        this.pending.delete(uri.toString());
        throw error;
      }
      // Once answered otherwise, its buttons do nothing (VS Code cannot withdraw a message).
      void vscode.window
        .showInformationMessage(
          `The agent proposes a change to ${label}. Edit the right side if you like, then accept it (✓ or Ctrl+S in the diff) or reject it (✕, or close the diff).`,
          "Accept",
          "Reject",
        )
        .then((choice) => {
          if (choice) {
            void this.finish(entry, choice === "Accept" ? "accept" : "reject");
          }
        });
      return await answer;
    } finally {
      cancelled.dispose();
    }
  }

  private answerFor(uri: vscode.Uri | undefined, answer: "accept" | "reject"): Promise<void> {
    const target = uri ?? proposalOf(vscode.window.tabGroups.activeTabGroup.activeTab);
    const entry = target && this.pending.get(target.toString());
    return entry ? this.finish(entry, answer) : Promise.resolve();
  }

  /** Answer once, with the text the right side shows now (saved or not); then close the diff
   * without a save question. */
  private async finish(entry: Pending, answer: "accept" | "reject"): Promise<void> {
    if (entry.answered) {
      return;
    }
    entry.answered = true;
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === entry.uri.toString());
    const text = document?.getText() ?? entry.text;
    entry.done(answer === "accept" ? { answer, text } : { answer });
    if (document?.isDirty) {
      entry.text = text; // the revert below then leaves the shown text as it is
      await vscode.commands.executeCommand("workbench.action.files.revert", entry.uri).then(undefined, () => undefined);
    }
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => proposalOf(t)?.toString() === entry.uri.toString());
    this.pending.delete(entry.uri.toString());
    if (tabs.length > 0) {
      await vscode.window.tabGroups.close(tabs).then(undefined, () => undefined);
    }
  }

  // -- the proposals' file system: one file per pending proposal, plus an empty one ----------

  private entry(uri: vscode.Uri): Pending | undefined {
    return this.pending.get(uri.toString());
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const entry = this.entry(uri);
    if (!entry && !uri.path.endsWith(".empty")) {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
    const size = entry ? Buffer.byteLength(entry.text) : 0;
    return { type: vscode.FileType.File, ctime: entry?.mtime ?? 0, mtime: entry?.mtime ?? 0, size };
  }

  readFile(uri: vscode.Uri): Uint8Array {
    this.stat(uri);
    return Buffer.from(this.entry(uri)?.text ?? "", "utf8");
  }

  /** Saving the proposal (Ctrl+S) keeps it. */
  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    const entry = this.entry(uri);
    if (!entry) {
      throw vscode.FileSystemError.NoPermissions("this proposal was already answered");
    }
    entry.text = Buffer.from(content).toString("utf8");
    entry.mtime = Date.now();
    this.changeEmitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
    // After the save completes: closing a tab that is still saving would ask to save it.
    setTimeout(() => void this.finish(entry, "accept"), 0);
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  dispose(): void {
    for (const entry of [...this.pending.values()]) {
      entry.answered = true;
      entry.done({ answer: "reject" });
    }
    this.pending.clear();
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

function proposalOf(tab: vscode.Tab | undefined): vscode.Uri | undefined {
  const input = tab?.input;
  if (input instanceof vscode.TabInputTextDiff && input.modified.scheme === PROPOSAL_SCHEME) {
    return input.modified;
  }
  return undefined;
}
