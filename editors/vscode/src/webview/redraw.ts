// When the chat draws what changed. After a quiet frame a change is drawn as soon as the
// message that made it is handled (a microtask: every message of a batch first), so the last
// text of a turn does not wait for an animation frame; what changes within a frame of a redraw
// waits for the next frame, so a stream is drawn at most once a frame. While a turn runs,
// changes to tool calls alone are drawn at most every TOOLS_MS: a turn of thousands of tool
// calls would otherwise restyle, lay out and paint the chat at every frame, in the renderer
// it shares with the editor the user types into (in VS Code for the web, code-server).

import type { Clock } from "../throttle";

/** About one animation frame (ms). */
export const FRAME_MS = 16;
/** How often tool calls alone are redrawn while a turn runs (ms). */
export const TOOLS_MS = 100;

/** Whether `keys` name only tool calls and the timeline's length (no message, no status). */
export function onlyTools(keys: Iterable<string>): boolean {
  for (const key of keys) {
    if (!key.startsWith("t:") && key !== "timeline") {
      return false;
    }
  }
  return true;
}

/** What Redraw waits on: the page's by default, a hand-moved one in the unit tests. */
export interface RedrawClock extends Clock {
  frame(fn: () => void): void;
  microtask(fn: () => void): void;
}

const pageClock: RedrawClock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  frame: (fn) => requestAnimationFrame(() => fn()),
  microtask: (fn) => queueMicrotask(fn),
};

export class Redraw {
  private readonly dirty = new Set<string>();
  /** A draw is queued: soon (microtask or frame), or later (the tool calls' timer). */
  private queued: "soon" | "later" | null = null;
  /** Which tool-calls timer is current: one overtaken by a sooner draw does nothing. */
  private timer = 0;
  private last = -Infinity;

  constructor(
    private readonly draw: (keys: Set<string>) => void,
    private readonly busy: () => boolean,
    private readonly clock: RedrawClock = pageClock,
  ) {}

  /** Mark parts to redraw (see the top of this file for when). */
  invalidate(keys: Iterable<string>): void {
    for (const key of keys) {
      this.dirty.add(key);
    }
    if (this.queued === "soon") {
      return;
    }
    const since = this.clock.now() - this.last;
    if (since < TOOLS_MS && this.busy() && onlyTools(this.dirty)) {
      if (this.queued === null) {
        this.queued = "later";
        const id = ++this.timer;
        this.clock.setTimeout(() => {
          if (id === this.timer) {
            this.soon(true);
          }
        }, TOOLS_MS - since);
      }
      return;
    }
    this.soon(since < FRAME_MS);
  }

  private soon(inFrame: boolean): void {
    this.timer++;
    this.queued = "soon";
    if (inFrame) {
      this.clock.frame(() => this.flush());
    } else {
      this.clock.microtask(() => this.flush());
    }
  }

  private flush(): void {
    this.queued = null;
    this.last = this.clock.now();
    const keys = new Set(this.dirty);
    this.dirty.clear();
    this.draw(keys);
  }
}
