// When the chat draws what changed. After a quiet frame a change is drawn as soon as the
// message that made it is handled (a microtask: every message of a batch first), so the last
// text of a turn does not wait for an animation frame; what changes within a frame of a redraw
// waits for the next frame, so a stream is drawn at most once a frame. While a turn runs,
// changes to tool calls alone are drawn at most every TOOLS_MS: a turn of thousands of tool
// calls would otherwise restyle, lay out and paint the chat at every frame, in the renderer
// it shares with the editor the user types into (in VS Code for the web, code-server).

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

export class Redraw {
  private readonly dirty = new Set<string>();
  /** A draw is queued: soon (microtask or frame), or later (the tool calls' timer). */
  private queued: "soon" | "later" | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private last = -Infinity;

  constructor(
    private readonly draw: (keys: Set<string>) => void,
    private readonly busy: () => boolean,
  ) {}

  /** Mark parts to redraw (see the top of this file for when). */
  invalidate(keys: Iterable<string>): void {
    for (const key of keys) {
      this.dirty.add(key);
    }
    if (this.queued === "soon") {
      return;
    }
    const since = performance.now() - this.last;
    if (since < TOOLS_MS && this.busy() && onlyTools(this.dirty)) {
      if (this.queued === null) {
        this.queued = "later";
        this.timer = setTimeout(() => this.soon(true), TOOLS_MS - since);
      }
      return;
    }
    this.soon(since < FRAME_MS);
  }

  private soon(inFrame: boolean): void {
    clearTimeout(this.timer);
    this.queued = "soon";
    if (inFrame) {
      requestAnimationFrame(() => this.flush());
    } else {
      queueMicrotask(() => this.flush());
    }
  }

  private flush(): void {
    this.queued = null;
    this.last = performance.now();
    const keys = new Set(this.dirty);
    this.dirty.clear();
    this.draw(keys);
  }
}
