// The slash-command popup under the chat input: filtering and keys (logic in ./completion).

import type { AvailableCommand } from "../model/types";
import { applyCompletion, ListPopup, slashCompletions } from "./completion";
import { renderCommandList } from "./render";

export class CommandCompletion extends ListPopup<AvailableCommand> {
  constructor(
    private readonly input: HTMLTextAreaElement,
    popup: HTMLElement,
    private readonly commands: () => AvailableCommand[],
  ) {
    super(popup, renderCommandList);
    input.addEventListener("input", () => this.update());
  }

  update(): void {
    this.items = slashCompletions(this.input.value, this.commands());
    this.selected = Math.min(this.selected, Math.max(this.items.length - 1, 0));
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

  chooseSelected(): void {
    this.complete((this.items[this.selected] as AvailableCommand).name);
  }
}
