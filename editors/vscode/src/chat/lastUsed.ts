// Which chat the palette's commands act on: the one the user last focused (each chat's webview
// says when it gets focus). `WebviewPanel.active` cannot tell: it stays true for a tab while
// focus is in the side bar. The side bar's chat is the default and takes over again when the
// last-used tab is closed. Generic, without `vscode`, for the unit tests.

export class LastUsed<T> {
  private last: T;
  private readonly listeners = new Set<(chat: T) => void>();

  constructor(private readonly fallback: T) {
    this.last = fallback;
  }

  /** The chat last used (the fallback when none was, or it is gone). */
  get current(): T {
    return this.last;
  }

  /** Call `listener` when another chat becomes the last used (the status bar follows it). */
  onDidChange(listener: (chat: T) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** The user focused this chat. */
  use(chat: T): void {
    this.set(chat);
  }

  /** This chat is gone (a closed tab): the fallback takes over if it was the last used. */
  forget(chat: T): void {
    if (this.last === chat) {
      this.set(this.fallback);
    }
  }

  private set(chat: T): void {
    if (this.last !== chat) {
      this.last = chat;
      for (const listener of this.listeners) {
        listener(chat);
      }
    }
  }
}
