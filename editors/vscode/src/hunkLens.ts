// An agent's change under review, in the editor itself: the lines of each pending hunk get the
// diff editor's inserted-line background, the place of removed lines a red top border (their
// old text on hover), and a "Keep | Reject" CodeLens above them (acp/reviewEdit with `hunk`:
// only that hunk is undone, the rest and your own edits stay). *ACP: Next Change* / *Previous
// Change* move between them.

import * as vscode from "vscode";
import { type FileHunks, hunkLines, pendingHunks } from "./model/hunks";
import type { SessionStore } from "./sessions";
import { throttle } from "./throttle";

export interface HunkTarget {
  sessionId: string;
  toolCallId: string;
  path: string;
  hunk: number;
}

export class HunkLens implements vscode.CodeLensProvider, vscode.Disposable {
  private files = new Map<string, FileHunks>();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly added = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor("diffEditor.insertedLineBackground"),
    overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.addedForeground"),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private readonly removed = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    borderStyle: "solid",
    borderWidth: "2px 0 0 0",
    borderColor: new vscode.ThemeColor("editorOverviewRuler.deletedForeground"),
  });
  private readonly disposables: vscode.Disposable[] = [];
  private readonly refresh = throttle(() => this.update(), 100);

  constructor(private readonly store: SessionStore) {
    this.disposables.push(
      this.changed,
      this.added,
      this.removed,
      store.onDidChange((event) => {
        if (event.kind === "replace" || event.kind === "removed" || (event.kind === "update" && [...event.changed].some((k) => k.startsWith("t:")))) {
          this.refresh.request();
        }
      }),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorateAll()),
      vscode.workspace.onDidChangeTextDocument(() => this.refresh.request()),
    );
  }

  private update(): void {
    this.files = pendingHunks(this.store.all());
    this.decorateAll();
    this.changed.fire();
  }

  private decorateAll(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const file = this.files.get(editor.document.uri.fsPath);
      const added: vscode.DecorationOptions[] = [];
      const removed: vscode.DecorationOptions[] = [];
      for (const hunk of file?.hunks ?? []) {
        const [first, last] = hunkLines(hunk, editor.document.lineCount);
        if (hunk.newLines > 0) {
          added.push({ range: new vscode.Range(first, 0, last, 0) });
        }
        if (hunk.oldLines > 0) {
          const old = new vscode.MarkdownString().appendText("Removed by the agent:\n").appendCodeblock(hunk.oldText ?? `(${hunk.oldLines} lines)`);
          removed.push({ range: new vscode.Range(first, 0, first, 0), hoverMessage: old });
        }
      }
      editor.setDecorations(this.added, added);
      editor.setDecorations(this.removed, removed);
    }
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const file = this.files.get(document.uri.fsPath);
    if (!file) {
      return [];
    }
    const lenses: vscode.CodeLens[] = [];
    for (const hunk of file.hunks) {
      const [first] = hunkLines(hunk, document.lineCount);
      const range = new vscode.Range(first, 0, first, 0);
      const target: HunkTarget = { sessionId: file.sessionId, toolCallId: file.toolCallId, path: file.path, hunk: hunk.index };
      lenses.push(
        new vscode.CodeLens(range, { title: "$(check) Keep", tooltip: "Keep the agent's change here", command: "acpLsp.keepHunk", arguments: [target] }),
        new vscode.CodeLens(range, { title: "$(discard) Reject", tooltip: "Undo the agent's change here, only these lines", command: "acpLsp.rejectHunk", arguments: [target] }),
      );
    }
    return lenses;
  }

  /** Keep or reject one hunk. */
  async decide(action: "accept" | "reject", target: HunkTarget): Promise<void> {
    const result = await this.store.review({ sessionId: target.sessionId, action, toolCallId: target.toolCallId, path: target.path, hunk: target.hunk });
    const file = result.files[0] as unknown as { message?: string } | undefined;
    if (file?.message) {
      void vscode.window.showWarningMessage(`ACP: ${file.message}`);
    }
    this.refresh.request();
  }

  /** Move the cursor of the active editor to the next (1) or previous (-1) hunk. */
  jump(direction: 1 | -1): void {
    const editor = vscode.window.activeTextEditor;
    const file = editor && this.files.get(editor.document.uri.fsPath);
    if (!editor || !file) {
      return;
    }
    const line = editor.selection.active.line;
    const starts = file.hunks.map((h) => hunkLines(h, editor.document.lineCount)[0]).sort((a, b) => a - b);
    const target = direction > 0 ? starts.find((s) => s > line) : [...starts].reverse().find((s) => s < line);
    if (target !== undefined) {
      const at = new vscode.Position(target, 0);
      editor.selection = new vscode.Selection(at, at);
      editor.revealRange(new vscode.Range(at, at), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
