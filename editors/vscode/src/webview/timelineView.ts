// The timeline's DOM: one element per entry, keyed by `data-key` (`m:<index>`, `t:<id>`).
// Entries are appended as the timeline grows and replaced one by one when they change, so a
// streaming answer re-renders only its own message; within a message only the body's blocks
// that changed are replaced (a streaming answer: its last paragraph, or the last piece of a
// very long one). What the user opened or closed stays so.

const BODY = ":scope > .body, :scope > .thought-body";

export class TimelineView {
  private readonly userToggled = new Map<string, boolean>();
  /** The body blocks last shown, per message key. */
  private readonly shown = new Map<string, string[]>();

  constructor(
    private readonly root: HTMLElement,
    private readonly html: (key: string) => string,
    private readonly blocks: (key: string) => string[] | null = () => null,
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
    this.shown.clear();
  }

  private element(key: string): HTMLElement | null {
    const template = document.createElement("template");
    const blocks = this.blocks(key);
    if (blocks) {
      this.shown.set(key, blocks);
    }
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
    this.shown.clear();
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
    if (current && this.patchBody(key, current)) {
      return;
    }
    const el = current ? this.element(key) : null;
    if (current && el) {
      current.replaceWith(el);
    }
  }

  /** Replace only the body blocks of a message that changed; false when it cannot. */
  private patchBody(key: string, current: Element): boolean {
    const before = this.shown.get(key);
    const body = current.querySelector(BODY);
    if (!before || !body || body.children.length !== before.length) {
      return false;
    }
    const after = this.blocks(key);
    if (!after) {
      return false;
    }
    const template = document.createElement("template");
    for (let i = 0; i < after.length; i++) {
      if (before[i] === after[i]) {
        continue;
      }
      template.innerHTML = after[i] as string;
      const el = template.content.firstElementChild;
      if (!el || template.content.childNodes.length !== 1) {
        return false; // not one element: re-render the whole entry
      }
      const old = body.children[i];
      if (old) {
        old.replaceWith(el);
      } else {
        body.appendChild(el);
      }
    }
    while (body.children.length > after.length) {
      body.lastElementChild?.remove();
    }
    this.shown.set(key, after);
    return true;
  }
}
