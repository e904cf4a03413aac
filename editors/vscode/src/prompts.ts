// The questions the session commands ask the user (pick, text, modal confirmation) behind one
// object, so the end-to-end suite can answer them as a user would and see what was asked.

import * as vscode from "vscode";

/** A pick's answer: the item, and the item's button pressed instead of Enter, if one was. */
export interface Picked<T> {
  item: T;
  button?: vscode.QuickInputButton;
}

export interface Prompts {
  pick<T extends vscode.QuickPickItem>(items: T[], options: vscode.QuickPickOptions): Promise<T | undefined>;
  /** A pick whose items carry buttons (`item.buttons`): a button press answers it too. */
  pickWithButtons<T extends vscode.QuickPickItem>(items: T[], options: vscode.QuickPickOptions): Promise<Picked<T> | undefined>;
  input(options: vscode.InputBoxOptions): Promise<string | undefined>;
  /** A modal warning; true when the user chose `action`. */
  confirm(message: string, detail: string, action: string): Promise<boolean>;
}

/** `showQuickPick` cannot report item buttons: a QuickPick of our own. */
function pickWithButtons<T extends vscode.QuickPickItem>(items: T[], options: vscode.QuickPickOptions): Promise<Picked<T> | undefined> {
  return new Promise((resolve) => {
    const pick = vscode.window.createQuickPick<T>();
    pick.items = items;
    pick.title = options.title;
    pick.placeholder = options.placeHolder;
    pick.matchOnDescription = options.matchOnDescription ?? false;
    let answered = false;
    const answer = (value: Picked<T> | undefined): void => {
      if (!answered) {
        answered = true;
        resolve(value);
        pick.dispose();
      }
    };
    pick.onDidAccept(() => answer(pick.selectedItems[0] ? { item: pick.selectedItems[0] } : undefined));
    pick.onDidTriggerItemButton((event) => answer({ item: event.item, button: event.button }));
    pick.onDidHide(() => answer(undefined));
    pick.show();
  });
}

export function vscodePrompts(): Prompts {
  return {
    pick: async (items, options) => vscode.window.showQuickPick(items, options),
    pickWithButtons,
    input: async (options) => vscode.window.showInputBox(options),
    confirm: async (message, detail, action) =>
      (await vscode.window.showWarningMessage(message, { modal: true, detail }, action)) === action,
  };
}
