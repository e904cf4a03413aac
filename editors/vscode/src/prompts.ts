// The questions the session commands ask the user (pick, text, modal confirmation) behind one
// object, so the end-to-end suite can answer them as a user would and see what was asked.

import * as vscode from "vscode";

export interface Prompts {
  pick<T extends vscode.QuickPickItem>(items: T[], options: vscode.QuickPickOptions): Promise<T | undefined>;
  input(options: vscode.InputBoxOptions): Promise<string | undefined>;
  /** A modal warning; true when the user chose `action`. */
  confirm(message: string, detail: string, action: string): Promise<boolean>;
}

export function vscodePrompts(): Prompts {
  return {
    pick: async (items, options) => vscode.window.showQuickPick(items, options),
    input: async (options) => vscode.window.showInputBox(options),
    confirm: async (message, detail, action) =>
      (await vscode.window.showWarningMessage(message, { modal: true, detail }, action)) === action,
  };
}
