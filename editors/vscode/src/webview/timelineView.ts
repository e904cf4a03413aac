// The timeline's DOM: one element per entry, keyed by `data-key` (`m:<index>`, `t:<id>`).
// Only a window at the end of a long timeline is in the DOM (./timelineWindow); a "show
// earlier" button above it, which also fires when scrolled into view, renders more from the
// model. Entries are appended as the timeline grows and patched when they change: a message
// replaces only the body blocks that changed (a streaming answer: its last paragraph, or the
// last piece of a very long one), a tool call only its class, summary or body, and an entry
// whose parts did not change is not touched. What the user opened or closed stays so.

import type { EntryRender, ToolCallParts } from "./render";
import { earlierStart, initialStart, trimmedStart, WINDOW, type WindowLimits } from "./timelineWindow";

const BODY = ":scope > .body, :scope > .thought-body";

/** What the view asks of the session. */
export interface EntrySource {
  count(): number;
  key(index: number): string;
  render(key: string): EntryRender | null;
}

/** An entry in the DOM and what it shows. */
interface Shown {
  el: HTMLElement;
  blocks?: string[];
  parts?: ToolCallParts;
}

export class TimelineView {
  private readonly userToggled = new Map<string, boolean>();
  private readonly shown = new Map<string, Shown>();
  /** The entries in the DOM: [first, end) of the timeline. */
  private first = 0;
  private end = 0;
  private readonly earlier: HTMLButtonElement;
  private readonly watcher: IntersectionObserver | null = null;

  constructor(
    private readonly root: HTMLElement,
    private readonly source: EntrySource,
    private readonly limits: WindowLimits = WINDOW,
  ) {
    // `toggle` does not bubble: listen in the capture phase. A toggle to the state the
    // view itself set is not the user's.
    root.addEventListener(
      "toggle",
      (event) => {
        const el = event.target as HTMLDetailsElement;
        const key = el.dataset.key;
        const parts = key ? this.shown.get(key)?.parts : undefined;
        if (key && event.isTrusted && parts?.open !== el.open) {
          this.userToggled.set(key, el.open);
        }
      },
      true,
    );
    this.earlier = document.createElement("button");
    this.earlier.className = "earlier link";
    this.earlier.hidden = true;
    this.earlier.addEventListener("click", () => this.showEarlier());
    root.before(this.earlier);
    if (typeof IntersectionObserver === "function") {
      this.watcher = new IntersectionObserver((seen) => {
        if (seen.some((e) => e.isIntersecting) && !this.earlier.hidden) {
          this.showEarlier();
        }
      });
      this.watcher.observe(this.earlier);
    }
  }

  /** Another session: forget the open/closed choices. */
  reset(): void {
    this.userToggled.clear();
  }

  /** How many entries the DOM holds (for tests and the bench). */
  get rendered(): number {
    return this.end - this.first;
  }

  /** The entry's element, from `view` when the caller already rendered it. */
  private create(key: string, view = this.source.render(key)): HTMLElement | null {
    if (!view) {
      return null;
    }
    const template = document.createElement("template");
    template.innerHTML = view.html();
    const el = template.content.firstElementChild as HTMLElement | null;
    if (!el) {
      return null;
    }
    const open = this.userToggled.get(key);
    if (el instanceof HTMLDetailsElement && open !== undefined) {
      el.open = open;
    }
    this.shown.set(key, { el, blocks: view.blocks, parts: view.parts });
    return el;
  }

  private fragment(from: number, to: number): DocumentFragment {
    const fragment = document.createDocumentFragment();
    for (let i = from; i < to; i++) {
      const el = this.create(this.source.key(i));
      if (el) {
        fragment.appendChild(el);
      }
    }
    return fragment;
  }

  /** Render the end of the timeline afresh. */
  rebuild(): void {
    this.root.textContent = "";
    this.shown.clear();
    this.end = this.source.count();
    this.first = initialStart(this.end, this.limits);
    this.root.appendChild(this.fragment(this.first, this.end));
    this.updateEarlier();
  }

  /**
   * Show what changed: append the entries past the ones shown (the timeline only grows),
   * patch the `changed` ones in the DOM, and when `following` the end, drop the oldest
   * entries past the window.
   */
  update(changed: Iterable<string>, following: boolean): void {
    const count = this.source.count();
    const added = new Set<string>();
    if (count > this.end) {
      // Entries that the trim below would drop at once are not rendered at all.
      const from = following ? Math.max(this.end, trimmedStart(this.first, count, this.limits)) : this.end;
      if (from > this.end) {
        this.drop(this.end);
        this.first = this.end = from;
      }
      for (let i = from; i < count; i++) {
        added.add(this.source.key(i));
      }
      this.root.appendChild(this.fragment(from, count));
      this.end = count;
    }
    for (const key of changed) {
      if (!added.has(key)) {
        this.patch(key);
      }
    }
    if (following) {
      this.drop(trimmedStart(this.first, this.end, this.limits));
    }
    this.updateEarlier();
  }

  /** Remove the entries shown before `first` from the DOM. */
  private drop(first: number): void {
    for (let i = this.first; i < first; i++) {
      const key = this.source.key(i);
      this.shown.get(key)?.el.remove();
      this.shown.delete(key);
    }
    this.first = Math.max(this.first, first);
  }

  /** Render entries above the first shown, keeping what is on screen where it is. */
  showEarlier(): void {
    if (this.first === 0) {
      return;
    }
    const anchor = this.root.firstElementChild;
    const top = anchor?.getBoundingClientRect().top ?? 0;
    const from = earlierStart(this.first, this.limits);
    this.root.insertBefore(this.fragment(from, this.first), this.root.firstChild);
    this.first = from;
    this.updateEarlier();
    const moved = (anchor?.getBoundingClientRect().top ?? top) - top;
    if (moved !== 0) {
      window.scrollBy(0, moved);
    }
    // Observing again reports whether the button is still in view (then more are shown).
    this.watcher?.unobserve(this.earlier);
    this.watcher?.observe(this.earlier);
  }

  private updateEarlier(): void {
    this.earlier.hidden = this.first === 0;
    const label = `Show earlier (${this.first})`;
    if (!this.earlier.hidden && this.earlier.textContent !== label) {
      this.earlier.textContent = label;
    }
  }

  /** Bring an entry in the DOM up to date (entries not in the DOM are rendered when shown). */
  private patch(key: string): void {
    const shown = this.shown.get(key);
    const view = shown ? this.source.render(key) : null;
    if (!shown || !view) {
      return;
    }
    if (shown.blocks && view.blocks) {
      if (this.patchBody(shown, view.blocks)) {
        return;
      }
    } else if (shown.parts && view.parts) {
      this.patchParts(key, shown, view.parts);
      return;
    }
    const el = this.create(key, view);
    if (el) {
      shown.el.replaceWith(el);
    }
  }

  /** Patch a tool call's class, open state (unless the user chose), summary and body. */
  private patchParts(key: string, shown: Shown, next: ToolCallParts): void {
    const before = shown.parts as ToolCallParts;
    const el = shown.el as HTMLDetailsElement;
    shown.parts = next;
    if (before.className !== next.className) {
      el.className = next.className;
    }
    if (before.summary !== next.summary) {
      const summary = el.querySelector(":scope > summary");
      if (summary) {
        summary.innerHTML = next.summary;
      }
    }
    if (before.body !== next.body) {
      const body = el.querySelector(":scope > .tool-body");
      if (body) {
        body.innerHTML = next.body;
      }
    }
    if (before.open !== next.open && !this.userToggled.has(key)) {
      el.open = next.open;
    }
  }

  /** Replace only the body blocks of a message that changed; false when it cannot. */
  private patchBody(shown: Shown, after: string[]): boolean {
    const before = shown.blocks as string[];
    const body = shown.el.querySelector(BODY);
    if (!body || body.children.length !== before.length) {
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
    shown.blocks = after;
    return true;
  }
}
