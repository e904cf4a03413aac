// The editor a chat prompt refers to: the last focused file editor while it is still on screen
// (focus may be in a chat, in the side bar or in an editor tab). One tracker serves every chat.

import * as vscode from "vscode";
import type { PromptContext } from "../model/messages";
import { describeContext, type EditorContext } from "../promptContext";

export class EditorContextTracker implements vscode.Disposable {
  private lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private readonly emitter = new vscode.EventEmitter<PromptContext>();
  /** Fires with what a prompt would now carry, when it changed: typing moves the cursor, which
   * changes it only when a selection starts, ends or moves. Computed once for every chat. */
  readonly onDidChange = this.emitter.event;
  private shown = "";
  private readonly disposables: vscode.Disposable[] = [this.emitter];

  constructor() {
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        if (editor && editor.document.uri.scheme !== "output") {
          this.lastEditor = editor;
          this.changed();
        }
      }),
      vscode.window.onDidChangeVisibleTextEditors(() => this.changed()),
      vscode.window.onDidChangeTextEditorSelection((event) => {
        if (event.textEditor === this.lastEditor) {
          this.changed();
        }
      }),
    );
  }

  private changed(): void {
    const context = this.context();
    const shown = JSON.stringify(context);
    if (shown !== this.shown) {
      this.shown = shown;
      this.emitter.fire(context);
    }
  }

  /** The last focused editor, while it is still on screen (focus may be in the chat now). */
  visibleEditor(): vscode.TextEditor | undefined {
    const editor = this.lastEditor;
    if (
      !editor ||
      editor.document.uri.scheme !== "file" ||
      !vscode.window.visibleTextEditors.some((e) => e.document === editor.document)
    ) {
      return undefined;
    }
    return editor;
  }

  editorContext(): EditorContext | undefined {
    const editor = this.visibleEditor();
    if (!editor) {
      return undefined;
    }
    const document = editor.document;
    const selection = editor.selection;
    return {
      uri: document.uri.toString(),
      label: vscode.workspace.asRelativePath(document.uri, false),
      languageId: document.languageId,
      selection: selection.isEmpty
        ? undefined
        : {
            text: document.getText(selection),
            startLine: selection.start.line + 1,
            endLine: selection.end.line + 1,
          },
    };
  }

  context(): PromptContext {
    return describeContext(this.editorContext());
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
