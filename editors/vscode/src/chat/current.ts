// The chat the palette's commands act on: the one the user last used (lastUsed.ts), a tab or
// the side bar, with how to bring it on screen.

import type { ChatController } from "./controller";
import type { LastUsed } from "./lastUsed";
import type { ChatPanels } from "./panel";
import type { ChatViewProvider } from "./view";

export interface CurrentChat {
  controller: ChatController;
  /** Show this chat (its tab, or the side bar's view). */
  reveal(): Promise<void>;
}

export function currentChat(lastUsed: LastUsed<ChatController>, view: ChatViewProvider, panels: ChatPanels): () => CurrentChat {
  return () => {
    const controller = lastUsed.current;
    const tab = panels.list().find((p) => p.controller === controller);
    return {
      controller,
      reveal: async () => (tab ? tab.panel.reveal(undefined, false) : view.reveal()),
    };
  };
}
