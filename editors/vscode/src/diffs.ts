// Showing an agent's reported change in VS Code's diff editor: both sides are read-only
// virtual documents holding exactly the tool call's oldText and newText.

import * as path from "node:path";
import * as vscode from "vscode";
import { diffItems } from "./model/queries";
import type { ToolCallState } from "./protocol";

export const DIFF_SCHEME = "acp-lsp-diff";
const MAX_KEPT = 200;

export class DiffDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private counter = 0;
  private readonly registration: vscode.Disposable;

  constructor() {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.query) ?? "";
  }

  private put(filePath: string, side: string, text: string): vscode.Uri {
    const key = `${++this.counter}-${side}`;
    this.texts.set(key, text);
    if (this.texts.size > MAX_KEPT) {
      const oldest = this.texts.keys().next().value;
      if (oldest !== undefined) {
        this.texts.delete(oldest);
      }
    }
    // The path keeps the file's name and extension, so the diff editor highlights it.
    return vscode.Uri.from({ scheme: DIFF_SCHEME, path: filePath, query: key });
  }

  /** Open the `index`-th diff of a tool call. Returns false when it has no such diff. */
  async open(call: ToolCallState, index: number): Promise<boolean> {
    const diff = diffItems(call)[index];
    if (!diff) {
      return false;
    }
    const left = this.put(diff.path, "old", diff.oldText ?? "");
    const right = this.put(diff.path, "new", diff.newText);
    const title = `${path.basename(diff.path)} (${diff.oldText === null ? "new file" : "agent's change"})`;
    await vscode.commands.executeCommand("vscode.diff", left, right, title, { preview: true });
    return true;
  }

  dispose(): void {
    this.registration.dispose();
    this.texts.clear();
  }
}
