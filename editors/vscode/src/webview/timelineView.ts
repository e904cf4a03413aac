// The timeline's DOM: one element per entry, keyed by `data-key` (`m:<index>`, `t:<id>`).
// Entries are appended as the timeline grows and replaced one by one when they change, so a
// streaming answer re-renders only its own message. What the user opened or closed stays so.

export class TimelineView {
  private readonly userToggled = new Map<string, boolean>();

  constructor(
    private readonly root: HTMLElement,
    private readonly html: (key: string) => string,
  ) {
    // `toggle` does not bubble: listen in the capture phase.
    root.addEventListener(
      "toggle",
      (event) => {
        const el = event.target as HTMLElement;
        const key = el.dataset.key;
        if (key && event.isTrusted) {
          this.userToggled.set(key, (el as HTMLDetailsElement).open);
        }
      },
      true,
    );
  }

  /** Another session: forget the open/closed choices. */
  reset(): void {
    this.userToggled.clear();
  }

  private element(key: string): HTMLElement | null {
    const template = document.createElement("template");
    template.innerHTML = this.html(key);
    const el = template.content.firstElementChild as HTMLElement | null;
    const open = this.userToggled.get(key);
    if (el instanceof HTMLDetailsElement && open !== undefined) {
      el.open = open;
    }
    return el;
  }

  rebuild(keys: string[]): void {
    this.root.textContent = "";
    const fragment = document.createDocumentFragment();
    for (const key of keys) {
      const el = this.element(key);
      if (el) {
        fragment.appendChild(el);
      }
    }
    this.root.appendChild(fragment);
  }

  /** Add the entries past the ones already shown (the timeline only grows). */
  append(keys: string[]): void {
    for (let i = this.root.children.length; i < keys.length; i++) {
      const el = this.element(keys[i] as string);
      if (el) {
        this.root.appendChild(el);
      }
    }
  }

  replace(key: string): void {
    const current = this.root.querySelector(`[data-key="${CSS.escape(key)}"]`);
    const el = current ? this.element(key) : null;
    if (current && el) {
      current.replaceWith(el);
    }
  }
}
