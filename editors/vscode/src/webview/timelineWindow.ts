// Which part of a long timeline the chat keeps in its DOM: a window at the end. Style and
// layout cost grows with every element in the page, so a turn with thousands of tool calls
// keeps only its last entries; earlier ones are rendered from the model when the user
// scrolls up to them. Pure: indices in, indices out.

export interface WindowLimits {
  /** Entries kept after trimming. */
  keep: number;
  /** Trim once more than this many are shown (trimming in steps, not on every entry). */
  max: number;
  /** Entries added above when the user scrolls to the top of what is shown. */
  step: number;
}

export const WINDOW: WindowLimits = { keep: 150, max: 200, step: 100 };

/** The first entry shown when a timeline of `count` entries is rendered afresh. */
export function initialStart(count: number, limits: WindowLimits = WINDOW): number {
  return Math.max(0, count - limits.keep);
}

/** The first entry to keep once the timeline reached `count` while the view follows its end. */
export function trimmedStart(first: number, count: number, limits: WindowLimits = WINDOW): number {
  return count - first > limits.max ? count - limits.keep : first;
}

/** The first entry shown after the user asked for earlier ones. */
export function earlierStart(first: number, limits: WindowLimits = WINDOW): number {
  return Math.max(0, first - limits.step);
}
