// Slash-command completion for the chat input: pure logic, unit-tested.

import type { AvailableCommand } from "../model/types";

/** The commands to offer for `text`, or [] when the input is not a command being typed. */
export function slashCompletions(text: string, commands: AvailableCommand[]): AvailableCommand[] {
  const match = /^\/([\w.:-]*)$/.exec(text);
  if (!match) {
    return [];
  }
  const prefix = (match[1] ?? "").toLowerCase();
  const starts = commands.filter((c) => c.name.toLowerCase().startsWith(prefix));
  const contains = commands.filter(
    (c) => !c.name.toLowerCase().startsWith(prefix) && c.name.toLowerCase().includes(prefix),
  );
  return [...starts, ...contains];
}

/** The input after choosing `command`: `/name ` ready for its argument. */
export function applyCompletion(command: AvailableCommand): string {
  return `/${command.name} `;
}

/** The next selected index when moving by `delta` through `count` items (wraps around). */
export function moveSelection(selected: number, delta: number, count: number): number {
  if (count === 0) {
    return 0;
  }
  return (((selected + delta) % count) + count) % count;
}

export type PopupKey = "down" | "up" | "choose" | "close";

/** What a key does in an open completion popup (undefined: the key is not the popup's). */
export function popupKey(event: { key: string; shiftKey: boolean }): PopupKey | undefined {
  switch (event.key) {
    case "ArrowDown":
      return "down";
    case "ArrowUp":
      return "up";
    case "Tab":
      return "choose";
    case "Enter":
      return event.shiftKey ? undefined : "choose";
    case "Escape":
      return "close";
    default:
      return undefined;
  }
}

/** An open-or-closed list under the input (slash commands, `@` mentions). */
export interface Popup {
  readonly open: boolean;
  readonly count: number;
  selected: number;
  render(): void;
  chooseSelected(): void;
  close(): void;
}

/** Handle a key for `popup` while it is open; true when it was used. */
export function popupOnKey(popup: Popup, event: { key: string; shiftKey: boolean; preventDefault(): void }): boolean {
  const key = popup.open ? popupKey(event) : undefined;
  if (key === undefined) {
    return false;
  }
  if (key === "down" || key === "up") {
    popup.selected = moveSelection(popup.selected, key === "down" ? 1 : -1, popup.count);
    popup.render();
  } else if (key === "choose") {
    popup.chooseSelected();
  } else {
    popup.close();
  }
  event.preventDefault();
  return true;
}

/** A list popup under the input: its items, the selected one, how it renders and its keys. */
export abstract class ListPopup<T> implements Popup {
  protected items: T[] = [];
  selected = 0;

  constructor(
    protected readonly popup: HTMLElement,
    private readonly renderList: (items: T[], selected: number) => string,
  ) {}

  get open(): boolean {
    return this.items.length > 0;
  }

  get count(): number {
    return this.items.length;
  }

  render(): void {
    this.popup.hidden = this.items.length === 0;
    this.popup.innerHTML = this.renderList(this.items, this.selected);
  }

  close(): void {
    this.items = [];
    this.render();
  }

  abstract chooseSelected(): void;

  /** Handle a key while the list is open; true when it was used. */
  onKey(event: KeyboardEvent): boolean {
    return popupOnKey(this, event);
  }
}
