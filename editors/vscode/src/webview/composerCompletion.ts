// The slash-command popup under the chat input: filtering and keys (logic in ./completion).

import type { AvailableCommand } from "../model/types";
import { applyCompletion, popupOnKey, slashCompletions, type Popup } from "./completion";
import { renderCommandList } from "./render";

export class CommandCompletion implements Popup {
  private items: AvailableCommand[] = [];
  selected = 0;

  constructor(
    private readonly input: HTMLTextAreaElement,
    private readonly popup: HTMLElement,
    private readonly commands: () => AvailableCommand[],
  ) {
    input.addEventListener("input", () => this.update());
  }

  get open(): boolean {
    return this.items.length > 0;
  }

  update(): void {
    this.items = slashCompletions(this.input.value, this.commands());
    this.selected = Math.min(this.selected, Math.max(this.items.length - 1, 0));
    this.render();
  }

  render(): void {
    this.popup.hidden = this.items.length === 0;
    this.popup.innerHTML = renderCommandList(this.items, this.selected);
  }

  close(): void {
    this.items = [];
    this.render();
  }

  complete(name: string): void {
    const command = this.items.find((c) => c.name === name) ?? this.commands().find((c) => c.name === name);
    if (command) {
      this.input.value = applyCompletion(command);
    }
    this.close();
    this.input.focus();
  }

  get count(): number {
    return this.items.length;
  }

  chooseSelected(): void {
    this.complete((this.items[this.selected] as AvailableCommand).name);
  }

  /** Handle a key while the list is open; true when it was used. */
  onKey(event: KeyboardEvent): boolean {
    return popupOnKey(this, event);
  }
}
