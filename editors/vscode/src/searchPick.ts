// A quick pick whose items come from a search run as the user types (the session history,
// workspace symbols): busy while a query runs, an answer overtaken by a newer query dropped.

import * as vscode from "vscode";

export interface SearchPickOptions<T extends vscode.QuickPickItem> {
  title: string;
  placeholder: string;
  search: (query: string) => Promise<T[]>;
  /** Wait this long after a keystroke before searching (0: search at once). */
  debounceMs: number;
  /** Search for "" as soon as the pick shows (a listing to start from). */
  searchOnShow: boolean;
}

export function searchPick<T extends vscode.QuickPickItem>(options: SearchPickOptions<T>): Promise<T | undefined> {
  const pick = vscode.window.createQuickPick<T>();
  pick.title = options.title;
  pick.placeholder = options.placeholder;
  pick.matchOnDescription = true;
  let generation = 0;
  const load = async (query: string): Promise<void> => {
    const mine = ++generation;
    pick.busy = true;
    try {
      const items = await options.search(query);
      if (mine === generation) {
        pick.items = items;
      }
    } finally {
      if (mine === generation) {
        pick.busy = false;
      }
    }
  };
  return new Promise((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    pick.onDidChangeValue((value) => {
      clearTimeout(timer);
      if (options.debounceMs > 0) {
        timer = setTimeout(() => void load(value), options.debounceMs);
      } else {
        void load(value);
      }
    });
    pick.onDidAccept(() => {
      resolve(pick.selectedItems[0]);
      pick.hide();
    });
    pick.onDidHide(() => {
      clearTimeout(timer);
      resolve(undefined);
      pick.dispose();
    });
    pick.show();
    if (options.searchOnShow) {
      void load("");
    }
  });
}
