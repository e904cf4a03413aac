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
