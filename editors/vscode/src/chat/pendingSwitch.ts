// A session being started, forked or loaded into a chat (or, in a tab restored after a window
// reload, coming back). A prompt sent meanwhile waits for it and goes to the session it shows,
// not to the one the chat showed before ("+" then Enter at once). Without `vscode`, for the
// unit tests.

export class PendingSwitch {
  private work: Promise<unknown> | undefined;

  /** Prompts sent until `work` settles wait for it. */
  async settleFirst<T>(work: Promise<T>): Promise<T> {
    this.work = work;
    try {
      return await work;
    } finally {
      if (this.work === work) {
        this.work = undefined;
      }
    }
  }

  /** `show` what `open` gives, unless another switch began meanwhile (the user's last wins). */
  switchTo<T>(open: () => Promise<T>, show: (value: T) => void): Promise<T> {
    const work: Promise<T> = open().then((value) => {
      if (this.work === work) {
        show(value);
      }
      return value;
    });
    return this.settleFirst(work);
  }

  /** Resolves once the switch under way (if any) is done: false when it failed. */
  settled(): Promise<boolean> {
    return this.work ? this.work.then(() => true, () => false) : Promise.resolve(true);
  }
}
